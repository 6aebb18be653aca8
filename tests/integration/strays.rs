//! Proves that a process a server started outside its process group (`setsid`, as a daemon's
//! double fork does) does not outlive the server: stopping the server, and `kill -9` of
//! `serve` (the reaper), end it too, and stopping one server leaves another server's alone
//! (Linux: the launch token in `MCP_COMPANION_LAUNCH`, `src/process/strays.rs`).

#![cfg(target_os = "linux")]

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{BIN, Companion, demo, eventually, live_processes};

/// A server whose shell starts `sleep 300` in a new session (writing its pid to `pid_file`),
/// then becomes the demo server.
fn with_stray(pid_file: &Path) -> Value {
    let script = format!(
        "setsid sh -c 'echo $$ > {}; exec sleep 300' < /dev/null > /dev/null 2>&1 & exec {BIN} demo-server",
        pid_file.display()
    );
    json!({ "command": "sh", "args": ["-c", script] })
}

/// The stray's pid, once it has written it.
async fn stray_pid(pid_file: &Path) -> u32 {
    let mut pid = None;
    let written = eventually(Duration::from_secs(30), || {
        pid = std::fs::read_to_string(pid_file)
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok());
        pid.is_some()
    })
    .await;
    assert!(written, "the stray never wrote {}", pid_file.display());
    pid.unwrap_or_default()
}

/// Whether `pid` runs (not a zombie), and in which process group.
fn group_of(pid: u32) -> Option<u32> {
    live_processes()
        .into_iter()
        .find(|(p, _, _)| *p == pid)
        .map(|(_, pgid, _)| pgid)
}

#[tokio::test]
async fn stopping_a_server_ends_what_it_started_outside_its_group_and_nothing_else() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (file_a, file_b) = (dir.path().join("a.pid"), dir.path().join("b.pid"));
    let c = Companion::start(json!({ "mcpServers": {
        "a": with_stray(&file_a), "b": with_stray(&file_b), "plain": demo(&[]),
    }}));
    let servers = c.settled().await;
    let leader_b = servers
        .iter()
        .find(|s| s.name == "b")
        .and_then(|s| s.pid)
        .expect("b runs");
    let (stray_a, stray_b) = (stray_pid(&file_a).await, stray_pid(&file_b).await);
    let group_b = group_of(stray_b).expect("b's stray runs");
    assert_ne!(
        group_b, leader_b,
        "the stray left the server's process group"
    );

    let stop = c.cli(&["stop", "b"]);
    assert!(
        stop.status.success(),
        "{}",
        String::from_utf8_lossy(&stop.stderr)
    );
    let gone = eventually(Duration::from_secs(30), || group_of(stray_b).is_none()).await;
    assert!(gone, "b's stray {stray_b} outlived b\n{}", c.log());
    assert!(
        group_of(stray_a).is_some(),
        "a's stray {stray_a} must live while a runs"
    );
    assert_eq!(c.server("a").await.state.as_str(), "running");
}

#[tokio::test]
async fn kill_9_of_serve_ends_what_a_server_started_outside_its_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("s.pid");
    let mut c = Companion::start(json!({ "mcpServers": { "s": with_stray(&file) } }));
    c.settled().await;
    let stray = stray_pid(&file).await;
    assert!(group_of(stray).is_some(), "the stray runs");
    let mut serve = c.child.take().expect("serve");
    serve.kill().expect("SIGKILL serve");
    let _ = serve.wait();
    let gone = eventually(Duration::from_secs(30), || group_of(stray).is_none()).await;
    assert!(gone, "the stray {stray} outlived kill -9 of serve");
}
