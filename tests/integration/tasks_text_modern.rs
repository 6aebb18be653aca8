//! What agents are told of the tasks of a 2026-07-28 server (the demo server with
//! `--stateless`, whose `slow_task` names its task id in its status message and, with
//! `fail: true`, in its error): the server's ids never reach an agent of either era, and an
//! `initialize`-era agent's `tasks/result` waiting when the server restarts gets the
//! documented reason.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Companion, demo};
use crate::raw::RawAgent;

const SLOW: &str = "mcp_modern_slow_task";

async fn companion() -> Companion {
    let c = Companion::start(json!({ "mcpServers": { "modern": demo(&["--stateless"]) } }));
    c.running().await;
    c
}

async fn request(agent: &mut RawAgent, id: u64, method: &str, params: Value) -> Value {
    agent.request(id, method, params).await.0
}

/// `method` with a 2026-07-28 `_meta` declaring the Tasks extension.
async fn modern(agent: &mut RawAgent, id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "raw-2026", "version": "0" },
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": { "io.modelcontextprotocol/tasks": {} } },
    });
    request(agent, id, method, params).await
}

/// An `initialize`-era agent that can answer `elicitation/create`.
async fn legacy_agent(c: &Companion) -> RawAgent {
    let mut agent = RawAgent::connect_only(&c.socket).await;
    let init = json!({ "protocolVersion": "2025-11-25", "capabilities": { "elicitation": {} },
        "clientInfo": { "name": "tasks-text", "version": "1" } });
    request(&mut agent, 0, "initialize", init).await;
    (agent)
        .send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
        .await;
    agent
}

/// The server's id of the agent's task `served` (`modern:<id>`).
fn upstream_of(served: &str) -> String {
    let id = served.strip_prefix("modern:");
    id.unwrap_or_else(|| panic!("namespaced: {served}"))
        .to_owned()
}

/// Asserts that `text` names the agent's id `served` and never the server's own.
fn names_the_agent_s_id(text: &Value, served: &str, whole: &Value) {
    let text = text.as_str().unwrap_or_else(|| panic!("no text: {whole}"));
    assert!(text.contains(served), "{served} not named: {whole}");
    let upstream = upstream_of(served);
    assert!(
        !text.replace(served, "").contains(&upstream),
        "the server's id {upstream} leaked: {whole}"
    );
}

#[tokio::test]
async fn a_2026_agent_never_sees_a_2026_server_s_task_id() {
    let c = companion().await;
    let mut agent = RawAgent::connect_only(&c.socket).await;
    let call = json!({ "name": SLOW, "arguments": { "ms": 600_000, "text": "t" } });
    let created = modern(&mut agent, 1, "tools/call", call).await;
    let working = created["result"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let got = modern(&mut agent, 2, "tasks/get", json!({ "taskId": working })).await;
    names_the_agent_s_id(&got["result"]["statusMessage"], &working, &got);

    let call = json!({ "name": SLOW, "arguments": { "ms": 10, "text": "t", "fail": true } });
    let created = modern(&mut agent, 3, "tools/call", call).await;
    let failed = created["result"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut next = 4;
    let got = loop {
        let got = modern(&mut agent, next, "tasks/get", json!({ "taskId": failed })).await;
        if got["result"]["status"] == "failed" {
            break got;
        }
        assert!(Instant::now() < deadline, "not failed: {got}");
        next += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    names_the_agent_s_id(&got["result"]["error"]["message"], &failed, &got);
    assert_eq!(
        got["result"]["error"]["data"]["taskId"],
        json!(failed),
        "{got}"
    );
}

#[tokio::test]
async fn an_initialize_era_agent_never_sees_a_2026_server_s_task_id() {
    let c = companion().await;
    let mut agent = legacy_agent(&c).await;
    let call = json!({ "name": SLOW, "arguments": { "ms": 600_000, "text": "t" }, "task": {} });
    let created = request(&mut agent, 1, "tools/call", call).await;
    let working = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let got = request(&mut agent, 2, "tasks/get", json!({ "taskId": working })).await;
    names_the_agent_s_id(&got["result"]["statusMessage"], &working, &got);
    let listed = request(&mut agent, 3, "tasks/list", json!({})).await;
    names_the_agent_s_id(
        &listed["result"]["tasks"][0]["statusMessage"],
        &working,
        &listed,
    );

    let call = json!({ "name": SLOW, "arguments": { "ms": 10, "text": "t", "fail": true },
        "task": {} });
    let created = request(&mut agent, 4, "tools/call", call).await;
    let failed = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let result = request(&mut agent, 5, "tasks/result", json!({ "taskId": failed })).await;
    assert_eq!(result["error"]["code"], json!(-32603), "{result}");
    names_the_agent_s_id(&result["error"]["message"], &failed, &result);
    assert_eq!(result["error"]["data"]["taskId"], json!(failed), "{result}");
}

/// The task asks a question during the agent's `tasks/result`, so the `tasks/result` is
/// waiting (on the agent's answer) when the server restarts.
#[tokio::test]
async fn a_tasks_result_waiting_on_a_2026_server_that_restarts_gets_the_documented_reason() {
    let c = companion().await;
    let mut agent = legacy_agent(&c).await;
    let call = json!({ "name": SLOW, "arguments": { "ms": 10, "text": "t", "ask": true },
        "task": {} });
    let created = request(&mut agent, 1, "tools/call", call).await;
    let served = created["result"]["task"]["taskId"].clone();
    (agent)
        .send(
            &json!({ "jsonrpc": "2.0", "id": 2, "method": "tasks/result",
            "params": { "taskId": served } }),
        )
        .await;
    let question = loop {
        let message = agent.recv().await;
        assert_ne!(
            message["id"],
            json!(2),
            "answered before the restart: {message}"
        );
        if message["method"] == "elicitation/create" {
            break message;
        }
    };
    c.restart_process("modern").await;
    (agent)
        .send(&json!({ "jsonrpc": "2.0", "id": question["id"], "result": {
            "action": "accept", "content": { "name": "Ada" } } }))
        .await;
    let (result, _) = agent.until_response(&json!(2)).await;
    assert_eq!(result["error"]["code"], json!(-32603), "{result}");
    assert_eq!(
        result["error"]["message"],
        json!(format!(
            "task {served} has no result: the server \"modern\" restarted or stopped since the task was created; the task ended with its process"
        )),
        "{result}"
    );
}
