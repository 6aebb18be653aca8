//! Tasks of a 2026-07-28 server (the demo server with `--stateless`, whose `slow_task` runs
//! only as a task of the Tasks extension) through the companion, for agents of both eras: a
//! 2026-07-28 agent that declares the extension gets the server's task under a namespaced id
//! and polls, cancels and reads it with `tasks/get`; an `initialize`-era agent gets the task
//! in the 2025-11-25 shape from a task-augmented call (every tool of the server is listed
//! `taskSupport: "optional"`; one the server answers at once gives a completed task), and
//! `tasks/get`, `tasks/result` and `tasks/cancel` work on it. With two such servers sharing resource URIs, a task's result
//! carries the URIs as the agent knows them (rewritten), by either route. A 2026-07-28
//! agent's `subscriptions/listen` asking for a task's status is acknowledged without it.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Companion, demo};
use crate::raw::RawAgent;

const EXTENSION: &str = "io.modelcontextprotocol/tasks";
const HELLO: &str = "demo://static/hello";

/// The 2026-07-28 `_meta` of a request; `tasks` says whether it declares the extension.
fn meta(tasks: bool) -> Value {
    let capabilities = if tasks {
        json!({ "extensions": { EXTENSION: {} } })
    } else {
        json!({})
    };
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "raw-2026", "version": "0" },
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

async fn request(agent: &mut RawAgent, id: u64, method: &str, params: Value) -> Value {
    let id = json!(id);
    (agent)
        .send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
        .await;
    agent.until_response(&id).await.0
}

/// `method` with the 2026-07-28 `_meta` (`tasks`: declaring the extension).
async fn modern(
    agent: &mut RawAgent,
    id: u64,
    method: &str,
    mut params: Value,
    tasks: bool,
) -> Value {
    params["_meta"] = meta(tasks);
    request(agent, id, method, params).await
}

fn companion(servers: &[&str]) -> Companion {
    let entries: serde_json::Map<String, Value> = servers
        .iter()
        .map(|name| ((*name).to_owned(), demo(&["--stateless"])))
        .collect();
    Companion::start(json!({ "mcpServers": entries }))
}

async fn running(c: &Companion) {
    for s in c.settled().await {
        assert_eq!(s.state.as_str(), "running", "{s:?}\n{}", c.log());
    }
}

