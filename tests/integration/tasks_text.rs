//! What agents are told of tasks, against a 2025-11-25 server whose words name its own task
//! ids (`tests/fixtures/tasks/talking_server.py`): a request without a `taskId` (or `name`) is
//! told which parameter is missing; the server's ids never reach an agent of either era, not in
//! a status message, a status notification, a `tasks/list`, nor in the server's errors; and a
//! `tasks/result` waiting when the server restarts gets the documented reason.

use serde_json::{Value, json};

use crate::common::Companion;
use crate::raw::RawAgent;

const TALK: &str = "mcp_talk_talk";

fn talking() -> Companion {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/tasks/talking_server.py"
    );
    Companion::start(
        json!({ "mcpServers": { "talk": { "command": "python3", "args": [script] } } }),
    )
}

async fn legacy_agent(c: &Companion) -> RawAgent {
    let mut agent = RawAgent::connect_only(&c.socket).await;
    agent.handshake_on("2025-11-25").await;
    agent
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

/// Asserts that `text` names the agent's id `served` and never the server's own `upstream`
/// (which `served` ends with).
fn names_the_agent_s_id(text: &Value, served: &str, upstream: &str, whole: &Value) {
    let text = text.as_str().unwrap_or_else(|| panic!("no text: {whole}"));
    assert!(text.contains(served), "{served} not named: {whole}");
    assert!(
        !text.replace(served, "").contains(upstream),
        "the server's id {upstream} leaked: {whole}"
    );
}

#[tokio::test]
async fn a_task_request_without_its_id_is_told_what_is_missing() {
    let c = talking();
    c.running().await;
    let mut agent = legacy_agent(&c).await;
    let mut id = 1;
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        for (params, message) in [
            (json!({}), "missing \"taskId\""),
            (
                json!({ "taskId": 7 }),
                "\"taskId\" must be a string, not a number",
            ),
        ] {
            let answer = request(&mut agent, id, method, params).await;
            assert_eq!(answer["error"]["code"], json!(-32602), "{method}: {answer}");
            assert_eq!(
                answer["error"]["message"],
                json!(message),
                "{method}: {answer}"
            );
            id += 1;
        }
    }
    let call = json!({ "arguments": {}, "task": {} });
    let answer = request(&mut agent, id, "tools/call", call).await;
    assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
    assert_eq!(
        answer["error"]["message"],
        json!("missing \"name\""),
        "{answer}"
    );
}

#[tokio::test]
async fn an_initialize_era_agent_never_sees_the_server_s_task_id() {
    let c = talking();
    c.running().await;
    let mut agent = legacy_agent(&c).await;
    let call = json!({ "name": TALK, "arguments": {}, "task": {} });
    let (created, mut heard) = agent.request(1, "tools/call", call).await;
    let task = &created["result"]["task"];
    let served = task["taskId"].as_str().unwrap_or_default().to_owned();
    assert_eq!(served, "talk:t-1", "{created}");
    names_the_agent_s_id(&task["statusMessage"], &served, "t-1", &created);
    // The status notification the server sends after its answer.
    let status = loop {
        let note = heard
            .iter()
            .find(|m| m["method"] == "notifications/tasks/status");
        if let Some(note) = note {
            break note.clone();
        }
        heard.push(agent.recv().await);
    };
    names_the_agent_s_id(&status["params"]["statusMessage"], &served, "t-1", &status);

    let got = request(&mut agent, 2, "tasks/get", json!({ "taskId": served })).await;
    names_the_agent_s_id(&got["result"]["statusMessage"], &served, "t-1", &got);
    let listed = request(&mut agent, 3, "tasks/list", json!({})).await;
    let first = &listed["result"]["tasks"][0];
    names_the_agent_s_id(&first["statusMessage"], &served, "t-1", &listed);
    let cancelled = request(&mut agent, 4, "tasks/cancel", json!({ "taskId": served })).await;
    names_the_agent_s_id(
        &cancelled["result"]["statusMessage"],
        &served,
        "t-1",
        &cancelled,
    );

    // The server's errors: the result of a cancelled task, a second cancel.
    let result = request(&mut agent, 5, "tasks/result", json!({ "taskId": served })).await;
    assert_eq!(result["error"]["code"], json!(-32603), "{result}");
    names_the_agent_s_id(&result["error"]["message"], &served, "t-1", &result);
    assert_eq!(result["error"]["data"]["taskId"], json!(served), "{result}");
    let again = request(&mut agent, 6, "tasks/cancel", json!({ "taskId": served })).await;
    assert_eq!(again["error"]["code"], json!(-32602), "{again}");
    names_the_agent_s_id(&again["error"]["message"], &served, "t-1", &again);

    // A failed task's result.
    let call = json!({ "name": TALK, "arguments": { "fail": true }, "task": {} });
    let created = request(&mut agent, 7, "tools/call", call).await;
    let failed = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let result = request(&mut agent, 8, "tasks/result", json!({ "taskId": failed })).await;
    names_the_agent_s_id(&result["error"]["message"], &failed, "t-2", &result);
}

