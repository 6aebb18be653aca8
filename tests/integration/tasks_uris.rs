//! A task's result carries the URIs as the agent knows them, as a tool's result does: two
//! 2025-11-25 servers (`tests/fixtures/tasks/linking_server.py`) share `shared://note`, so
//! each one's is rewritten; the link in a task's result comes rewritten to an
//! `initialize`-era agent's `tasks/result` and in a 2026-07-28 agent's completed `tasks/get`,
//! and reads the right server's note.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::Companion;
use crate::raw::RawAgent;

const SHARED: &str = "shared://note";

fn linking(label: &str) -> Value {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/tasks/linking_server.py"
    );
    json!({ "command": "python3", "args": [script, "--label", label] })
}

async fn request(agent: &mut RawAgent, id: u64, method: &str, params: Value) -> Value {
    let id = json!(id);
    (agent)
        .send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
        .await;
    agent.until_response(&id).await.0
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

/// The `uri` of the `resource_link` block in `result`'s content.
fn link_of(result: &Value) -> String {
    let content = result["content"].as_array().cloned().unwrap_or_default();
    let link = content.iter().find(|b| b["type"] == "resource_link");
    let link = link.unwrap_or_else(|| panic!("a resource_link: {result}"));
    link["uri"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_2025_server_s_task_result_carries_the_uris_the_agent_knows() {
    let c = Companion::start(json!({ "mcpServers": { "a": linking("a"), "b": linking("b") } }));
    for s in c.settled().await {
        assert_eq!(s.state.as_str(), "running", "{s:?}\n{}", c.log());
    }

    let mut legacy = RawAgent::connect_only(&c.socket).await;
    legacy.handshake_on("2025-11-25").await;
    let call = json!({ "name": "mcp_a_linked", "arguments": {}, "task": {} });
    let created = request(&mut legacy, 1, "tools/call", call).await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(id.starts_with("a:"), "{created}");
    let result = request(&mut legacy, 2, "tasks/result", json!({ "taskId": id })).await;
    let uri_a = link_of(&result["result"]);
    assert_ne!(uri_a, SHARED, "rewritten: {result}");
    let read = request(&mut legacy, 3, "resources/read", json!({ "uri": uri_a })).await;
    assert_eq!(read["result"]["contents"][0]["text"], json!("a"), "{read}");

    let mut agent = RawAgent::connect_only(&c.socket).await;
    let call = json!({ "name": "mcp_b_linked", "arguments": {} });
    let created = modern(&mut agent, 1, "tools/call", call).await;
    assert_eq!(created["result"]["resultType"], json!("task"), "{created}");
    let id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut next = 2;
    let done = loop {
        let got = modern(&mut agent, next, "tasks/get", json!({ "taskId": id })).await;
        if got["result"]["status"] == json!("completed") {
            break got;
        }
        assert!(Instant::now() < deadline, "not completed: {got}");
        next += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let uri_b = link_of(&done["result"]["result"]);
    assert!(uri_b != SHARED && uri_b != uri_a, "rewritten for b: {done}");
    let read = modern(&mut agent, 100, "resources/read", json!({ "uri": uri_b })).await;
    assert_eq!(read["result"]["contents"][0]["text"], json!("b"), "{read}");
}
