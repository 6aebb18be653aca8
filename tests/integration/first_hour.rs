//! What a new user tripped over in the first hour: children keep the network
//! settings they need, `doctor` reports the running companion's environment, and `bridge`
//! finds a companion whatever environment its client passes.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::common::{BIN, Companion, call, demo, text};

#[tokio::test]
async fn a_child_sees_the_companions_certificate_and_proxy_settings() {
    let c = Companion::start_with_env(
        json!({ "mcpServers": { "demo": demo(&[]) } }),
        &[
            ("SSL_CERT_FILE", Some("/etc/corp/ca.pem")),
            ("https_proxy", Some("http://proxy.corp:3128")),
            ("AWS_SECRET_ACCESS_KEY", Some("must-not-leak")),
        ],
    );
    c.settled().await;
    let client = c.client().await;
    let get = |name: &str| {
        let name = name.to_owned();
        let client = &client;
        async move { call(client, "mcp_demo_get_env", json!({ "name": name })).await }
    };
    assert_eq!(text(&get("SSL_CERT_FILE").await), "/etc/corp/ca.pem");
    assert_eq!(text(&get("https_proxy").await), "http://proxy.corp:3128");
    let secret = get("AWS_SECRET_ACCESS_KEY").await;
    assert_eq!(secret.is_error, Some(true), "{secret:?}");
}

#[tokio::test]
async fn doctor_shows_the_environment_of_the_running_companion() {
    let c = Companion::start_with_env(
        json!({ "mcpServers": { "demo": demo(&[]) } }),
        &[("SSL_CERT_FILE", Some("/etc/corp/ca.pem"))],
    );
    c.settled().await;
    let doctor = |config: &std::path::Path| {
        Command::new(BIN)
            .args(["doctor", "--config"])
            .arg(config)
            .arg("--socket")
            .arg(&c.socket)
            .env("HOME", &c.home)
            .env_remove("SSL_CERT_FILE")
            .env("MCP_COMPANION_GUI_PATH", "0")
            .output()
            .expect("run doctor")
    };
    let out = doctor(&c.config);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("environment: the running companion's (pid "),
        "{stdout}"
    );
    assert!(
        stdout.contains("SSL_CERT_FILE=/etc/corp/ca.pem"),
        "{stdout}"
    );
    assert!(stdout.contains("  state:   running"), "{stdout}");

    // Another config than the one the companion serves: this shell's environment, said why.
    let other = c.home.join("other.json");
    std::fs::write(
        &other,
        json!({ "mcpServers": { "demo": demo(&[]) } }).to_string(),
    )
    .expect("write");
    let out = doctor(&other);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("environment: this shell's (the running companion, pid ")
            && stdout.contains(&format!("serves {})", c.config.display()))
            && !stdout.contains("SSL_CERT_FILE=/etc/corp/ca.pem")
            && !stdout.contains("state:"),
        "{stdout}"
    );

    // Without a companion, doctor says it uses its own environment.
    let dir = tempfile::tempdir().expect("tempdir");
    let alone = Command::new(BIN)
        .args(["doctor", "--config"])
        .arg(&c.config)
        .arg("--socket")
        .arg(dir.path().join("mcp.sock"))
        .env("HOME", dir.path())
        .env("SSL_CERT_FILE", "/mine.pem")
        .output()
        .expect("run doctor");
    let stdout = String::from_utf8_lossy(&alone.stdout);
    assert!(
        stdout.contains("environment: this shell's (no companion is running)"),
        "{stdout}"
    );
    assert!(stdout.contains("SSL_CERT_FILE=/mine.pem"), "{stdout}");
}