/// Polls a 2026-07-28 agent's `tasks/get` of `task` (ids from `next`) until its status is
/// `status`; the last answer.
async fn until_status(agent: &mut RawAgent, next: &mut u64, task: &str, status: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        *next += 1;
        let got = modern(agent, *next, "tasks/get", json!({ "taskId": task }), true).await;
        if got["result"]["status"] == json!(status) {
            return got;
        }
        assert!(
            got["result"]["status"] == json!("working") && Instant::now() < deadline,
            "waiting for {status}: {got}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The `uri` of the `resource_link` block in `result`'s content.
fn link_of(result: &Value) -> String {
    let content = result["content"].as_array().cloned().unwrap_or_default();
    let link = content.iter().find(|b| b["type"] == "resource_link");
    let link = link.unwrap_or_else(|| panic!("a resource_link: {result}"));
    link["uri"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_2026_agent_gets_a_2026_server_s_task() {
    let c = companion(&["modern"]);
    running(&c).await;
    let mut agent = RawAgent::connect_only(&c.socket).await;
    let discovered = modern(&mut agent, 1, "server/discover", json!({}), true).await;
    let caps = &discovered["result"]["capabilities"];
    assert_eq!(caps["extensions"][EXTENSION], json!({}), "{discovered}");

    // Without the extension the server cannot answer: the agent gets no task.
    let call = json!({ "name": "mcp_modern_slow_task", "arguments": { "ms": 10, "text": "t" } });
    let refused = modern(&mut agent, 2, "tools/call", call.clone(), false).await;
    assert_ne!(refused["result"]["resultType"], json!("task"), "{refused}");

    let created = modern(&mut agent, 3, "tools/call", call, true).await;
    assert_eq!(created["result"]["resultType"], json!("task"), "{created}");
    assert_eq!(created["result"]["pollIntervalMs"], json!(50), "{created}");
    let task = created["result"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(task.starts_with("modern:"), "namespaced: {created}");
    // Task status is not pushed to a 2026-07-28 agent: a stream asking for the task's id is
    // acknowledged without it (the agent polls, `hub/tasks/mod.rs`).
    let mut listen = RawAgent::connect_only(&c.socket).await;
    let mut params = json!({ "notifications": { "toolsListChanged": true, "taskIds": [task] } });
    params["_meta"] = meta(true);
    (listen)
        .send(&json!({ "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": params }))
        .await;
    let ack = loop {
        let message = listen.recv().await;
        if message["method"] == "notifications/subscriptions/acknowledged" {
            break message;
        }
    };
    let agreed = &ack["params"]["notifications"];
    assert_eq!(agreed["toolsListChanged"], json!(true), "{ack}");
    assert!(agreed.get("taskIds").is_none(), "{ack}");

    let mut next = 10;
    let done = until_status(&mut agent, &mut next, &task, "completed").await;
    assert_eq!(done["result"]["taskId"], json!(task), "{done}");
    assert_eq!(
        done["result"]["result"]["content"][0]["text"],
        json!("t"),
        "{done}"
    );
    // One server: its URIs are unique and stay as they are.
    assert_eq!(link_of(&done["result"]["result"]), HELLO, "{done}");

    // Only the agent that created it reaches it.
    let mut other = RawAgent::connect_only(&c.socket).await;
    let foreign = modern(&mut other, 1, "tasks/get", json!({ "taskId": task }), true).await;
    assert_eq!(foreign["error"]["code"], json!(-32602), "{foreign}");

    // A long task is cancelled on the server.
    let long =
        json!({ "name": "mcp_modern_slow_task", "arguments": { "ms": 600_000, "text": "x" } });
    let created = modern(&mut agent, 100, "tools/call", long, true).await;
    let task = created["result"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let cancel = modern(
        &mut agent,
        101,
        "tasks/cancel",
        json!({ "taskId": task }),
        true,
    )
    .await;
    assert!(cancel["result"].is_object(), "{cancel}");
    let mut next = 200;
    until_status(&mut agent, &mut next, &task, "cancelled").await;

    // A task that asks: the server's question reaches the agent in `tasks/get`, under the
    // server's key, and the agent's `tasks/update` reaches the task.
    let asks = json!({ "name": "mcp_modern_slow_task",
        "arguments": { "ms": 10, "text": "hello", "ask": true } });
    let created = modern(&mut agent, 300, "tools/call", asks, true).await;
    let task = created["result"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let mut next = 310;
    let asked = until_status(&mut agent, &mut next, &task, "input_required").await;
    let question = &asked["result"]["inputRequests"]["name"];
    assert_eq!(question["method"], json!("elicitation/create"), "{asked}");
    let answer = json!({ "taskId": task, "inputResponses": {
        "name": { "action": "accept", "content": { "name": "Luca" } } } });
    let updated = modern(&mut agent, 400, "tasks/update", answer, true).await;
    assert!(updated["result"].is_object(), "{updated}");
    let mut next = 410;
    let done = until_status(&mut agent, &mut next, &task, "completed").await;
    let text = &done["result"]["result"]["content"][0]["text"];
    assert_eq!(text, &json!("hello Luca"), "{done}");
}

#[tokio::test]
async fn an_initialize_era_agent_gets_a_2026_server_s_task() {
    let c = companion(&["modern"]);
    running(&c).await;
    let mut agent = RawAgent::connect_only(&c.socket).await;
    let init = request(
        &mut agent,
        0,
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": { "elicitation": {} },
                "clientInfo": { "name": "tasks-2025", "version": "1" } }),
    )
    .await;
    assert!(
        init["result"]["capabilities"]["tasks"].is_object(),
        "{init}"
    );
    (agent)
        .send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
        .await;

    let call = json!({ "name": "mcp_modern_slow_task", "arguments": { "ms": 300, "text": "r" },
        "task": { "ttl": 60000 } });
    let created = request(&mut agent, 1, "tools/call", call).await;
    let task = &created["result"]["task"];
    let id = task["taskId"].as_str().unwrap_or_default().to_owned();
    assert!(id.starts_with("modern:"), "namespaced: {created}");
    assert_eq!(
        task["pollInterval"],
        json!(50),
        "2025-11-25 shape: {created}"
    );
    assert!(task.get("pollIntervalMs").is_none(), "{created}");

    let got = request(&mut agent, 2, "tasks/get", json!({ "taskId": id })).await;
    assert_eq!(got["result"]["taskId"], json!(id), "{got}");
    assert!(got["result"].get("result").is_none(), "no payload: {got}");

    // `tasks/result` waits for the end and carries the result, naming the agent's task.
    let result = request(&mut agent, 3, "tasks/result", json!({ "taskId": id })).await;
    assert_eq!(
        result["result"]["content"][0]["text"],
        json!("r"),
        "{result}"
    );
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        json!(id),
        "{result}"
    );
    let got = request(&mut agent, 4, "tasks/get", json!({ "taskId": id })).await;
    assert_eq!(got["result"]["status"], json!("completed"), "{got}");

    let long = json!({ "name": "mcp_modern_slow_task", "arguments": { "ms": 600_000, "text": "x" },
        "task": {} });
    let created = request(&mut agent, 5, "tools/call", long).await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let cancelled = request(&mut agent, 6, "tasks/cancel", json!({ "taskId": id })).await;
    assert_eq!(cancelled["result"]["taskId"], json!(id), "{cancelled}");
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut next = 7;
    loop {
        let got = request(&mut agent, next, "tasks/get", json!({ "taskId": id })).await;
        if got["result"]["status"] == json!("cancelled") {
            break;
        }
        assert!(Instant::now() < deadline, "not cancelled: {got}");
        next += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let listed = request(&mut agent, 100, "tasks/list", json!({})).await;
    let tasks = listed["result"]["tasks"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(tasks.len(), 2, "{listed}");
    assert_eq!(tasks[1]["status"], json!("cancelled"), "{listed}");

    // A task that asks: its question reaches the agent waiting on `tasks/result` as an
    // `elicitation/create` request, once, and the answer reaches the task.
    let asks = json!({ "name": "mcp_modern_slow_task",
        "arguments": { "ms": 10, "text": "hello", "ask": true }, "task": {} });
    let created = request(&mut agent, 200, "tools/call", asks).await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    (agent)
        .send(
            &json!({ "jsonrpc": "2.0", "id": 201, "method": "tasks/result",
            "params": { "taskId": id } }),
        )
        .await;
    let mut asked = 0;
    let result = loop {
        let message = agent.recv().await;
        if message["method"] == json!("elicitation/create") {
            asked += 1;
            (agent)
                .send(&json!({ "jsonrpc": "2.0", "id": message["id"], "result": {
                    "action": "accept", "content": { "name": "Ada" } } }))
                .await;
        } else if message["id"] == json!(201) {
            break message;
        }
    };
    assert_eq!(asked, 1, "{result}");
    assert_eq!(
        result["result"]["content"][0]["text"],
        json!("hello Ada"),
        "{result}"
    );

    // Its tools say they can run as tasks; one the server answers at once is a task of the
    // companion's own, already completed, holding the result.
    let listed = request(&mut agent, 300, "tools/list", json!({})).await;
    let tools = listed["result"]["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let echo = tools.iter().find(|t| t["name"] == json!("mcp_modern_echo"));
    let echo = echo.unwrap_or_else(|| panic!("echo listed: {listed}"));
    assert_eq!(
        echo["execution"],
        json!({ "taskSupport": "optional" }),
        "{echo}"
    );
    let call = json!({ "name": "mcp_modern_echo", "arguments": { "message": "at once" },
        "task": {} });
    let created = request(&mut agent, 301, "tools/call", call).await;
    let task = &created["result"]["task"];
    assert_eq!(task["status"], json!("completed"), "{created}");
    let id = task["taskId"].as_str().unwrap_or_default().to_owned();
    assert!(id.starts_with("modern:"), "{created}");
    let result = request(&mut agent, 302, "tasks/result", json!({ "taskId": id })).await;
    assert_eq!(
        result["result"]["content"][0]["text"],
        json!("at once"),
        "{result}"
    );
    let related = &result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"];
    assert_eq!(related, &json!(id), "{result}");
    let got = request(&mut agent, 303, "tasks/get", json!({ "taskId": id })).await;
    assert_eq!(got["result"]["status"], json!("completed"), "{got}");
}

#[tokio::test]
async fn a_task_s_result_carries_the_uris_the_agent_knows() {
    // Both servers list `demo://static/hello`: each one's URIs are rewritten.
    let c = companion(&["a", "b"]);
    running(&c).await;

    let mut agent = RawAgent::connect_only(&c.socket).await;
    let call = json!({ "name": "mcp_a_slow_task", "arguments": { "ms": 10, "text": "t" } });
    let created = modern(&mut agent, 1, "tools/call", call, true).await;
    let task = created["result"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let mut next = 10;
    let done = until_status(&mut agent, &mut next, &task, "completed").await;
    let uri = link_of(&done["result"]["result"]);
    assert_ne!(uri, HELLO, "rewritten: {done}");
    // The link reads through the companion: the URI is one the agent can follow.
    let read = modern(
        &mut agent,
        50,
        "resources/read",
        json!({ "uri": uri }),
        true,
    )
    .await;
    assert_eq!(read["result"]["contents"][0]["uri"], json!(uri), "{read}");

    let mut legacy = RawAgent::connect_only(&c.socket).await;
    legacy.handshake_on("2025-11-25").await;
    let call = json!({ "name": "mcp_b_slow_task", "arguments": { "ms": 10, "text": "t" },
        "task": {} });
    let created = request(&mut legacy, 1, "tools/call", call).await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let result = request(&mut legacy, 2, "tasks/result", json!({ "taskId": id })).await;
    let uri_b = link_of(&result["result"]);
    assert!(uri_b != HELLO && uri_b != uri, "rewritten for b: {result}");
    let read = request(&mut legacy, 3, "resources/read", json!({ "uri": uri_b })).await;
    assert_eq!(read["result"]["contents"][0]["uri"], json!(uri_b), "{read}");
}
