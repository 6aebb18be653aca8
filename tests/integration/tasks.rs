//! The Tasks utility through the companion, against server-everything's
//! `simulate-research-query` (`execution.taskSupport: "required"`): a task outlives neither its
//! server's restart silently (the agent is told, naming the server), an agent reaches only the
//! tasks it created, the `tasks` capability is declared, the server's status notifications
//! reach the agent under its task id, and tasks work with the fast path switched off too.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Companion, FAST_PATH_ENV, everything_js, peers_dir};
use crate::raw::RawAgent;

const RESEARCH: &str = "mcp_everything_simulate-research-query";

fn everything(js: &str) -> Value {
    json!({ "mcpServers": { "everything": { "command": "node", "args": [js, "stdio"] } } })
}

async fn request(agent: &mut RawAgent, id: u64, method: &str, params: Value) -> Value {
    agent.request(id, method, params).await.0
}

async fn create(agent: &mut RawAgent, id: u64, topic: &str) -> String {
    let created = request(
        agent,
        id,
        "tools/call",
        json!({ "name": RESEARCH, "arguments": { "topic": topic }, "task": { "ttl": 60000 } }),
    )
    .await;
    let task_id = created["result"]["task"]["taskId"].as_str();
    task_id
        .unwrap_or_else(|| panic!("a CreateTaskResult: {created}"))
        .to_owned()
}

#[tokio::test]
async fn a_task_whose_server_restarts_is_reported_failed_naming_the_server() {
    let Some(peers) = peers_dir() else { return };
    let js = everything_js(&peers).display().to_string();
    let c = Companion::start(everything(&js));
    c.running().await;
    // The `tasks` capability is declared, as server-everything declares it.
    let mut agent = RawAgent::connect_only(&c.socket).await;
    let init = request(
        &mut agent,
        0,
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": { "name": "tasks-test", "version": "1" } }),
    )
    .await;
    assert_eq!(
        init["result"]["capabilities"]["tasks"],
        json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } }),
        "{init}"
    );
    assert!(
        init["result"]["capabilities"].get("experimental").is_none(),
        "{init}"
    );
    (agent)
        .send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
        .await;
    let task = create(&mut agent, 1, "restart").await;
    assert!(task.starts_with("everything:"), "namespaced: {task}");
    let got = request(&mut agent, 2, "tasks/get", json!({ "taskId": task })).await;
    assert_eq!(got["result"]["taskId"], json!(task), "{got}");
    assert_eq!(got["result"]["status"], json!("working"), "{got}");

    // Another agent does not reach it.
    let mut other = RawAgent::connect(&c.socket).await;
    let foreign = request(&mut other, 1, "tasks/get", json!({ "taskId": task })).await;
    assert_eq!(foreign["error"]["code"], json!(-32602), "{foreign}");

    c.restart_process("everything").await;

    let got = request(&mut agent, 3, "tasks/get", json!({ "taskId": task })).await;
    assert_eq!(got["result"]["status"], json!("failed"), "{got}");
    let message = got["result"]["statusMessage"].as_str().unwrap_or_default();
    assert!(
        message.contains("\"everything\"") && message.contains("restarted"),
        "{got}"
    );
    let result = request(&mut agent, 4, "tasks/result", json!({ "taskId": task })).await;
    assert_eq!(result["error"]["code"], json!(-32603), "{result}");
    assert!(
        result["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("restarted")),
        "{result}"
    );
    let listed = request(&mut agent, 5, "tasks/list", json!({})).await;
    assert_eq!(
        listed["result"]["tasks"],
        json!([got["result"].clone()]),
        "{listed}"
    );
    // A task created on the new process works as before.
    let fresh = create(&mut agent, 6, "after").await;
    assert_ne!(fresh, task);
    let got = request(&mut agent, 7, "tasks/get", json!({ "taskId": fresh })).await;
    assert_eq!(got["result"]["status"], json!("working"), "{got}");
}