/// A server whose launch plan is fine but which exits at start: `doctor` shows what the running
/// companion sees (retrying, with the server's own words) and counts it as one that cannot start.
#[tokio::test]
async fn doctor_shows_a_server_the_running_companion_reports_failing() {
    let c = Companion::start(json!({ "mcpServers": {
        "good": demo(&[]),
        "exits": demo(&["--fail-start"]),
    } }));
    c.settled().await;
    let mut tries = 0;
    let (code, stdout) = loop {
        let out = Command::new(BIN)
            .args(["doctor", "--config"])
            .arg(&c.config)
            .arg("--socket")
            .arg(&c.socket)
            .env("HOME", &c.home)
            .env("MCP_COMPANION_GUI_PATH", "0")
            .output()
            .expect("run doctor");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        // Between two tries the server is `starting` for a moment; it spends the rest waiting.
        tries += 1;
        // Retrying, or (on a slow machine, after its fifth try) failed for good.
        let settled =
            stdout.contains("  state:   retrying: ") || stdout.contains("  state:   failed: ");
        if settled || tries == 50 {
            break (out.status.code(), stdout);
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert!(
        stdout.contains("exits (stdio): launches, but the running companion reports it "),
        "{stdout}"
    );
    assert!(stdout.contains("failing at start as requested"), "{stdout}");
    assert!(stdout.contains("  state:   running"), "{stdout}");
    assert_eq!(code, Some(1), "{stdout}");
}

/// Runs `bridge` with only `PATH` and `HOME` (what the Inspector and the SDKs pass) and returns
/// the `initialize` answer, or stderr when it fails (then the answer is an error saying the
/// same).
fn bridge_initialize(home: &std::path::Path) -> Result<Value, String> {
    let mut bridge = Command::new(BIN)
        .arg("bridge")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        // Without a companion it must say so, not start one.
        .env("MCP_COMPANION_NO_AUTOSTART", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bridge");
    let mut stdin = bridge.stdin.take().expect("stdin");
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "b", "version": "0" } } });
    // The bridge may already have exited (nothing found): a broken pipe is the answer then.
    let _ = writeln!(stdin, "{init}");
    drop(stdin);
    let out = bridge.wait_with_output().expect("bridge exit");
    let first = BufReader::new(&out.stdout[..]).lines().next();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    match first {
        Some(Ok(line)) => {
            let answer: Value = serde_json::from_str(&line).expect("json");
            match answer["error"]["message"].as_str() {
                // The agent is told what stderr says.
                Some(message) => {
                    assert!(stderr.contains(message), "{message}\n{stderr}");
                    Err(stderr)
                }
                None => Ok(answer),
            }
        }
        _ => Err(stderr),
    }
}

#[tokio::test]
async fn bridge_with_only_path_and_home_finds_a_companion_in_a_custom_runtime_dir() {
    let c = Companion::start_in_runtime_dir(
        json!({ "mcpServers": { "demo": demo(&[]) } }),
        "custom-xdg-runtime",
    );
    c.settled().await;
    let home = c.home.clone();
    let answer = tokio::task::spawn_blocking(move || bridge_initialize(&home))
        .await
        .expect("join");
    let answer = answer.unwrap_or_else(|err| panic!("bridge failed: {err}\n{}", c.log()));
    assert_eq!(answer["id"], json!(1), "{answer}");
    assert!(answer["result"]["serverInfo"].is_object(), "{answer}");

    // The one-shot commands find it through the record too (they used the usual rule only).
    let one_shots: [(&[&str], &str); 3] = [
        (&["status"], "demo"),
        (&["tools"], "mcp_demo_echo"),
        (
            &["call", "mcp_demo_echo", r#"{"message":"hi from record"}"#],
            "hi from record",
        ),
    ];
    for (args, expected) in one_shots {
        let out = Command::new(BIN)
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &c.home)
            .output()
            .expect("run the CLI");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{args:?}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains(expected), "{args:?}: {stdout}");
    }

    // Once the companion is gone its record is withdrawn; a stale record (a companion that was
    // killed) is still tried, and the error names every place the bridge looked.
    let mut c = c;
    let socket = c.socket.clone();
    c.terminate(std::time::Duration::from_secs(15));
    let record = c.home.join(".local/state/mcp-companion/endpoint.json");
    assert!(!record.exists(), "withdrawn on shutdown");
    let stale =
        json!({ "pid": 1, "mcp": socket, "control": socket.with_file_name("control.sock") });
    std::fs::write(&record, stale.to_string()).expect("write record");
    let home = c.home.clone();
    let err = tokio::task::spawn_blocking(move || bridge_initialize(&home))
        .await
        .expect("join")
        .expect_err("nothing listens any more");
    assert!(err.contains("nothing is listening on "), "{err}");
    assert!(err.contains(", nor on "), "{err}");
    assert!(err.contains(&socket.display().to_string()), "{err}");
    // With no record at all, the error says the record was looked at too.
    std::fs::remove_file(&record).expect("remove record");
    let home = c.home.clone();
    let err = tokio::task::spawn_blocking(move || bridge_initialize(&home))
        .await
        .expect("join")
        .expect_err("nothing listens");
    assert!(
        err.contains(&format!(
            "no running companion has recorded its socket in {} either",
            record.display()
        )),
        "{err}"
    );
}

