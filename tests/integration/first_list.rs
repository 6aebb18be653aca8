//! The first listing per agent: an agent known to re-read the list on `list_changed` (Claude
//! Code's `clientInfo.name`) gets `initialize` and the ready servers' tools at once while a
//! slow server is still starting, then `notifications/tools/list_changed` and the slow one's
//! tools; an agent that reads the list once (nanobot's name) is still held until the slow
//! server has started; `firstListHold` overrides either way.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Companion, demo};
use crate::raw::RawAgent;

/// `initialize` as `name`, `initialized`, `tools/list`: the listed names.
async fn first_listing(c: &Companion, name: &str) -> (RawAgent, Vec<String>) {
    let mut agent = RawAgent::connect_only(&c.socket).await;
    agent
        .send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": name, "version": "0"}}}),
        )
        .await;
    let (init, _) = agent.until_response(&json!(0)).await;
    assert!(init["result"]["serverInfo"].is_object(), "{init}");
    agent
        .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let names = list(&mut agent, 1).await;
    (agent, names)
}

async fn list(agent: &mut RawAgent, id: u64) -> Vec<String> {
    agent
        .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}))
        .await;
    let (answer, _) = agent.until_response(&json!(id)).await;
    answer["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"))
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

/// A companion with `fast` ready at once and `slow` answering after 20 s; the hold is long
/// (60 s), so a held agent's first listing includes `slow`.
async fn slow_start(extra: Value) -> Companion {
    let mut config = json!({
        "firstListTimeout": 60,
        "mcpServers": {
            "fast": demo(&[]),
            "slow": demo(&["--start-delay-ms", "20000"]),
        }
    });
    if let (Some(c), Some(e)) = (config.as_object_mut(), extra.as_object()) {
        c.extend(e.clone());
    }
    let c = Companion::start(config);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while c.server("fast").await.state.as_str() != "running" {
        assert!(std::time::Instant::now() < deadline, "{}", c.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    c
}

fn has(names: &[String], server: &str) -> bool {
    names
        .iter()
        .any(|n| n.starts_with(&format!("mcp_{server}_")))
}

#[tokio::test]
async fn claude_code_gets_the_ready_tools_at_once_and_the_slow_ones_with_list_changed() {
    let c = slow_start(json!({})).await;
    let (mut agent, names) = first_listing(&c, "claude-code").await;
    assert!(has(&names, "fast"), "{names:?}");
    // Not held: a held listing would have waited for `slow` (it settles well within the hold).
    assert!(!has(&names, "slow"), "{names:?}");
    assert_eq!(c.server("slow").await.state.as_str(), "starting");
    // Then `slow` arrives and the agent is told.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let msg = agent
            .recv_within(left)
            .await
            .expect("list_changed within 60 s");
        if msg["method"] == "notifications/tools/list_changed" {
            let names = list(&mut agent, 2).await;
            if has(&names, "slow") {
                break;
            }
        }
    }
}

#[tokio::test]
async fn an_agent_that_reads_the_list_once_is_still_held_until_the_slow_server_started() {
    let c = slow_start(json!({})).await;
    let (_agent, names) = first_listing(&c, "nanobot").await;
    assert!(has(&names, "fast") && has(&names, "slow"), "{names:?}");
}

#[tokio::test]
async fn first_list_hold_in_the_config_overrides_the_built_in_rule() {
    let c = slow_start(json!({ "firstListHold": { "nanobot": false, "Claude-Code": true } })).await;
    let (_a, names) = first_listing(&c, "nanobot").await;
    assert!(has(&names, "fast") && !has(&names, "slow"), "{names:?}");
    let (_b, names) = first_listing(&c, "claude-code").await;
    assert!(has(&names, "slow"), "{names:?}");
}

/// Claude Code 2.1 speaks MCP 2026-07-28: no `initialize`, its name only in the request's
/// `_meta`; its first listing is answered at once all the same.
#[tokio::test]
async fn claude_code_on_2026_07_28_gets_the_ready_tools_at_once() {
    let c = slow_start(json!({})).await;
    let mut agent = RawAgent::connect_only(&c.socket).await;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "claude-code", "version": "2.1" },
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    agent
        .send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}),
        )
        .await;
    let (answer, _) = agent.until_response(&json!(1)).await;
    let names: Vec<String> = answer["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"))
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    assert!(has(&names, "fast") && !has(&names, "slow"), "{names:?}");
}

/// An agent answered at once still waits a moment for servers that start in one (those of a
/// companion the bridge has just started): Codex does not re-read the list, so what its first
/// listing has is all it gets.
#[tokio::test]
async fn an_agent_answered_at_once_gets_the_servers_that_start_within_a_moment() {
    let c =
        Companion::start(json!({ "mcpServers": { "quick": demo(&["--start-delay-ms", "300"]) } }));
    let (_agent, names) = first_listing(&c, "codex-mcp-client").await;
    assert!(has(&names, "quick"), "{names:?}");
}
