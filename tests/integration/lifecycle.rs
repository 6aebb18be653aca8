//! Proves the lifecycle rules of `serve`: SIGTERM leaves no process behind (grandchildren
//! included) and removes the sockets; a second `serve` refuses to start; `stop`/`start` through
//! the CLI change the tool list and every connected agent hears `tools/list_changed`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;

use crate::common::{
    BIN, Companion, auto_approved, call, demo, eventually, survivors, text, tool_names,
};

#[tokio::test]
async fn sigterm_stops_every_server_and_leaves_no_process_behind() {
    // `sh` starts a grandchild (sleep) in the server's process group, as npx does with node.
    let wrapped =
        json!({ "command": "sh", "args": ["-c", format!("sleep 300 & exec {BIN} demo-server")] });
    let mut c = Companion::start(json!({ "mcpServers": { "a": demo(&[]), "b": wrapped } }));
    let servers = c.settled().await;
    let leaders: Vec<u32> = servers.iter().filter_map(|s| s.pid).collect();
    assert_eq!(leaders.len(), 2, "{servers:?}");
    let before = survivors(&leaders);
    assert!(
        before
            .iter()
            .any(|(_, _, cmd)| cmd.starts_with("sleep 300")),
        "grandchild running: {before:?}"
    );

    let status = c.terminate(Duration::from_secs(30));
    assert!(
        status.success(),
        "serve exits 0 on SIGTERM: {status:?}\n{}",
        c.log()
    );
    let gone = eventually(Duration::from_secs(30), || survivors(&leaders).is_empty()).await;
    assert!(gone, "left behind: {:?}", survivors(&leaders));
    assert!(!c.socket.exists() && !c.control.exists(), "sockets removed");
}

#[tokio::test]
async fn a_second_serve_refuses_and_names_the_running_one() {
    let c = Companion::start(json!({ "mcpServers": {} }));
    let first_pid = c.status().await.pid;
    let out = std::process::Command::new(BIN)
        .args(["serve", "--config"])
        .arg(&c.config)
        .arg("--socket")
        .arg(&c.socket)
        .env("HOME", &c.home)
        .output()
        .expect("second serve");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("already running") && err.contains(&first_pid.to_string()),
        "{err}"
    );
    // It refused: it must not say it loaded a config it never serves.
    assert!(!err.contains("config loaded"), "{err}");
    assert!(
        c.socket.exists(),
        "the first companion's socket is untouched"
    );
    assert_eq!(c.status().await.pid, first_pid);
}

/// One companion serves each user: a second `serve` on other sockets is refused, naming the
/// first, and leaves the first one's record alone, so `bridge` (which finds the companion by
/// that record) still reaches it.
#[tokio::test]
async fn a_second_serve_on_another_socket_is_refused_and_the_first_stays_reachable() {
    let c = Companion::start(json!({ "mcpServers": {} }));
    let first_pid = c.status().await.pid;
    let other = c.dir.path().join("other");
    std::fs::create_dir_all(&other).expect("dir");
    let mut second = std::process::Command::new(BIN)
        .args(["serve", "--config"])
        .arg(&c.config)
        .arg("--socket")
        .arg(other.join("mcp.sock"))
        .env("HOME", &c.home)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("second serve");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = second.try_wait().expect("wait") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = second.kill();
            let _ = second.wait();
            panic!("a second companion started on another socket");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut second.stderr.take().expect("stderr"), &mut err)
        .expect("stderr");
    assert!(!status.success());
    assert!(
        err.contains("already running") && err.contains(&first_pid.to_string()),
        "{err}"
    );
    let record = std::fs::read_to_string(c.home.join(".local/state/mcp-companion/endpoint.json"))
        .expect("the first companion's record is still there");
    assert!(record.contains(&format!("\"pid\":{first_pid}")), "{record}");
    // `bridge` as an agent spawns it: no socket named, only HOME and PATH.
    let out = std::process::Command::new(BIN)
        .arg("bridge")
        .env_clear()
        .env("HOME", &c.home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")?;
            child.wait_with_output()
        })
        .expect("bridge");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("\"id\":1") && said.contains("\"result\""),
        "{said}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[derive(Clone, Default)]
struct ListChanged(Arc<AtomicUsize>);

impl rmcp::ClientHandler for ListChanged {
    async fn on_tool_list_changed(
        &self,
        _cx: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn stop_and_start_change_the_tool_list_and_agents_are_told() {
    let c = Companion::start(json!({ "mcpServers": { "time": demo(&[]), "other": demo(&[]) } }));
    c.settled().await;
    let heard = ListChanged::default();
    let client = c.client_with(heard.clone()).await;
    assert!(
        tool_names(&client)
            .await
            .iter()
            .any(|n| n.starts_with("mcp_time_"))
    );

    let stop = c.cli(&["stop", "time"]);
    assert!(
        stop.status.success(),
        "{}",
        String::from_utf8_lossy(&stop.stderr)
    );
    assert_eq!(c.server("time").await.state.as_str(), "stopped");
    assert!(
        eventually(Duration::from_secs(30), || heard.0.load(Ordering::SeqCst)
            >= 1)
        .await,
        "list_changed after stop"
    );
    let names = tool_names(&client).await;
    assert!(
        !names.iter().any(|n| n.starts_with("mcp_time_")),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n.starts_with("mcp_other_")));

    let before = heard.0.load(Ordering::SeqCst);
    let start = c.cli(&["start", "time"]);
    assert!(start.status.success());
    assert!(
        eventually(Duration::from_secs(30), || heard.0.load(Ordering::SeqCst)
            > before)
        .await,
        "list_changed after start"
    );
    c.settled().await;
    assert!(
        tool_names(&client)
            .await
            .iter()
            .any(|n| n == "mcp_time_echo")
    );
}

#[tokio::test]
async fn an_upstream_list_change_reaches_connected_agents() {
    let c = Companion::start(json!({ "mcpServers": { "demo": auto_approved(demo(&[])) } }));
    c.settled().await;
    let heard = ListChanged::default();
    let client = c.client_with(heard.clone()).await;
    assert!(
        !tool_names(&client)
            .await
            .contains(&"mcp_demo_extra".to_owned())
    );
    let toggled = call(&client, "mcp_demo_toggle_extra", json!({})).await;
    assert_ne!(toggled.is_error, Some(true));
    assert!(
        eventually(Duration::from_secs(30), || heard.0.load(Ordering::SeqCst)
            >= 1)
        .await
    );
    assert!(
        tool_names(&client)
            .await
            .contains(&"mcp_demo_extra".to_owned())
    );
    assert_eq!(
        text(&call(&client, "mcp_demo_extra", json!({})).await),
        "extra ok"
    );
}
