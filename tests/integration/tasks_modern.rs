//! The 2026-07-28 Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) served to a
//! 2026-07-28 agent from server-everything, a 2025-11-25 server whose
//! `simulate-research-query` requires tasks: `server/discover` declares the extension (and an
//! `initialize` answer does not), a call declaring it gets a `CreateTaskResult` with a
//! namespaced id, `tasks/get` carries the result once the task has ended, `tasks/cancel` is
//! acknowledged, another agent does not reach the task, a task whose server restarted is
//! reported `failed` naming the server, and a task in `input_required` carries the server's
//! question, which `tasks/update` answers.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Companion, everything_js, peers_dir};
use crate::raw::RawAgent;

const RESEARCH: &str = "mcp_everything_simulate-research-query";
const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The 2026-07-28 `_meta` of a request; `tasks` says whether it declares the extension.
fn meta(tasks: bool) -> Value {
    let capabilities = if tasks {
        json!({ "extensions": { EXTENSION: {} }, "elicitation": {} })
    } else {
        json!({})
    };
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "raw-2026", "version": "0" },
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// `method` with `params` and the 2026-07-28 `_meta` (declaring the extension); the response.
async fn request(agent: &mut RawAgent, id: u64, method: &str, params: Value) -> Value {
    request_with(agent, id, method, params, true).await
}

async fn request_with(
    agent: &mut RawAgent,
    id: u64,
    method: &str,
    mut params: Value,
    tasks: bool,
) -> Value {
    params["_meta"] = meta(tasks);
    agent.request(id, method, params).await.0
}

async fn create(agent: &mut RawAgent, id: u64, topic: &str) -> String {
    let params = json!({ "name": RESEARCH, "arguments": { "topic": topic } });
    let created = request(agent, id, "tools/call", params).await;
    assert_eq!(created["result"]["resultType"], json!("task"), "{created}");
    assert_eq!(created["result"]["status"], json!("working"), "{created}");
    assert!(
        created["result"]
            .as_object()
            .is_some_and(|r| r.contains_key("ttlMs")),
        "{created}"
    );
    let id = created["result"]["taskId"].as_str();
    let id = id.unwrap_or_else(|| panic!("a task id: {created}"));
    assert!(id.starts_with("everything:"), "namespaced: {id}");
    id.to_owned()
}

