//! Proves that a hand-edited config with a syntax error is reported with its line and column
//! wherever it is read (`serve` at start, `reload`, `serve --watch`), and changes nothing that
//! runs.

use std::process::Command;
use std::time::Duration;

use serde_json::json;

use crate::common::{BIN, Companion, demo, eventually};

/// A config as a person edits it: the comma after the last entry is not JSON.
const BROKEN: &str = r#"{
  "mcpServers": {
    "demo": { "command": "x" },
    "other": { "command": "y" },
  }
}
"#;
/// Where serde_json reports the trailing comma in [`BROKEN`].
const WHERE: &str = "line 5, column 3";

#[test]
fn serve_refuses_a_config_with_a_syntax_error_naming_line_and_column() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.json");
    std::fs::write(&config, BROKEN).expect("write");
    let out = Command::new(BIN)
        .args(["serve", "--config"])
        .arg(&config)
        .arg("--socket")
        .arg(dir.path().join("mcp.sock"))
        .env("HOME", dir.path())
        .output()
        .expect("run serve");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(WHERE) && err.contains("config.json"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&config).expect("read"),
        BROKEN,
        "file untouched"
    );
}

#[tokio::test]
async fn reload_and_watch_report_a_syntax_error_with_line_and_column_and_keep_servers() {
    let c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    let before = c.settled().await;
    assert_eq!(before[0].state.as_str(), "running", "{before:?}");
    std::fs::write(&c.config, BROKEN).expect("write");
    let out = c.cli(&["reload"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not reloaded") && err.contains(WHERE), "{err}");
    let after = c.status().await.servers;
    assert_eq!(after[0].state.as_str(), "running", "{after:?}");
    assert_eq!(after[0].pid, before[0].pid, "the server was not touched");
    assert_eq!(std::fs::read_to_string(&c.config).expect("read"), BROKEN);
}

/// A typo in a key is not silent where the person reloads: `reload` prints the warning the
/// companion logged, and the entry fails on the key it lacks (`reload` names it and exits 1). `status` keeps showing it for
/// as long as that config is in effect, and stops once a fixed file is reloaded.
#[tokio::test]
async fn reload_and_status_show_the_files_warnings_until_it_is_fixed() {
    let c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    c.settled().await;
    let mut typo = demo(&[]);
    let entry = typo.as_object_mut().expect("an object");
    let command = entry.remove("command").expect("a command");
    entry.insert("comand".into(), command);
    std::fs::write(
        &c.config,
        serde_json::to_vec(&json!({ "mcpServers": { "demo": demo(&[]), "typo": typo } }))
            .expect("json"),
    )
    .expect("write");
    let out = c.cli(&["reload"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "warning:   server \"typo\": unknown key \"comand\" is ignored (kept in the file)"
        ),
        "{text}"
    );
    // The entry that could not start is named with its error, and the reload fails.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{out:?}");
    assert!(
        err.contains("failed:    typo: ") && err.contains("command"),
        "{err}"
    );
    let status = c.cli(&["status"]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        text.contains(
            "config warning: server \"typo\": unknown key \"comand\" is ignored (kept in the file)"
        ),
        "{text}"
    );
    assert_eq!(c.status().await.warnings.len(), 1);

    std::fs::write(
        &c.config,
        serde_json::to_vec(&json!({ "mcpServers": { "demo": demo(&[]) } })).expect("json"),
    )
    .expect("write");
    assert!(c.cli(&["reload"]).status.success());
    let status = c.cli(&["status"]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(!text.contains("warning"), "{text}");
    assert!(c.status().await.warnings.is_empty());
}

/// `reload --config OTHER` would re-read the running companion's own file, not OTHER: it is
/// refused with both paths named, and changes nothing; the running file itself is accepted.
#[tokio::test]
async fn reload_refuses_a_config_the_companion_does_not_read() {
    let c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    c.settled().await;
    let other = c.home.join("other.json");
    std::fs::write(&other, r#"{"mcpServers": {}}"#).expect("write");
    let out = c.cli(&["--config", other.to_str().expect("utf-8"), "reload"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("other.json") && err.contains(c.config.to_str().expect("utf-8")),
        "{err}"
    );
    assert_eq!(c.status().await.servers.len(), 1, "nothing was reloaded");
    let out = c.cli(&["--config", c.config.to_str().expect("utf-8"), "reload"]);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("unchanged: demo"));
}

#[tokio::test]
async fn serve_watch_logs_a_syntax_error_with_line_and_column() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.json");
    let good = serde_json::to_vec(&json!({ "mcpServers": { "one": demo(&[]) } })).expect("json");
    std::fs::write(&config, good).expect("write");
    let log = dir.path().join("serve.log");
    let mut serve = Command::new(BIN)
        .args(["serve", "--watch", "--config"])
        .arg(&config)
        .arg("--socket")
        .arg(dir.path().join("mcp.sock"))
        .env("HOME", dir.path())
        .env("RUST_LOG", "info")
        .stderr(std::fs::File::create(&log).expect("log"))
        .spawn()
        .expect("serve");
    let read_log = || std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        eventually(Duration::from_secs(60), || read_log()
            .contains("watching the config"))
        .await,
        "{}",
        read_log()
    );
    std::fs::write(&config, BROKEN).expect("write");
    let reported = eventually(Duration::from_secs(60), || {
        let log = read_log();
        log.contains("does not load") && log.contains(WHERE)
    })
    .await;
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(serve.id() as i32, libc::SIGTERM) };
    let _ = serve.wait();
    assert!(reported, "{}", read_log());
}

/// A companion started with a relative `--config` reports the file's absolute path, so
/// `reload --config` and `doctor` run from elsewhere compare the right files (they compared
/// the relative text with their own directory's file).
#[tokio::test]
async fn a_relative_config_path_is_reported_absolute_and_reload_accepts_it_from_elsewhere() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.json");
    let doc = json!({ "mcpServers": { "one": demo(&[]) } });
    std::fs::write(&config, doc.to_string()).expect("write");
    let socket = dir.path().join("mcp.sock");
    let mut serve = Command::new(BIN)
        .args(["serve", "--config", "config.json", "--socket"])
        .arg(&socket)
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("serve");
    let control = dir.path().join("control.sock");
    let mut reported = None;
    for _ in 0..1200 {
        if let Ok(s) = mcp_companion::control::status(&control).await {
            reported = Some(s.config);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let reload = Command::new(BIN)
        .arg("--config")
        .arg(&config)
        .args(["reload", "--socket"])
        .arg(&socket)
        .current_dir(elsewhere.path())
        .env("HOME", dir.path())
        .output()
        .expect("reload");
    // The same relative name in another directory is another file: refused.
    std::fs::write(elsewhere.path().join("config.json"), "{}").expect("write");
    let other = Command::new(BIN)
        .args(["--config", "config.json", "reload", "--socket"])
        .arg(&socket)
        .current_dir(elsewhere.path())
        .env("HOME", dir.path())
        .output()
        .expect("reload");
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(serve.id() as i32, libc::SIGTERM) };
    let _ = serve.wait();
    assert_eq!(reported, Some(Some(config.clone())));
    assert!(reload.status.success(), "{reload:?}");
    assert!(!other.status.success(), "{other:?}");
}

/// `serve --config` naming a missing file (a typo) fails naming it and creates nothing; only
/// the default config path is created on first run, with the demo server.
#[test]
fn serve_with_a_missing_config_file_says_so_and_creates_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let typo = dir.path().join("confg.json");
    let mut serve = Command::new(BIN)
        .args(["serve", "--config"])
        .arg(&typo)
        .arg("--socket")
        .arg(dir.path().join("mcp.sock"))
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env_remove("MCP_COMPANION_CONFIG")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run serve");
    // A `serve` still running then has started on a config it created: the fault under test.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while serve.try_wait().expect("wait").is_none() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    if serve.try_wait().expect("wait").is_none() {
        let _ = serve.kill();
    }
    let out = serve.wait_with_output().expect("serve output");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains(&format!("config file {} does not exist", typo.display())),
        "{err}"
    );
    assert!(!typo.exists(), "serve created {}", typo.display());
}
