//! The fidelity server (`tests/peers/fidelity_server.py`) behind a companion, and a
//! line-level agent for it: what `fidelity.rs` and `exact.rs` both set up.

use serde_json::{Value, json};

use super::{CallPath, Companion};
use crate::raw::RawAgent;

pub const SERVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/peers/fidelity_server.py"
);

/// A companion serving the fidelity server as `f`, settled.
pub async fn companion(path: CallPath) -> Companion {
    let c = Companion::start_on(
        json!({ "mcpServers": { "f": { "command": "python3", "args": [SERVER],
            "env": { "MY_API_TOKEN": "sekrit-fidelity-TOKEN-999" } } } }),
        path,
    );
    c.running().await;
    c
}

/// A raw agent that declared elicitation (form and URL) and sampling; returns it with the
/// `initialize` result.
pub async fn agent(c: &Companion) -> (RawAgent, Value) {
    let mut agent = RawAgent::connect_only(&c.socket).await;
    agent
        .send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}, "url": {}}, "sampling": {}},
            "clientInfo": {"name": "fidelity-agent", "version": "0"}}}),
        )
        .await;
    let (init, _) = agent.until_response(&json!(0)).await;
    agent
        .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    (agent, init)
}

/// `tools/call` of `mcp_f_<tool>` with id `id` and `params` merged into the params.
pub async fn call(agent: &mut RawAgent, id: u64, tool: &str, extra: Value) -> (Value, Vec<Value>) {
    let mut params = json!({"name": format!("mcp_f_{tool}"), "arguments": {}});
    if let (Some(p), Value::Object(extra)) = (params.as_object_mut(), extra) {
        p.extend(extra);
    }
    agent.request(id, "tools/call", params).await
}

/// The JSON in the first text block of `answer`'s result.
pub fn text_json(answer: &Value) -> Value {
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("");
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {answer}"))
}

/// Calls `mcp_f_ask` as request `id`, answering the server's sampling and elicitation requests;
/// returns those two requests as the agent got them, their lines, and the call's answer.
pub async fn ask(agent: &mut RawAgent, id: u64) -> (Vec<Value>, Vec<String>, Value) {
    agent
        .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "mcp_f_ask", "arguments": {}}}))
        .await;
    let mut asked = Vec::new();
    let mut lines = Vec::new();
    loop {
        let line = agent.recv_line().await;
        let msg: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        match msg["method"].as_str() {
            Some("sampling/createMessage") => {
                agent
                    .send(&json!({"jsonrpc": "2.0", "id": msg["id"], "result": {
                        "role": "assistant", "content": {"type": "text", "text": "ok"},
                        "model": "m", "stopReason": "endTurn"}}))
                    .await;
                asked.push(msg);
                lines.push(line);
            }
            Some("elicitation/create") => {
                agent
                    .send(&json!({"jsonrpc": "2.0", "id": msg["id"], "result": {
                        "action": "accept", "content": {"n": 5}}}))
                    .await;
                asked.push(msg);
                lines.push(line);
            }
            Some(_) => {}
            None if msg["id"] == id => return (asked, lines, msg),
            None => {}
        }
    }
}