#[tokio::test]
async fn a_2026_agent_gets_the_tasks_extension_of_a_2025_server() {
    let Some(peers) = peers_dir() else { return };
    let js = everything_js(&peers).display().to_string();
    let c = Companion::start(
        json!({ "mcpServers": { "everything": { "command": "node", "args": [js, "stdio"] } } }),
    );
    c.running().await;
    // Each era is told of its own Tasks.
    let mut agent = RawAgent::connect_only(&c.socket).await;
    let discovered = request(&mut agent, 1, "server/discover", json!({})).await;
    let caps = &discovered["result"]["capabilities"];
    assert_eq!(caps["extensions"][EXTENSION], json!({}), "{discovered}");
    assert!(
        caps.get("tasks").is_none() && caps.get("experimental").is_none(),
        "{discovered}"
    );
    let mut legacy = RawAgent::connect_only(&c.socket).await;
    (legacy)
        .send(
            &json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": { "name": "raw-2025", "version": "0" } } }),
        )
        .await;
    let init = legacy.until_response(&json!(0)).await.0;
    assert!(
        init["result"]["capabilities"]["tasks"].is_object(),
        "{init}"
    );
    assert!(
        init["result"]["capabilities"].get("extensions").is_none(),
        "{init}"
    );

    let task = create(&mut agent, 2, "modern").await;
    // Only the agent that created it reaches it, and only while declaring the extension.
    let mut other = RawAgent::connect_only(&c.socket).await;
    let foreign = request(&mut other, 1, "tasks/get", json!({ "taskId": task })).await;
    assert_eq!(foreign["error"]["code"], json!(-32602), "{foreign}");
    let undeclared =
        request_with(&mut agent, 3, "tasks/get", json!({ "taskId": task }), false).await;
    assert_eq!(undeclared["error"]["code"], json!(-32021), "{undeclared}");

    // Polled to its end, the task carries the tool's result.
    let mut got = Value::Null;
    for id in 10..410 {
        got = request(&mut agent, id, "tasks/get", json!({ "taskId": task })).await;
        assert_eq!(got["result"]["resultType"], json!("complete"), "{got}");
        assert_eq!(got["result"]["taskId"], json!(task), "{got}");
        if got["result"]["status"] != json!("working") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(got["result"]["status"], json!("completed"), "{got}");
    let result = &got["result"]["result"];
    assert_eq!(result["content"][0]["type"], json!("text"), "{got}");
    let related = &result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"];
    assert_eq!(related, &json!(task), "{got}");

    // Cancelled: acknowledged, then reported.
    let second = create(&mut agent, 500, "cancelled").await;
    let acked = request(&mut agent, 501, "tasks/cancel", json!({ "taskId": second })).await;
    assert_eq!(
        acked["result"],
        json!({ "resultType": "complete" }),
        "{acked}"
    );
    let got = request(&mut agent, 502, "tasks/get", json!({ "taskId": second })).await;
    assert_eq!(got["result"]["status"], json!("cancelled"), "{got}");

    // A task dies with its server's process, and the agent is told.
    let third = create(&mut agent, 600, "restart").await;
    c.restart_process("everything").await;
    let got = request(&mut agent, 601, "tasks/get", json!({ "taskId": third })).await;
    assert_eq!(got["result"]["status"], json!("failed"), "{got}");
    assert_eq!(got["result"]["error"]["code"], json!(-32603), "{got}");
    let message = got["result"]["statusMessage"].as_str().unwrap_or_default();
    assert!(
        message.contains("\"everything\"") && message.contains("restarted"),
        "{got}"
    );
    let cancel = request(&mut agent, 602, "tasks/cancel", json!({ "taskId": third })).await;
    assert_eq!(cancel["error"]["code"], json!(-32602), "{cancel}");
    let update = json!({ "taskId": third, "inputResponses": {} });
    let update = request(&mut agent, 603, "tasks/update", update).await;
    assert_eq!(update["error"]["code"], json!(-32602), "{update}");
}

/// `simulate-research-query` with `ambiguous: true` asks `elicitation/create` in
/// `input_required`: a 2026-07-28 agent reads it in the task's `inputRequests` and answers with
/// `tasks/update`, and the answer reaches the task.
#[tokio::test]
async fn a_2026_agent_answers_an_input_required_task_with_tasks_update() {
    let Some(peers) = peers_dir() else { return };
    let js = everything_js(&peers).display().to_string();
    let c = Companion::start(
        json!({ "mcpServers": { "everything": { "command": "node", "args": [js, "stdio"] } } }),
    );
    c.running().await;
    let mut agent = RawAgent::connect_only(&c.socket).await;
    let params = json!({ "name": RESEARCH, "arguments": { "topic": "python", "ambiguous": true } });
    let created = request(&mut agent, 1, "tools/call", params).await;
    let task = created["result"]["taskId"].clone();
    assert!(task.is_string(), "{created}");
    let mut got = Value::Null;
    for id in 2..402 {
        got = request(&mut agent, id, "tasks/get", json!({ "taskId": task })).await;
        if got["result"]["status"] != json!("working") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(got["result"]["status"], json!("input_required"), "{got}");
    let requests = got["result"]["inputRequests"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let (key, asked) = requests
        .iter()
        .next()
        .unwrap_or_else(|| panic!("a question: {got}"));
    assert_eq!(asked["method"], json!("elicitation/create"), "{got}");
    let options = &asked["params"]["requestedSchema"]["properties"]["interpretation"]["oneOf"];
    let pick = options[0]["const"]
        .as_str()
        .unwrap_or("the first one")
        .to_owned();
    let update = json!({ "taskId": task, "inputResponses": { key.clone(): {
        "action": "accept", "content": { "interpretation": pick } } } });
    let acked = request(&mut agent, 500, "tasks/update", update).await;
    assert_eq!(
        acked["result"],
        json!({ "resultType": "complete" }),
        "{acked}"
    );
    for id in 501..901 {
        got = request(&mut agent, id, "tasks/get", json!({ "taskId": task })).await;
        let status = &got["result"]["status"];
        if status != &json!("working") && status != &json!("input_required") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        got["result"]["status"],
        json!("completed"),
        "{got}\n{}",
        c.log()
    );
    let text = got["result"]["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains(&pick), "the answer reached the task: {got}");
}
