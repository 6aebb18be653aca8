//! `probe` (the window's "Test" button) against a real server process: it lists the tools and
//! leaves no process behind.

use serde_json::json;

use crate::common::BIN;

#[tokio::test]
async fn probing_the_demo_server_lists_its_tools_and_leaves_nothing_running() {
    let entry = json!({"command": BIN, "args": ["demo-server"]});
    let report = mcp_companion::manage::probe::probe("demo", &entry, &Default::default())
        .await
        .expect("probe");
    let names: Vec<_> = report.tools.iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"echo"), "{names:?}");
    assert!(report.other_capabilities > 0);
    // The demo server was forked by this test's thread (current-thread runtime); once the probe
    // returns it must be gone.
    let children = std::fs::read_to_string("/proc/thread-self/children").unwrap_or_default();
    assert!(children.trim().is_empty(), "children left: {children}");
}
