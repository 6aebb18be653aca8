//! Proves that a server is judged by what it declared and said: a server declaring only
//! `prompts` or only `resources` (the Python SDK's low-level server, which answers `tools/list`
//! with -32601) runs and serves exactly those; a server declaring nothing still gets its tools
//! listed; and a server that refuses `initialize` and then exits is reported with its own error.

use std::path::PathBuf;

use serde_json::json;

use crate::common::{Companion, call, peers_dir, python_sdk2, text, tool_names};

fn peer_script(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers")
        .join(name)
        .display()
        .to_string()
}

#[tokio::test]
async fn servers_declaring_only_prompts_or_only_resources_run_and_serve_them() {
    let Some(peers) = peers_dir() else { return };
    let python = python_sdk2(&peers).display().to_string();
    let script = peer_script("declared_server.py");
    let c = Companion::start(json!({ "mcpServers": {
        "p": { "command": python, "args": [script, "--only", "prompts"] },
        "r": { "command": python, "args": [script, "--only", "resources"] },
    } }));
    for s in c.settled().await {
        assert_eq!(s.state.as_str(), "running", "{s:?}\n{}", c.log());
        assert_eq!(s.restarts, 0, "{s:?}");
    }
    let client = c.client().await;
    let mut names = tool_names(&client).await;
    names.sort();
    assert_eq!(
        names,
        [
            "mcp_p_prompt_greet",
            "mcp_r_resource_hello",
            "mcp_r_resource_named"
        ]
    );
    let greet = call(&client, "mcp_p_prompt_greet", json!({"name": "Ada"})).await;
    assert_eq!(text(&greet), "user: Please greet Ada.");
    let named = call(&client, "mcp_r_resource_named", json!({"name": "x"})).await;
    assert_eq!(text(&named), "contents of test://only/x");
    let log = c.log();
    assert!(
        !log.contains("listing failed"),
        "a -32601 was treated as a failure:\n{log}"
    );
}

#[tokio::test]
async fn a_server_declaring_nothing_still_gets_its_tools_listed() {
    let c = Companion::start(json!({ "mcpServers": {
        "raw": { "command": "python3", "args": [peer_script("raw_server.py"), "--declare-nothing"] },
    } }));
    c.running().await;
    let client = c.client().await;
    assert_eq!(
        tool_names(&client).await,
        [
            "mcp_raw_echo",
            "mcp_raw_bare",
            "mcp_raw_typeless",
            "mcp_raw_stringy"
        ]
    );
}

#[tokio::test]
async fn a_refused_initialize_is_reported_with_the_servers_own_error() {
    let c = Companion::start(json!({ "mcpServers": {
        "old": { "command": "python3", "args": [peer_script("raw_server.py"), "--refuse-initialize"] },
    } }));
    let servers = c.settled().await;
    let error = servers[0].last_error.clone().unwrap_or_default();
    assert_ne!(servers[0].state.as_str(), "running", "{servers:?}");
    assert!(
        error.contains("Unsupported protocol version: 2025-")
            && error.contains("JSON-RPC error -32602")
            && error.contains("2099-01-01"),
        "{error}"
    );
    assert!(!error.contains("exited"), "{error}");
}
