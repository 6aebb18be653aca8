//! Proves that servers start from a desktop-style launch (PATH stripped, stdin not a terminal)
//! by taking PATH from the login shell, and that `doctor` names every server that cannot start
//! and exits 1.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::common::{BIN, Companion, demo, tool_names};

fn write_script(path: &Path, body: &str) {
    std::fs::write(path, body).expect("write script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// A dir holding `mcp-fake` (our demo server) and a fake login shell whose PATH includes it.
fn fake_tools() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    write_script(
        &bin.join("mcp-fake"),
        &format!("#!/bin/sh\nexec '{BIN}' demo-server \"$@\"\n"),
    );
    // Ignores `-l` (a real profile would reset PATH) and runs the `-c` script with its PATH.
    let shell = dir.path().join("fake-login-shell");
    write_script(
        &shell,
        &format!(
            "#!/bin/sh\nPATH='{}:/usr/bin:/bin'\nexport PATH\nshift\nexec /bin/sh \"$@\"\n",
            bin.display()
        ),
    );
    let shell = shell.display().to_string();
    (dir, shell)
}

#[tokio::test]
async fn gui_launch_finds_commands_on_the_login_shell_path() {
    let (_tools, shell) = fake_tools();
    let config = json!({ "mcpServers": { "fake": { "command": "mcp-fake" } } });
    // stdin is /dev/null, so serve detects a GUI launch by itself.
    let c = Companion::start_with_env(
        config.clone(),
        &[
            ("PATH", Some("/usr/bin:/bin")),
            ("SHELL", Some(&shell)),
            ("MCP_COMPANION_GUI_PATH", None),
        ],
    );
    c.running().await;
    let client = c.client().await;
    assert!(
        tool_names(&client)
            .await
            .contains(&"mcp_fake_echo".to_owned())
    );

    // The same launch with the login-shell lookup turned off cannot find the command.
    let off = Companion::start_with_env(
        config,
        &[
            ("PATH", Some("/usr/bin:/bin")),
            ("SHELL", Some(&shell)),
            ("MCP_COMPANION_GUI_PATH", Some("0")),
        ],
    );
    let servers = off.settled().await;
    assert_eq!(servers[0].state.as_str(), "failed", "{servers:?}");
    let err = servers[0].last_error.clone().unwrap_or_default();
    assert!(
        err.contains("\"mcp-fake\" not found on PATH (/usr/bin:/bin)"),
        "{err}"
    );
}

#[test]
fn doctor_shows_good_and_missing_servers_and_exits_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.json");
    let doc = json!({ "mcpServers": {
        "good": demo(&[]),
        "missing": { "command": "no-such-command-mcpc-doctor", "args": ["a&b"] },
        "local": { "url": "http://127.0.0.1:9/mcp?key=secret-in-query" },
        "private": { "url": "http://10.1.2.3/sse" },
    },
    "ssrfWhitelist": ["127.0.0.1/32"] });
    std::fs::write(&config, doc.to_string()).expect("write config");
    let out = Command::new(BIN)
        .args(["doctor", "--config"])
        .arg(&config)
        .env("MCP_COMPANION_GUI_PATH", "0")
        .output()
        .expect("run doctor");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("good (stdio): ok"), "{stdout}");
    assert!(
        stdout.contains(&format!("  program: {BIN}")),
        "resolved program shown: {stdout}"
    );
    assert!(
        stdout.contains(
            "missing (stdio): cannot start: command \"no-such-command-mcpc-doctor\" not found on PATH"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("from:    the companion's PATH"), "{stdout}");
    // Remote servers: the SSRF verdict, with the URL redacted.
    assert!(stdout.contains("local (streamableHttp): ok"), "{stdout}");
    assert!(
        stdout.contains("url:     http://127.0.0.1:9/..."),
        "{stdout}"
    );
    assert!(!stdout.contains("secret-in-query"), "{stdout}");
    assert!(
        stdout.contains("private (sse): cannot start:") && stdout.contains("10.1.2.3"),
        "{stdout}"
    );

    let windows = Command::new(BIN)
        .args(["doctor", "missing", "--os", "windows", "--config"])
        .arg(&config)
        .output()
        .expect("run doctor --os");
    let stdout = String::from_utf8_lossy(&windows.stdout);
    assert!(
        stdout.contains("launch:  no-such-command-mcpc-doctor a&b"),
        "not a shim, so not under cmd.exe: {stdout}"
    );
    assert!(!stdout.contains("good"), "only the named server: {stdout}");
}