#[tokio::test]
async fn a_2026_agent_never_sees_the_server_s_task_id() {
    let c = talking();
    c.running().await;
    let mut agent = RawAgent::connect_only(&c.socket).await;
    let call = json!({ "name": TALK, "arguments": {} });
    let created = modern(&mut agent, 1, "tools/call", call).await;
    assert_eq!(created["result"]["resultType"], json!("task"), "{created}");
    let served = created["result"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    names_the_agent_s_id(
        &created["result"]["statusMessage"],
        &served,
        "t-1",
        &created,
    );
    let got = modern(&mut agent, 2, "tasks/get", json!({ "taskId": served })).await;
    names_the_agent_s_id(&got["result"]["statusMessage"], &served, "t-1", &got);

    // A failed task carries the server's error for its result, and cannot be cancelled.
    let call = json!({ "name": TALK, "arguments": { "fail": true } });
    let created = modern(&mut agent, 3, "tools/call", call).await;
    let failed = created["result"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let got = modern(&mut agent, 4, "tasks/get", json!({ "taskId": failed })).await;
    assert_eq!(got["result"]["status"], json!("failed"), "{got}");
    names_the_agent_s_id(&got["result"]["statusMessage"], &failed, "t-2", &got);
    names_the_agent_s_id(&got["result"]["error"]["message"], &failed, "t-2", &got);
    assert_eq!(
        got["result"]["error"]["data"]["taskId"],
        json!(failed),
        "{got}"
    );
    let cancel = modern(&mut agent, 5, "tasks/cancel", json!({ "taskId": failed })).await;
    assert_eq!(cancel["error"]["code"], json!(-32602), "{cancel}");
    names_the_agent_s_id(&cancel["error"]["message"], &failed, "t-2", &cancel);
}

/// The server never answers `tasks/result` of a working task: it is waiting (the server's log
/// message says so) when the server restarts.
#[tokio::test]
async fn a_tasks_result_waiting_when_its_server_restarts_gets_the_documented_reason() {
    let c = talking();
    c.running().await;
    let mut agent = legacy_agent(&c).await;
    let call = json!({ "name": TALK, "arguments": {}, "task": {} });
    let created = request(&mut agent, 1, "tools/call", call).await;
    let served = created["result"]["task"]["taskId"].clone();
    (agent)
        .send(
            &json!({ "jsonrpc": "2.0", "id": 2, "method": "tasks/result",
            "params": { "taskId": served } }),
        )
        .await;
    loop {
        let message = agent.recv().await;
        assert_ne!(
            message["id"],
            json!(2),
            "answered before the restart: {message}"
        );
        if message["method"] == "notifications/message" {
            break;
        }
    }
    c.restart_process("talk").await;
    let (result, _) = agent.until_response(&json!(2)).await;
    assert_eq!(result["error"]["code"], json!(-32603), "{result}");
    assert_eq!(
        result["error"]["message"],
        json!(format!(
            "task {served} has no result: the server \"talk\" restarted or stopped since the task was created; the task ended with its process"
        )),
        "{result}"
    );
}
