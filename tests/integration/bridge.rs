//! `mcp-companion bridge` as an agent spawns it, over real processes: with pipes for stdio it
//! hands them to the companion (it holds no copy of them afterwards), exits 0 when the client
//! closes its input, and when the companion is stopped or killed mid-session the client sees its
//! stdout close and the bridge exits non-zero saying so; a killed bridge ends its session; with a
//! file for stdio it copies as before.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{BIN, Companion, demo, eventually, signal};

/// The client's opening: initialize, initialized.
fn opening() -> [Value; 2] {
    [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "b", "version": "0" } } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
    ]
}

fn spawn_bridge(c: &Companion) -> Child {
    Command::new(BIN)
        .args(["bridge", "--socket"])
        .arg(&c.socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bridge")
}

/// Where the process's descriptor `fd` points (`/proc/PID/fd/N`).
fn fd_target(pid: u32, fd: u32) -> String {
    std::fs::read_link(format!("/proc/{pid}/fd/{fd}"))
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

/// Writes the opening and reads the initialize answer.
fn open_session(
    bridge: &mut Child,
) -> (
    std::process::ChildStdin,
    BufReader<std::process::ChildStdout>,
) {
    let mut stdin = bridge.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(bridge.stdout.take().expect("stdout"));
    for m in opening() {
        writeln!(stdin, "{m}").expect("write");
    }
    let mut line = String::new();
    stdout.read_line(&mut line).expect("read");
    let answer: Value = serde_json::from_str(&line).expect("json");
    assert_eq!(answer["id"], json!(1), "{answer}");
    (stdin, stdout)
}

/// Waits (at most 30 s) for the child to exit.
fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        assert!(Instant::now() < deadline, "bridge did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn bridge_hands_its_pipes_to_the_companion_and_exits_0_after_the_input_ends() {
    let c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    c.settled().await;
    let mut bridge = spawn_bridge(&c);
    let pid = bridge.id();
    let (mut stdin, stdout) = tokio::task::block_in_place(|| open_session(&mut bridge));
    // Served by the companion: the bridge's own stdin and stdout no longer reach the client.
    assert!(
        eventually(Duration::from_secs(10), || fd_target(pid, 0) == "/dev/null"
            && fd_target(pid, 1) == "/dev/null")
        .await,
        "bridge still holds {} and {}",
        fd_target(pid, 0),
        fd_target(pid, 1)
    );
    let answers = tokio::task::block_in_place(move || {
        let call = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "mcp_demo_echo", "arguments": { "message": "handed over" } } });
        writeln!(stdin, "{call}").expect("write");
        drop(stdin);
        let lines: Vec<Value> = stdout
            .lines()
            .map(|l| serde_json::from_str(&l.expect("line")).expect("json"))
            .collect();
        (lines, wait_exit(&mut bridge))
    });
    let (lines, status) = answers;
    assert!(status.success(), "{status:?}");
    let call = lines
        .iter()
        .find(|v| v["id"] == json!(2))
        .expect("answered");
    assert_eq!(call["result"]["content"][0]["text"], json!("handed over"));
}

/// The companion stopped (SIGTERM) or killed (SIGKILL) mid-session: the client's stdout ends and
/// the bridge exits non-zero with a message.
async fn companion_gone_mid_session(sig: rustix::process::Signal) {
    let mut c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    c.settled().await;
    let mut bridge = spawn_bridge(&c);
    let (stdin, mut stdout) = tokio::task::block_in_place(|| open_session(&mut bridge));
    let mut child = c.child.take().expect("serve");
    signal(child.id(), sig);
    let (rest, status, err) = tokio::task::block_in_place(move || {
        let _ = child.wait();
        let mut rest = String::new();
        // End of file, with the client's stdin still open.
        stdout.read_to_string(&mut rest).expect("read to end");
        let status = wait_exit(&mut bridge);
        let mut err = String::new();
        bridge
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut err)
            .expect("stderr");
        drop(stdin);
        (rest, status, err)
    });
    assert!(!status.success(), "{status:?}; stdout {rest}");
    assert!(err.contains("the companion closed the session"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn companion_stopped_mid_session_closes_the_clients_stdout_and_the_bridge_fails() {
    companion_gone_mid_session(rustix::process::Signal::TERM).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn companion_killed_mid_session_closes_the_clients_stdout_and_the_bridge_fails() {
    companion_gone_mid_session(rustix::process::Signal::KILL).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_bridge_ends_its_session() {
    let c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    c.settled().await;
    let mut bridge = spawn_bridge(&c);
    let (stdin, mut stdout) = tokio::task::block_in_place(|| open_session(&mut bridge));
    bridge.kill().expect("kill");
    let _ = bridge.wait();
    // The companion holds the client's pipes; with the bridge gone it ends the session and
    // closes them, though the client keeps its stdin open.
    let rest = tokio::task::block_in_place(move || {
        let mut rest = String::new();
        stdout.read_to_string(&mut rest).expect("read to end");
        drop(stdin);
        rest
    });
    assert!(rest.is_empty(), "{rest}");
}

#[tokio::test(flavor = "multi_thread")]
async fn bridge_with_files_for_stdio_copies() {
    let c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    c.settled().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let (input, output) = (dir.path().join("in.jsonl"), dir.path().join("out.jsonl"));
    let mut text = String::new();
    for m in opening() {
        text.push_str(&format!("{m}\n"));
    }
    text.push_str(&format!(
        "{}\n",
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "mcp_demo_echo", "arguments": { "message": "from a file" } } })
    ));
    std::fs::write(&input, text).expect("write input");
    let socket = c.socket.clone();
    let out = tokio::task::block_in_place(|| {
        Command::new(BIN)
            .args(["bridge", "--socket"])
            .arg(&socket)
            .stdin(std::fs::File::open(&input).expect("open"))
            .stdout(std::fs::File::create(&output).expect("create"))
            .output()
            .expect("bridge")
    });
    assert!(
        out.status.success(),
        "{:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::read_to_string(&output).expect("read output");
    let call = written
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("json"))
        .find(|v| v["id"] == json!(2))
        .unwrap_or_else(|| panic!("no answer in {written}"));
    assert_eq!(call["result"]["content"][0]["text"], json!("from a file"));
}
