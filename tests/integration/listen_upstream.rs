//! A server that speaks only MCP 2026-07-28 tells of changes only on a `subscriptions/listen`
//! stream its client opened: the demo server with `--stateless` (rmcp), whose `toggle_extra`
//! announces a new tool and whose `touch` announces a resource update on the streams that
//! asked. The companion keeps one stream open to it, so an agent's `tools/list` follows the
//! change, and an agent's `resources/subscribe` is honoured.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Companion, auto_approved, demo};
use crate::raw::RawAgent;

const HELLO: &str = "demo://static/hello";

fn modern() -> Companion {
    Companion::start(json!({ "mcpServers": {
        "modern": auto_approved(demo(&["--stateless"])),
    } }))
}

/// A request from an `initialize`-era agent; the response and what came before it.
async fn ask(agent: &mut RawAgent, id: u64, method: &str, params: Value) -> (Value, Vec<Value>) {
    agent.request(id, method, params).await
}

async fn tool_names(agent: &mut RawAgent, id: u64) -> Vec<String> {
    let (listed, _) = ask(agent, id, "tools/list", json!({})).await;
    listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn a_2026_servers_new_tool_reaches_an_agents_tools_list_after_its_notification() {
    let c = modern();
    c.settled().await;
    let mut agent = RawAgent::connect(&c.socket).await;
    assert!(
        !tool_names(&mut agent, 1)
            .await
            .contains(&"mcp_modern_extra".to_owned()),
        "extra is off at start"
    );
    let (toggled, _) = ask(
        &mut agent,
        2,
        "tools/call",
        json!({ "name": "mcp_modern_toggle_extra", "arguments": {} }),
    )
    .await;
    assert_eq!(
        toggled["result"]["content"][0]["text"],
        json!("extra added"),
        "{toggled}"
    );
    // The server told its listen stream; the companion re-lists and tells the agent.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut announced = false;
    while !announced && Instant::now() < deadline {
        if let Some(message) = agent.recv_within(Duration::from_millis(500)).await {
            announced = message["method"] == "notifications/tools/list_changed";
        }
    }
    assert!(
        announced,
        "no notifications/tools/list_changed reached the agent"
    );
    assert!(
        tool_names(&mut agent, 3)
            .await
            .contains(&"mcp_modern_extra".to_owned()),
        "the new tool is listed"
    );
}

#[tokio::test]
async fn a_2026_servers_resource_update_reaches_the_agent_that_subscribed() {
    let c = modern();
    c.settled().await;
    let mut agent = RawAgent::connect(&c.socket).await;
    let (subscribed, _) = ask(
        &mut agent,
        1,
        "resources/subscribe",
        json!({ "uri": HELLO }),
    )
    .await;
    assert!(subscribed["result"].is_object(), "{subscribed}");
    // Answered once the companion's stream to the server asks for the URI: the update is
    // heard at once.
    let (touched, before) = ask(
        &mut agent,
        2,
        "tools/call",
        json!({ "name": "mcp_modern_touch", "arguments": { "uri": HELLO } }),
    )
    .await;
    assert_eq!(
        touched["result"]["content"][0]["text"],
        json!(format!("{HELLO} updated on 1 stream(s)")),
        "{touched}"
    );
    let mut heard: Vec<Value> = before;
    let deadline = Instant::now() + Duration::from_secs(30);
    while !heard
        .iter()
        .any(|m| m["method"] == "notifications/resources/updated")
        && Instant::now() < deadline
    {
        if let Some(message) = agent.recv_within(Duration::from_millis(500)).await {
            heard.push(message);
        }
    }
    let updated = heard
        .iter()
        .find(|m| m["method"] == "notifications/resources/updated")
        .unwrap_or_else(|| panic!("no update reached the agent: {heard:?}"));
    assert_eq!(updated["params"]["uri"], json!(HELLO), "{updated}");

    // Unsubscribed: the stream no longer asks for the URI.
    let (left, _) = ask(
        &mut agent,
        3,
        "resources/unsubscribe",
        json!({ "uri": HELLO }),
    )
    .await;
    assert!(left["result"].is_object(), "{left}");
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut streams = String::new();
    for id in 4.. {
        let (touched, _) = ask(
            &mut agent,
            id,
            "tools/call",
            json!({ "name": "mcp_modern_touch", "arguments": { "uri": HELLO } }),
        )
        .await;
        streams = touched["result"]["content"][0]["text"].to_string();
        if streams.contains("on 0 stream(s)") || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(streams.contains("on 0 stream(s)"), "{streams}");
}
