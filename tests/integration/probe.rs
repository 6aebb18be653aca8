//! `probe` (the window's "Test" button) against a real server process: it lists the tools and
//! leaves no process behind.

use serde_json::json;

use crate::common::{BIN, Companion, tool_names};

#[tokio::test]
async fn probing_the_demo_server_lists_its_tools_and_leaves_nothing_running() {
    let entry = json!({"command": BIN, "args": ["demo-server"]});
    let report = mcp_companion::manage::probe::probe("demo", &entry, &Default::default())
        .await
        .expect("probe");
    let names: Vec<_> = report.tools.iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"mcp_demo_echo"), "{names:?}");
    // The demo server was forked by this test's thread (current-thread runtime); once the probe
    // returns it must be gone.
    let children = std::fs::read_to_string("/proc/thread-self/children").unwrap_or_default();
    assert!(children.trim().is_empty(), "children left: {children}");
}

#[tokio::test]
async fn test_shows_the_same_tools_as_the_saved_server() {
    // The demo server has resources, a template and prompts besides its tools: "Test" must
    // count them as the agent will get them, wrapped, with the same names.
    let entry = json!({"command": BIN, "args": ["demo-server"], "enabledTools": ["*"]});
    let report = mcp_companion::manage::probe::probe("demo", &entry, &Default::default())
        .await
        .expect("probe");
    let probed: Vec<String> = report.tools.iter().map(|t| t.name.clone()).collect();
    let c = Companion::start(json!({ "mcpServers": { "demo": entry } }));
    c.settled().await;
    let served = tool_names(&c.client().await).await;
    assert_eq!(probed, served);
}
