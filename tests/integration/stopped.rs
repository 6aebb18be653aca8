//! A companion that accepts connections but never answers (here a real `serve` stopped with
//! SIGSTOP) hangs no client: each command gives up after its bound, built on the quick-answer
//! bound (`src/ipc/quick.rs`, shortened here to [`BOUND_SECS`] through its environment
//! variable), saying why and exiting non-zero; once the companion runs again, it answers.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::common::{BIN, Companion, demo, eventually, signal};

/// The quick-answer bound the commands under test run with, in seconds.
const BOUND_SECS: u64 = 2;

/// What every command says when the companion is silent.
const SILENT: &str = "the companion accepted the connection but did not answer";

/// Starts the CLI with `args` against `c`, with the shortened bound.
fn spawn_cli(c: &Companion, args: &[&str], stdin: Stdio) -> Child {
    Command::new(BIN)
        .args(args)
        .arg("--socket")
        .arg(&c.socket)
        .env("HOME", &c.home)
        .env("MCP_COMPANION_QUICK_ANSWER_SECS", BOUND_SECS.to_string())
        .env_remove("XDG_DATA_HOME")
        .env_remove("RUST_LOG")
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the cli")
}

/// Waits up to `limit` for `child` to exit; kills it and returns `None` when it did not. The
/// output holds stdout's first line only: a bridge that offered its stdio to a stopped
/// companion exits while the offered descriptors wait, unread, in the companion's socket, so
/// its stdout reaches end of file only once the companion runs again.
async fn ended_within(mut child: Child, limit: Duration) -> Option<Output> {
    let ended = eventually(limit, || matches!(child.try_wait(), Ok(Some(_)))).await;
    if !ended {
        let _ = child.kill();
        let _ = child.wait();
        return None;
    }
    let status = child.wait().expect("wait");
    let mut stdout = String::new();
    if let Some(out) = child.stdout.take() {
        let _ = BufReader::new(out).read_line(&mut stdout);
    }
    let mut stderr = Vec::new();
    if let Some(mut err) = child.stderr.take() {
        let _ = err.read_to_end(&mut stderr);
    }
    Some(Output {
        status,
        stdout: stdout.into_bytes(),
        stderr,
    })
}

/// A running companion with the demo server, and its pid.
async fn running() -> (Companion, u32) {
    let c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    c.settled().await;
    let pid = c.child.as_ref().expect("running").id();
    (c, pid)
}