#[tokio::test]
async fn a_call_in_flight_at_shutdown_is_not_blamed_on_the_client() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    c.settled().await;
    let (rd, mut wr) = tokio::net::UnixStream::connect(&c.socket)
        .await
        .expect("connect")
        .into_split();
    let mut lines = tokio::io::BufReader::new(rd).lines();
    let msgs = [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "raw", "version": "0" } } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "mcp_demo_sleep", "arguments": { "seconds": 60 }, "_meta": { "progressToken": "p" } } }),
    ];
    for m in msgs {
        wr.write_all(format!("{m}\n").as_bytes())
            .await
            .expect("send");
    }
    // The first progress notification proves the call is in flight upstream.
    loop {
        let line = lines.next_line().await.expect("read").expect("open");
        let v: Value = serde_json::from_str(&line).expect("json");
        if v["method"] == json!("notifications/progress") {
            break;
        }
    }
    let status = c.terminate(std::time::Duration::from_secs(15));
    assert!(status.success(), "{status:?}");
    let log = c.log();
    let failed: Vec<&str> = log.lines().filter(|l| l.contains("call failed")).collect();
    assert!(!failed.is_empty(), "the cut-short call is logged:\n{log}");
    for line in failed {
        assert!(!line.contains("cancelled by the client"), "{line}");
        assert!(
            line.contains("the companion is shutting down")
                || line.contains("the server was stopped while the call was in flight"),
            "{line}"
        );
    }
}

#[tokio::test]
async fn an_agent_connecting_during_start_up_lists_every_tool_of_a_slow_server() {
    // `slow` takes 3 s to answer initialize; the agent connects at once and lists once, as
    // nanobot does. The limit is generous so a loaded machine cannot make the test flaky.
    let c = Companion::start(json!({
        "firstListTimeout": 120,
        "mcpServers": {
            "fast": demo(&[]),
            "slow": demo(&["--start-delay-ms", "3000"]),
        }
    }));
    let client = c.client().await;
    let names = crate::common::tool_names(&client).await;
    assert!(names.contains(&"mcp_fast_echo".to_owned()), "{names:?}");
    assert!(
        names.contains(&"mcp_slow_echo".to_owned()),
        "the first tools/list waited for the slow server: {names:?}"
    );
    // Every tool of the slow server, not just some.
    let slow = names.iter().filter(|n| n.starts_with("mcp_slow_")).count();
    let fast = names.iter().filter(|n| n.starts_with("mcp_fast_")).count();
    assert_eq!(slow, fast, "{names:?}");
}

#[tokio::test]
async fn the_first_list_wait_is_bounded() {
    // A server that takes 10 minutes to start cannot hold the list longer than the limit.
    let c = Companion::start(json!({
        "firstListTimeout": 1,
        "mcpServers": {
            "fast": demo(&[]),
            "stuck": demo(&["--start-delay-ms", "600000"]),
        }
    }));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while c.server("fast").await.state.as_str() != "running" {
        assert!(std::time::Instant::now() < deadline, "{}", c.log());
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let client = c.client().await;
    let names = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        crate::common::tool_names(&client),
    )
    .await
    .expect("answered although a server is still starting");
    assert!(names.contains(&"mcp_fast_echo".to_owned()), "{names:?}");
    assert!(
        !names.iter().any(|n| n.starts_with("mcp_stuck_")),
        "{names:?}"
    );
}

#[tokio::test]
async fn status_marks_an_error_of_an_earlier_process_and_logs_mark_each_process() {
    let c = Companion::start(json!({ "mcpServers": { "crashy": demo(&[]) } }));
    c.settled().await;
    let old = c.server("crashy").await.pid;
    // Killed from outside, not through a `crash` call: a call that breaks its session may be
    // retried on the next process, which would crash that one too.
    crate::common::signal(
        old.expect("a running stdio server has a pid"),
        rustix::process::Signal::KILL,
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let s = c.server("crashy").await;
        // A new process has a pid of its own: between the old one's death and the supervisor
        // noticing it, status may still say "running" without a pid.
        if s.state.as_str() == "running" && s.pid.is_some() && s.pid != old {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{s:?}\n{}", c.log());
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let status = String::from_utf8_lossy(&c.cli(&["status"]).stdout).into_owned();
    let row = status
        .lines()
        .find(|l| l.starts_with("crashy"))
        .unwrap_or_default();
    assert!(
        row.contains("running") && row.contains("(earlier) ") && row.contains("SIGKILL"),
        "a running server shows its old error as older: {status}"
    );
    let logs = String::from_utf8_lossy(&c.cli(&["logs", "crashy"]).stdout).into_owned();
    let markers: Vec<usize> = logs
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("── process ") && l.ends_with(" started ──"))
        .map(|(i, _)| i)
        .collect();
    assert!(markers.len() >= 2, "one marker per process: {logs}");
    let old_ready = format!("ready (pid {})", old.unwrap_or_default());
    let old_line = logs
        .lines()
        .position(|l| l.contains(&old_ready))
        .unwrap_or(usize::MAX);
    assert!(
        old_line < *markers.last().unwrap_or(&0),
        "the killed process's lines come before the last marker: {logs}"
    );
}
