//! Proves that a companion's shutdown waits for its sessions: once `Companion::shutdown`
//! returns, every agent and control connection has been closed from our side (a read on the
//! client end sees end-of-file at once, without waiting), and the socket files are gone.

use std::io::Read;
use std::time::Duration;

use mcp_companion::companion::Companion;
use mcp_companion::config;
use mcp_companion::ipc::paths::EndpointPaths;
use mcp_companion::ipc::socket;
use tokio::io::AsyncWriteExt;

/// Reads once without blocking: `Some(0)` is end-of-file, `None` means "still open".
fn read_now(stream: tokio::net::UnixStream) -> Option<usize> {
    let mut std = stream.into_std().expect("std stream");
    std.set_nonblocking(true).expect("nonblocking");
    let mut buf = [0u8; 4096];
    let mut total = 0;
    loop {
        match std.read(&mut buf) {
            Ok(0) => return Some(total),
            Ok(n) => total += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return None,
            // A connection still in the listener's backlog when the listener closed.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return Some(total),
            Err(e) => panic!("read failed: {e}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_returns_only_after_every_session_ended() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config::parse(r#"{"mcpServers":{}}"#, &dir.path().join("c.json")).expect("cfg");
    let paths = EndpointPaths::isolated(dir.path().join("mcp.sock"));
    let companion = Companion::start(&cfg, paths.clone(), None)
        .await
        .expect("start");

    // Sessions in different phases: agents that never initialize, one mid-request, and
    // control clients with and without a request behind them.
    let mut agents = Vec::new();
    for _ in 0..3 {
        agents.push(socket::connect(&paths.mcp).await.expect("agent"));
    }
    let mut busy = socket::connect(&paths.mcp).await.expect("agent");
    busy.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"")
        .await
        .expect("partial line");
    let idle_control = socket::connect(&paths.control).await.expect("control");
    let mut asked = socket::connect(&paths.control).await.expect("control");
    asked
        .write_all(b"{\"method\":\"status\"}\n")
        .await
        .expect("request");
    agents.push(busy);
    // Let the accept loops hand every connection to a session task.
    tokio::time::sleep(Duration::from_millis(200)).await;

    tokio::time::timeout(Duration::from_secs(10), companion.shutdown())
        .await
        .expect("shutdown within its budget");

    for (i, agent) in agents.into_iter().enumerate() {
        assert_eq!(read_now(agent), Some(0), "agent {i} still connected");
    }
    assert_eq!(read_now(idle_control), Some(0), "idle control session");
    let answered = read_now(asked);
    assert!(
        answered.is_some_and(|n| n > 0),
        "the control request was answered, then the session closed: {answered:?}"
    );
    assert!(
        !paths.mcp.exists() && !paths.control.exists(),
        "sockets removed"
    );
}
