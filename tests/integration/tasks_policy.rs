//! The call policy holds for calls that become tasks: a tool whose `toolPolicy` is `deny`
//! does not run as a task, by any route — a 2026-07-28 agent's call declaring the Tasks
//! extension (of a 2025-11-25 server's `taskSupport: required` tool, and of a 2026-07-28
//! server's tool) gets the refusal as its result; an `initialize`-era agent's task-augmented
//! call gets a completed task whose `tasks/result` is that refusal.

use serde_json::{Value, json};

use crate::common::{Companion, demo};
use crate::raw::RawAgent;

fn linking() -> Value {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/tasks/linking_server.py"
    );
    json!({ "command": "python3", "args": [script], "toolPolicy": { "linked": "deny" } })
}

async fn request(agent: &mut RawAgent, id: u64, method: &str, params: Value) -> Value {
    let id = json!(id);
    (agent)
        .send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
        .await;
    agent.until_response(&id).await.0
}

fn denied(result: &Value, tool: &str) -> bool {
    result["isError"] == json!(true)
        && result["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains(&format!("policy denies tool \"{tool}\"")))
}

#[tokio::test]
async fn a_denied_tool_runs_as_a_task_by_no_route() {
    let mut modern = demo(&["--stateless"]);
    modern["toolPolicy"] = json!({ "slow_task": "deny" });
    let c = Companion::start(json!({ "mcpServers": { "old": linking(), "modern": modern } }));
    for s in c.settled().await {
        assert_eq!(s.state.as_str(), "running", "{s:?}\n{}", c.log());
    }
    let calls = [
        ("mcp_old_linked", "linked", json!({})),
        (
            "mcp_modern_slow_task",
            "slow_task",
            json!({ "ms": 10, "text": "t" }),
        ),
    ];

    let mut agent = RawAgent::connect_only(&c.socket).await;
    for (n, (name, tool, arguments)) in calls.iter().enumerate() {
        let params = json!({ "name": name, "arguments": arguments, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": { "name": "raw-2026", "version": "0" },
            "io.modelcontextprotocol/clientCapabilities": {
                "extensions": { "io.modelcontextprotocol/tasks": {} } } } });
        let answer = request(&mut agent, n as u64 + 1, "tools/call", params).await;
        assert_ne!(answer["result"]["resultType"], json!("task"), "{answer}");
        assert!(denied(&answer["result"], tool), "{answer}");
    }

    let mut legacy = RawAgent::connect_only(&c.socket).await;
    legacy.handshake_on("2025-11-25").await;
    for (n, (name, tool, arguments)) in calls.iter().enumerate() {
        let id = 10 * (n as u64 + 1);
        let call = json!({ "name": name, "arguments": arguments, "task": {} });
        let created = request(&mut legacy, id, "tools/call", call).await;
        assert_eq!(
            created["result"]["task"]["status"],
            json!("completed"),
            "{created}"
        );
        let task = created["result"]["task"]["taskId"].clone();
        let result = request(
            &mut legacy,
            id + 1,
            "tasks/result",
            json!({ "taskId": task }),
        )
        .await;
        assert!(denied(&result["result"], tool), "{result}");
    }
}
