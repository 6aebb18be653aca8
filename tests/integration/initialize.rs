//! Proves what `initialize` gets, on the socket and through `mcp-companion bridge`: an answer
//! that carries only what the negotiated protocol version defines (`tasks` from 2025-11-25,
//! `completions` from 2025-03-26), and one `initialize` per connection: a second one, or one
//! after 2026-07-28 requests, gets -32600 and changes nothing, while a new connection starts a
//! new session.

use serde_json::{Value, json};

use crate::common::{CallPath, Companion, demo, everything_js, on_both_paths, peers_dir};
use crate::raw::{RawAgent, Via};

fn initialize(id: u64, version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "init-test", "version": "0"}}})
}

/// The `initialize` answer for `version`, on a new connection.
async fn answer_on(c: &Companion, via: Via, version: &str) -> Value {
    let mut agent = RawAgent::via(&c.socket, via).await;
    agent.send(&initialize(0, version)).await;
    agent.until_response(&json!(0)).await.0
}

/// server-everything has tools that take tasks and offers completions: the companion declares
/// both, each only to the versions that define it.
async fn each_version_gets_only_what_it_defines(via: Via) {
    let Some(peers) = peers_dir() else { return };
    let js = everything_js(&peers).display().to_string();
    let c = Companion::start(
        json!({ "mcpServers": { "everything": { "command": "node", "args": [js, "stdio"] } } }),
    );
    c.settled().await;
    for (version, tasks, completions) in [
        ("2024-11-05", false, false),
        ("2025-03-26", false, true),
        ("2025-06-18", false, true),
        ("2025-11-25", true, true),
    ] {
        let answer = answer_on(&c, via, version).await;
        let result = &answer["result"];
        assert_eq!(result["protocolVersion"], version, "{answer}");
        let caps = &result["capabilities"];
        assert_eq!(caps.get("tasks").is_some(), tasks, "{version}: {answer}");
        assert_eq!(
            caps.get("completions").is_some(),
            completions,
            "{version}: {answer}"
        );
        assert!(
            caps.get("extensions").is_none() && caps.get("experimental").is_none(),
            "{version}: {answer}"
        );
        // What each of them defines is still there.
        assert!(
            caps["tools"].is_object() && caps["prompts"].is_object(),
            "{answer}"
        );
        assert!(caps["resources"]["subscribe"] == true, "{answer}");
        let info = result["serverInfo"].as_object().expect("serverInfo");
        let mut keys: Vec<&str> = info.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["name", "version"], "{answer}");
    }
}

#[tokio::test]
async fn each_version_gets_only_what_it_defines_on_the_socket() {
    each_version_gets_only_what_it_defines(Via::Socket).await;
}

#[tokio::test]
async fn each_version_gets_only_what_it_defines_through_bridge() {
    each_version_gets_only_what_it_defines(Via::Bridge).await;
}

/// A second `initialize` is refused, once, and the session keeps its version: a 2026-07-28 one
/// would otherwise have turned it into a session of the other era.
async fn a_second_initialize_is_refused(path: CallPath, via: Via) {
    let c = Companion::start_on(json!({ "mcpServers": { "demo": demo(&[]) } }), path);
    c.settled().await;
    let mut agent = RawAgent::via(&c.socket, via).await;
    agent.handshake().await;
    for (id, version) in [(1, "2025-06-18"), (2, "2024-11-05"), (3, "2026-07-28")] {
        agent.send(&initialize(id, version)).await;
        let (refusal, _) = agent.until_response(&json!(id)).await;
        assert_eq!(refusal["error"]["code"], -32600, "{refusal}");
        let message = refusal["error"]["message"].as_str().expect("message");
        assert!(
            message.contains("already initialized (protocol version 2025-06-18)")
                && message.contains("open a new connection"),
            "{message}"
        );
    }
    // Still the 2025-06-18 session: a bare call (no 2026-07-28 `_meta`) is served, and no
    // second answer to a refused `initialize` came.
    let (call, before) = agent
        .request(
            4,
            "tools/call",
            json!({"name": "mcp_demo_echo", "arguments": {"message": "same session"}}),
        )
        .await;
    assert_eq!(
        call["result"]["content"][0]["text"], "same session",
        "{call}"
    );
    assert!(call["result"].get("resultType").is_none(), "{call}");
    assert!(before.iter().all(|m| m.get("id").is_none()), "{before:?}");
    // A new connection is a new session: it initializes.
    let mut again = RawAgent::via(&c.socket, via).await;
    again.handshake_on("2025-11-25").await;
}

async fn second_on_the_socket(path: CallPath) {
    a_second_initialize_is_refused(path, Via::Socket).await;
}

async fn second_through_bridge(path: CallPath) {
    a_second_initialize_is_refused(path, Via::Bridge).await;
}

on_both_paths!(a_second_initialize_on_the_socket, second_on_the_socket);
on_both_paths!(a_second_initialize_through_bridge, second_through_bridge);

/// A connection whose session began with 2026-07-28 requests has no `initialize`.
#[tokio::test]
async fn an_initialize_after_2026_requests_is_refused() {
    let c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    c.settled().await;
    let mut agent = RawAgent::connect_only(&c.socket).await;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "raw-2026", "version": "0" },
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let list = agent
        .request(1, "tools/list", json!({ "_meta": meta.clone() }))
        .await
        .0;
    assert!(list["result"]["tools"].is_array(), "{list}");
    agent.send(&initialize(2, "2025-11-25")).await;
    let refusal = agent.until_response(&json!(2)).await.0;
    assert_eq!(refusal["error"]["code"], -32600, "{refusal}");
    let message = refusal["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("began with 2026-07-28 requests"),
        "{message}"
    );
    // Still a 2026-07-28 session.
    let call = agent
        .request(
            3,
            "tools/call",
            json!({ "name": "mcp_demo_echo", "arguments": { "message": "modern" }, "_meta": meta }),
        )
        .await
        .0;
    assert_eq!(call["result"]["resultType"], "complete", "{call}");
}
