//! Proves the issue's acceptance with real third-party servers: one `serve` runs the npm
//! reference server (server-everything, Node), the PyPI `mcp-server-time` (Python SDK) and our
//! demo server side by side; all three reach `running`; their tools are listed under
//! `mcp_<server>_<tool>` (names with `-` included); calls pass through unchanged (text and image
//! blocks identical to what the upstream returns when called directly); SIGTERM leaves none of
//! their processes behind. Skips loudly when the peers are not installed (tests/peers/setup.sh).

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{
    Companion, agent_call, call, demo, eventually, everything_js, peers_dir, python_sdk2,
    run_agent, survivors, text, time_server, tool_names,
};

/// The config the issue asks for: everything + time + our demo server.
fn third_party_config(peers: &Path) -> Value {
    json!({ "mcpServers": {
        "everything": { "command": "node", "args": [everything_js(peers), "stdio"] },
        "time": { "command": time_server(peers), "args": ["--local-timezone", "UTC"] },
        "demo": demo(&[]),
    } })
}

/// Calls server-everything directly (no companion) through the Python SDK agent.
fn everything_direct(peers: &Path, home: &Path) -> Value {
    let js = everything_js(peers);
    let run = run_agent(
        &python_sdk2(peers),
        &[
            "--call",
            "echo",
            r#"{"message":"hi"}"#,
            "--call",
            "get-tiny-image",
            "{}",
            "--",
            "node",
            js.to_str().expect("utf-8 path"),
            "stdio",
        ],
        home,
        Duration::from_secs(60),
    );
    assert_eq!(
        run["exit"],
        json!(0),
        "direct call of server-everything: {run:#}"
    );
    run
}

#[tokio::test]
async fn everything_time_and_demo_run_side_by_side_and_pass_calls_through_unchanged() {
    let Some(peers) = peers_dir() else { return };
    let mut c = Companion::start(third_party_config(&peers));
    let servers = c.settled().await;
    for name in ["everything", "time", "demo"] {
        let s = servers
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no server {name}: {servers:?}"));
        assert_eq!(s.state.as_str(), "running", "{s:?}\n{}", c.log());
        assert!(s.tools > 0, "{s:?}");
    }
    let leaders: Vec<u32> = servers.iter().filter_map(|s| s.pid).collect();
    assert_eq!(leaders.len(), 3, "every server has a pid: {servers:?}");

    let client = c.client().await;
    let names = tool_names(&client).await;
    for expected in [
        "mcp_everything_echo",
        "mcp_everything_get-tiny-image",
        "mcp_everything_get-sum",
        "mcp_time_get_current_time",
        "mcp_time_convert_time",
        "mcp_demo_echo",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} missing from {names:?}"
        );
    }

    let direct = everything_direct(&peers, &c.home);

    let echo = call(&client, "mcp_everything_echo", json!({ "message": "hi" })).await;
    assert_ne!(echo.is_error, Some(true), "{echo:?}");
    assert_eq!(text(&echo), "Echo: hi");
    assert_eq!(
        serde_json::to_value(&echo.content).expect("json"),
        agent_call(&direct, "echo")["content"],
        "the companion returns exactly what server-everything returns directly"
    );

    let tiny = call(&client, "mcp_everything_get-tiny-image", json!({})).await;
    assert_ne!(tiny.is_error, Some(true), "{tiny:?}");
    let img = tiny
        .content
        .iter()
        .find_map(|b| b.as_image())
        .unwrap_or_else(|| panic!("an image block: {tiny:?}"));
    assert_eq!(img.mime_type, "image/png");
    assert!(!img.data.is_empty() && img.data.starts_with("iVBORw0KGgo"));
    assert_eq!(
        serde_json::to_value(&tiny.content).expect("json"),
        agent_call(&direct, "get-tiny-image")["content"],
        "text and image blocks unchanged"
    );

    let now = call(
        &client,
        "mcp_time_get_current_time",
        json!({ "timezone": "UTC" }),
    )
    .await;
    assert_ne!(now.is_error, Some(true), "{now:?}");
    let now_text = text(&now);
    assert!(
        now_text.contains("UTC") && now_text.contains("datetime"),
        "{now_text}"
    );
    let structured = now.structured_content.clone().expect("structuredContent");
    assert_eq!(structured["timezone"], json!("UTC"), "{structured}");
    assert!(
        structured["datetime"]
            .as_str()
            .is_some_and(|d| d.ends_with("+00:00")),
        "{structured}"
    );

    assert_eq!(
        text(&call(&client, "mcp_demo_echo", json!({ "message": "hi" })).await),
        "hi"
    );

    drop(client);
    let status = c.terminate(Duration::from_secs(30));
    assert!(status.success(), "{status:?}\n{}", c.log());
    let gone = eventually(Duration::from_secs(30), || survivors(&leaders).is_empty()).await;
    assert!(gone, "left behind: {:?}", survivors(&leaders));
}
