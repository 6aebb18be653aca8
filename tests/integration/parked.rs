//! A 2025-era server's requests toward a 2026-07-28 agent: server-everything (which speaks the
//! `initialize` era) sends `elicitation/create` or `sampling/createMessage` during a call; the
//! companion parks the call and answers the agent with an `InputRequiredResult` whose
//! `requestState` it signed. Proved with the Python SDK 2.x in 2026-07-28 mode (its
//! `Client.call_tool` answers the rounds with its callbacks) and on the raw wire, where a
//! changed, foreign, replayed or expired `requestState` is refused and delivers nothing. A
//! 2026-07-28 server's own `InputRequiredResult` (the demo's `confirm`) reaches such an agent the
//! same way, its `requestState` kept by the companion.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::asking::{asked_each, asking_agent};
use crate::common::{Companion, agent_call, everything_js, peers_dir, python_sdk2};
use crate::raw::RawAgent;

const ELICIT: &str = "mcp_everything_trigger-elicitation-request";

fn everything(peers: &Path, tool_timeout: u64) -> Value {
    json!({ "mcpServers": { "everything": {
        "command": "node",
        "args": [everything_js(peers).display().to_string(), "stdio"],
        "toolTimeout": tool_timeout,
    } } })
}

/// A 2026-07-28 `tools/call` of `name` (id `id`) from an agent that declared elicitation,
/// with `extra` merged into its params; the response.
async fn call(agent: &mut RawAgent, id: u64, name: &str, extra: Value) -> Value {
    let mut params = json!({ "name": name, "arguments": {}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "raw-2026", "version": "0" },
        "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} }
    } });
    if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
        params.extend(extra);
    }
    agent.request(id, "tools/call", params).await.0
}

/// The only key of an `InputRequiredResult`'s `inputRequests`, and its `requestState`.
fn asked(response: &Value) -> (String, String) {
    let result = &response["result"];
    assert_eq!(result["resultType"], json!("input_required"), "{response}");
    let requests = result["inputRequests"].as_object().expect("inputRequests");
    assert_eq!(requests.len(), 1, "{response}");
    let (key, request) = requests.iter().next().expect("one request");
    assert_eq!(request["method"], json!("elicitation/create"), "{response}");
    let state = result["requestState"].as_str().expect("requestState");
    (key.clone(), state.to_owned())
}

fn answer(key: &str, name: &str, state: &str) -> Value {
    json!({
        "inputResponses": { key: { "action": "accept", "content": { "name": name } } },
        "requestState": state,
    })
}

fn refused(response: &Value, why: &str) {
    assert_eq!(response["error"]["code"], json!(-32602), "{response}");
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(why), "{why:?} in {response}");
}

#[tokio::test]
async fn a_2026_sdk_agent_answers_a_2025_servers_elicitation_and_sampling_in_rounds() {
    let Some(peers) = peers_dir() else { return };
    let c = Companion::start(everything(&peers, 60));
    c.settled().await;
    let args = [
        "--mode",
        "2026-07-28",
        "--elicit",
        r#"{"name":"Grace Hopper","check":true}"#,
        "--sample",
        "forty-two",
        "--call",
        ELICIT,
        "{}",
        "--call",
        "mcp_everything_trigger-sampling-request",
        r#"{"prompt":"ping","maxTokens":20}"#,
    ];
    let python = python_sdk2(&peers);
    let run = asking_agent(&python, &c, &args, Duration::from_secs(90)).await;
    assert_eq!(run["exit"], json!(0), "{run:#}");
    assert_eq!(run["protocolVersion"], json!("2026-07-28"), "{run:#}");
    assert_eq!(
        asked_each(&run, "method"),
        ["elicitation/create", "sampling/createMessage"],
        "{run:#}"
    );
    let elicited = agent_call(&run, ELICIT).to_string();
    assert!(elicited.contains("Name: Grace Hopper"), "{run:#}");
    let sampled = agent_call(&run, "mcp_everything_trigger-sampling-request").to_string();
    assert!(
        sampled.contains("forty-two") && sampled.contains("test-model"),
        "{run:#}"
    );
}

#[tokio::test]
async fn a_request_state_is_verified_before_any_answer_is_delivered() {
    let Some(peers) = peers_dir() else { return };
    let c = Companion::start(everything(&peers, 60));
    c.settled().await;
    let mut agent = RawAgent::connect_only(&c.socket).await;
    let (key, state) = asked(&call(&mut agent, 1, ELICIT, json!({})).await);

    // One character of the signed payload changed.
    let mut tampered: Vec<char> = state.chars().collect();
    let at = "mcs1.".len() + 3;
    tampered[at] = if tampered[at] == 'A' { 'B' } else { 'A' };
    let tampered: String = tampered.into_iter().collect();
    let wrong = [
        (
            answer(&key, "Tampered", &tampered),
            ELICIT,
            "signature does not verify",
        ),
        (
            answer(&key, "Tampered", "made-up"),
            ELICIT,
            "not a requestState this companion issued",
        ),
        (
            {
                let mut a = answer(&key, "Tampered", &state);
                a["arguments"] = json!({ "other": 1 });
                a
            },
            ELICIT,
            "another tool, prompt or resource",
        ),
        (
            answer(&key, "Tampered", &state),
            "mcp_everything_echo",
            "another tool, prompt or resource",
        ),
        (
            json!({ "inputResponses": {}, "requestState": state }),
            ELICIT,
            "no answer to",
        ),
        (
            json!({ "inputResponses": { key.clone(): { "roots": [] } }, "requestState": state }),
            ELICIT,
            "is not a valid elicitation/create result",
        ),
    ];
    for (id, (extra, tool, why)) in (2..).zip(wrong) {
        refused(&call(&mut agent, id, tool, extra).await, why);
    }
    // Another agent session cannot use it.
    let mut other = RawAgent::connect_only(&c.socket).await;
    refused(
        &call(&mut other, 1, ELICIT, answer(&key, "Tampered", &state)).await,
        "another agent session",
    );

    // The genuine answer is the one the server hears: none of the refused ones reached it.
    let done = call(&mut agent, 20, ELICIT, answer(&key, "Genuine", &state)).await;
    assert_eq!(done["result"]["resultType"], json!("complete"), "{done}");
    let text = done["result"]["content"].to_string();
    assert!(text.contains("Name: Genuine"), "{done}");
    assert!(!text.contains("Tampered"), "{done}");
    // A state is good for one retry.
    refused(
        &call(&mut agent, 21, ELICIT, answer(&key, "Again", &state)).await,
        "already resumed",
    );
}