#[tokio::test]
async fn tasks_work_with_the_fast_path_off() {
    let Some(peers) = peers_dir() else { return };
    let js = everything_js(&peers).display().to_string();
    let c = Companion::start_with_env(everything(&js), &[(FAST_PATH_ENV, Some("0"))]);
    c.running().await;
    let mut agent = RawAgent::connect(&c.socket).await;
    let listed = request(&mut agent, 1, "tools/list", json!({})).await;
    let tools = listed["result"]["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let research = tools.iter().find(|t| t["name"] == json!(RESEARCH));
    assert_eq!(
        research.map(|t| t["execution"].clone()),
        Some(json!({ "taskSupport": "required" })),
        "{listed}"
    );
    let task = create(&mut agent, 2, "slow path").await;
    let mut id = 3;
    let mut status = Value::Null;
    let mut heard = Vec::new();
    for _ in 0..400 {
        let asked = json!(id);
        (agent)
            .send(
                &json!({ "jsonrpc": "2.0", "id": asked, "method": "tasks/get",
                           "params": { "taskId": task } }),
            )
            .await;
        let (got, before) = agent.until_response(&asked).await;
        heard.extend(before);
        id += 1;
        status = got["result"]["status"].clone();
        if status != json!("working") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, json!("completed"), "{}", c.log());
    // The server's status notifications (one per stage) reach the agent under its task id.
    let statuses: Vec<&Value> = heard
        .iter()
        .filter(|m| m["method"] == json!("notifications/tasks/status"))
        .collect();
    assert!(
        !statuses.is_empty(),
        "no notifications/tasks/status: {heard:?}"
    );
    for note in statuses {
        assert_eq!(note["params"]["taskId"], json!(task), "{note}");
    }
    let result = request(&mut agent, id, "tasks/result", json!({ "taskId": task })).await;
    let related = &result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"];
    assert_eq!(related, &json!(task), "{result}");
    assert_eq!(
        result["result"]["content"][0]["type"],
        json!("text"),
        "{result}"
    );
}

/// A server that sends `notifications/tasks/status` for a new task before its answer to the
/// call (`tests/fixtures/tasks/early_status_server.py`): the agent gets them once it has the
/// task's id, in the order the server sent them, before the one sent after the answer.
#[tokio::test]
async fn status_notifications_sent_before_the_task_is_created_reach_the_agent_in_order() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/tasks/early_status_server.py"
    );
    let c = Companion::start(
        json!({ "mcpServers": { "early": { "command": "python3", "args": [script] } } }),
    );
    c.running().await;
    let mut agent = RawAgent::connect_only(&c.socket).await;
    agent.handshake_on("2025-11-25").await;
    let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "mcp_early_slow", "arguments": {}, "task": { "ttl": 60000 } } });
    agent.send(&call).await;
    let (created, mut heard) = agent.until_response(&json!(1)).await;
    let task = created["result"]["task"]["taskId"].as_str();
    let task = task.unwrap_or_else(|| panic!("a CreateTaskResult: {created}"));
    assert!(task.starts_with("early:"), "{created}");
    let statuses = |heard: &[Value]| -> Vec<Value> {
        (heard.iter())
            .filter(|m| m["method"] == json!("notifications/tasks/status"))
            .map(|m| m["params"].clone())
            .collect()
    };
    while statuses(&heard).len() < 3 {
        let Some(message) = agent.recv_within(Duration::from_secs(20)).await else {
            break;
        };
        heard.push(message);
    }
    let statuses = statuses(&heard);
    let messages: Vec<&str> = (statuses.iter())
        .map(|s| s["statusMessage"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        messages,
        ["first", "second", "third"],
        "{heard:?}\n{}",
        c.log()
    );
    for status in &statuses {
        assert_eq!(status["taskId"], json!(task), "{status}");
    }
}

/// server-everything's `simulate-research-query` with `ambiguous: true` goes `input_required`
/// and asks `elicitation/create` during `tasks/result`: the question reaches the agent waiting
/// on `tasks/result`, and its answer reaches the task.
#[tokio::test]
async fn an_input_required_task_asks_the_agent_waiting_on_its_result() {
    let Some(peers) = peers_dir() else { return };
    let js = everything_js(&peers).display().to_string();
    let c = Companion::start(everything(&js));
    c.running().await;
    let mut agent = RawAgent::connect_only(&c.socket).await;
    let init = json!({ "protocolVersion": "2025-11-25", "capabilities": { "elicitation": {} },
        "clientInfo": { "name": "tasks-test", "version": "1" } });
    request(&mut agent, 0, "initialize", init).await;
    (agent)
        .send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
        .await;
    let call = json!({ "name": RESEARCH, "arguments": { "topic": "python", "ambiguous": true },
        "task": { "ttl": 60000 } });
    let created = request(&mut agent, 1, "tools/call", call).await;
    let task = created["result"]["task"]["taskId"].clone();
    assert!(task.is_string(), "{created}");
    let mut status = Value::Null;
    for id in 2..402 {
        let got = request(&mut agent, id, "tasks/get", json!({ "taskId": task })).await;
        status = got["result"]["status"].clone();
        if status != json!("working") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, json!("input_required"), "{}", c.log());
    (agent)
        .send(
            &json!({ "jsonrpc": "2.0", "id": 500, "method": "tasks/result",
                       "params": { "taskId": task } }),
        )
        .await;
    let mut chosen = None;
    let result = loop {
        let message = agent.recv().await;
        if message["method"] == json!("elicitation/create") {
            let schema = &message["params"]["requestedSchema"];
            let first = &schema["properties"]["interpretation"]["oneOf"][0]["const"];
            let pick = first.as_str().unwrap_or("the first one").to_owned();
            (agent)
                .send(&json!({ "jsonrpc": "2.0", "id": message["id"], "result": {
                    "action": "accept", "content": { "interpretation": pick } } }))
                .await;
            chosen = Some(pick);
        } else if message["id"] == json!(500) {
            break message;
        }
    };
    let chosen = chosen.unwrap_or_else(|| panic!("no elicitation reached the agent: {result}"));
    let text = result["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains(&chosen),
        "the answer reached the task: {result}"
    );
}

/// server-everything's `tasks/result` of a cancelled task answers an error naming the task:
/// the agent reads its own id there, never the server's.
#[tokio::test]
async fn the_result_of_a_cancelled_task_names_the_agent_s_id() {
    let Some(peers) = peers_dir() else { return };
    let js = everything_js(&peers).display().to_string();
    let c = Companion::start(everything(&js));
    c.running().await;
    let mut agent = RawAgent::connect_only(&c.socket).await;
    agent.handshake_on("2025-11-25").await;
    let task = create(&mut agent, 1, "cancelled").await;
    let upstream = task.strip_prefix("everything:").unwrap_or_default();
    assert!(!upstream.is_empty(), "{task}");
    let cancelled = request(&mut agent, 2, "tasks/cancel", json!({ "taskId": task })).await;
    assert_eq!(
        cancelled["result"]["status"],
        json!("cancelled"),
        "{cancelled}"
    );
    let result = request(&mut agent, 3, "tasks/result", json!({ "taskId": task })).await;
    let message = result["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(&task), "{result}");
    assert!(!message.replace(&task, "").contains(upstream), "{result}");
}