/// Asserts `out` (of `what`) failed saying the companion did not answer `which`.
fn assert_silent(what: &str, out: Option<Output>, which: &str) -> Output {
    let out = out.unwrap_or_else(|| panic!("{what} still waits on a stopped companion"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{what}: {err}");
    assert!(
        err.contains(&format!("{SILENT} {which}within {BOUND_SECS} s")),
        "{what}: {err}"
    );
    out
}

/// `status` fails with a reason after the quick-answer bound instead of hanging; once the
/// companion runs again, `status` answers.
#[tokio::test]
async fn status_of_a_stopped_companion_says_so_instead_of_hanging() {
    let (mut c, pid) = running().await;
    signal(pid, rustix::process::Signal::STOP);
    let status = spawn_cli(&c, &["status"], Stdio::null());
    // Far above the bound: a `status` still waiting then is the fault under test.
    let out = ended_within(status, Duration::from_secs(60)).await;
    signal(pid, rustix::process::Signal::CONT);
    assert_silent("status", out, "");
    let again = c.cli(&["status"]);
    assert!(again.status.success(), "{again:?}");
    c.terminate(Duration::from_secs(10));
}

/// `tools`, `logs` and `reload` give up too: `tools` and `logs` after the quick-answer bound,
/// `reload` after the time a reload may wait for servers to start (60 s) plus that bound.
#[tokio::test]
async fn tools_logs_and_reload_of_a_stopped_companion_say_so_instead_of_hanging() {
    let (mut c, pid) = running().await;
    let server = c.settled().await[0].name.clone();
    signal(pid, rustix::process::Signal::STOP);
    let tools = spawn_cli(&c, &["tools"], Stdio::null());
    let logs = spawn_cli(&c, &["logs", &server], Stdio::null());
    let reload = spawn_cli(&c, &["reload"], Stdio::null());
    let limit = Duration::from_secs(120);
    let (tools, logs, reload) = tokio::join!(
        ended_within(tools, limit),
        ended_within(logs, limit),
        ended_within(reload, limit)
    );
    signal(pid, rustix::process::Signal::CONT);
    assert_silent("tools", tools, "the MCP handshake ");
    assert_silent("logs", logs, "");
    assert!(
        reload.is_some(),
        "reload still waits on a stopped companion after 120 s"
    );
    let reload = reload.expect("checked");
    let err = String::from_utf8_lossy(&reload.stderr);
    assert!(
        !reload.status.success() && err.contains(&format!("{SILENT} within {} s", 60 + BOUND_SECS)),
        "reload: {err}"
    );
    let again = c.cli(&["tools"]);
    assert!(again.status.success(), "{again:?}");
    c.terminate(Duration::from_secs(10));
}

/// `call` may run far longer than the quick-answer bound while the companion answers its
/// pings; a companion stopped mid-call, or before the call, makes it fail saying so.
#[tokio::test]
async fn a_call_outlives_the_bound_but_not_a_stopped_companion() {
    let (mut c, pid) = running().await;
    let sleep = |secs: u64| {
        spawn_cli(
            &c,
            &[
                "call",
                "mcp_demo_sleep",
                &json!({ "seconds": secs }).to_string(),
            ],
            Stdio::null(),
        )
    };
    // Three bounds long, with the companion running: it ends with the tool's answer.
    let long = ended_within(sleep(3 * BOUND_SECS), Duration::from_secs(60))
        .await
        .expect("a long call ends");
    assert!(long.status.success(), "{long:?}");
    // Stopped once the companion has the call.
    let call = sleep(50);
    let received = eventually(Duration::from_secs(30), || {
        let out = c.cli(&["agents", "--json"]);
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        report["agents"]
            .as_array()
            .is_some_and(|a| a.iter().any(|a| a["calls"].as_u64() >= Some(1)))
    })
    .await;
    assert!(received, "the companion never saw the call");
    signal(pid, rustix::process::Signal::STOP);
    let mid_call = ended_within(call, Duration::from_secs(40)).await;
    // Stopped before the call.
    let before = ended_within(sleep(1), Duration::from_secs(40)).await;
    signal(pid, rustix::process::Signal::CONT);
    let mid_call = assert_silent("call", mid_call, "a ping while the call ran ");
    let err = String::from_utf8_lossy(&mid_call.stderr);
    assert!(err.contains("may or may not have run"), "{err}");
    assert_silent("call", before, "the MCP handshake ");
    c.terminate(Duration::from_secs(10));
}

/// The bridge says on stderr that the companion is silent, answers the agent's `initialize`
/// with that reason, and exits 1: when it hands its stdio over (pipes) and the offer is never
/// answered, and when it copies (a file for stdin) and the `initialize` is never answered.
#[tokio::test]
async fn a_bridge_to_a_stopped_companion_says_so_and_exits_1() {
    let (mut c, pid) = running().await;
    let initialize = json!({ "jsonrpc": "2.0", "id": 7, "method": "initialize", "params": { "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "b", "version": "0" } } });
    let input = c.dir.path().join("input.jsonl");
    std::fs::write(&input, format!("{initialize}\n")).expect("write input");
    signal(pid, rustix::process::Signal::STOP);
    let mut handing = spawn_cli(&c, &["bridge", "--no-autostart"], Stdio::piped());
    let mut stdin = handing.stdin.take().expect("stdin");
    stdin
        .write_all(format!("{initialize}\n").as_bytes())
        .expect("write initialize");
    let copying = spawn_cli(
        &c,
        &["bridge", "--no-autostart"],
        Stdio::from(std::fs::File::open(&input).expect("open input")),
    );
    let limit = Duration::from_secs(40);
    let (handing, copying) =
        tokio::join!(ended_within(handing, limit), ended_within(copying, limit));
    drop(stdin);
    signal(pid, rustix::process::Signal::CONT);
    for (what, out, which) in [
        ("handing bridge", handing, "the bridge's stdio offer "),
        ("copying bridge", copying, "the agent's first request "),
    ] {
        let out = assert_silent(what, out, which);
        assert_eq!(out.status.code(), Some(1), "{what}");
        let answer: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{what}: {e}: {out:?}"));
        assert_eq!(answer["id"], 7, "{what}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(SILENT), "{what}: {answer}");
    }
    c.terminate(Duration::from_secs(10));
}