#[tokio::test]
async fn an_expired_request_state_is_refused_and_its_call_cancelled_upstream() {
    let Some(peers) = peers_dir() else { return };
    // The state lives as long as the server's request may wait: the entry's toolTimeout.
    let c = Companion::start(everything(&peers, 2));
    c.settled().await;
    let mut agent = RawAgent::connect_only(&c.socket).await;
    let asked_at = std::time::Instant::now();
    let (key, state) = asked(&call(&mut agent, 1, ELICIT, json!({})).await);
    // Past the expiry: the time has to pass, however fast the machine.
    let expired = asked_at + Duration::from_millis(2_500);
    tokio::time::sleep(expired.saturating_duration_since(std::time::Instant::now())).await;
    refused(
        &call(&mut agent, 2, ELICIT, answer(&key, "Late", &state)).await,
        "expired",
    );
    // The parked call was dropped and cancelled upstream; the server still serves calls.
    assert!(
        crate::common::eventually(Duration::from_secs(30), || c
            .log()
            .contains("did not come back with the input"))
        .await,
        "{}",
        c.log()
    );
    let echo = call(
        &mut agent,
        3,
        "mcp_everything_echo",
        json!({ "arguments": { "message": "still here" } }),
    )
    .await;
    assert!(
        echo["result"]["content"].to_string().contains("still here"),
        "{echo}"
    );
}

#[tokio::test]
async fn a_2026_servers_request_for_input_reaches_a_2026_agent_under_the_companions_state() {
    let c = Companion::start(json!({ "mcpServers": {
        "modern": crate::common::demo(&["--stateless"]),
    } }));
    c.settled().await;
    let mut agent = RawAgent::connect_only(&c.socket).await;
    let first = call(&mut agent, 1, "mcp_modern_confirm", json!({})).await;
    let (key, state) = asked(&first);
    assert_eq!(
        first["result"]["inputRequests"][&key]["params"]["message"],
        json!("Go ahead?"),
        "{first}"
    );
    // The server's own state stays with the companion; the agent holds the companion's.
    assert!(
        state.starts_with("mcs1.") && !first.to_string().contains("demo-confirm-1"),
        "{first}"
    );
    let done = call(
        &mut agent,
        2,
        "mcp_modern_confirm",
        json!({
            "inputResponses": { key: { "action": "accept", "content": { "ok": true } } },
            "requestState": state,
        }),
    )
    .await;
    assert_eq!(
        done["result"]["content"][0]["text"],
        json!("confirm: accept (state kept)"),
        "{done}"
    );
}

/// How many times the demo server's log says a sleep was cancelled.
fn sleeps_cancelled(c: &Companion) -> usize {
    let logs = String::from_utf8_lossy(&c.cli(&["logs", "demo"]).stdout).into_owned();
    logs.matches("sleep cancelled by the client").count()
}

#[tokio::test]
async fn a_2026_agents_call_is_cancelled_upstream_when_it_cancels_or_leaves() {
    let mut entry = crate::common::demo(&[]);
    entry["env"] = json!({ "RUST_LOG": "info" });
    // Longer than the waits below: only a cancellation ends the sleep in time.
    entry["toolTimeout"] = json!(300);
    let c = Companion::start(json!({ "mcpServers": { "demo": entry } }));
    c.settled().await;
    let sleep = |id: u64| {
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "mcp_demo_sleep", "arguments": { "seconds": 200 }, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": { "name": "raw-2026", "version": "0" },
                "io.modelcontextprotocol/clientCapabilities": {}
            } } })
    };
    let mut cancelling = RawAgent::connect_only(&c.socket).await;
    cancelling.send(&sleep(1)).await;
    // A round trip after the call: the companion has read it.
    let echo = call(
        &mut cancelling,
        2,
        "mcp_demo_echo",
        json!({ "arguments": { "message": "x" } }),
    )
    .await;
    assert!(echo["result"].is_object(), "{echo}");
    cancelling
        .send(
            &json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": { "requestId": 1, "reason": "test" } }),
        )
        .await;
    assert!(
        crate::common::eventually(Duration::from_secs(30), || sleeps_cancelled(&c) >= 1).await,
        "the cancelled call went on upstream"
    );

    let mut leaving = RawAgent::connect_only(&c.socket).await;
    leaving.send(&sleep(1)).await;
    let echo = call(
        &mut leaving,
        2,
        "mcp_demo_echo",
        json!({ "arguments": { "message": "x" } }),
    )
    .await;
    assert!(echo["result"].is_object(), "{echo}");
    drop(leaving);
    assert!(
        crate::common::eventually(Duration::from_secs(30), || sleeps_cancelled(&c) >= 2).await,
        "the departed agent's call went on upstream"
    );
}
