//! What passes through the companion unchanged that a typed relay would lose: JSON-RPC errors
//! the agent must act on, `_meta`, numbers, unknown content, server instructions, and secrets
//! masked in error results and log messages. Each scenario runs on both call paths against
//! `tests/peers/fidelity_server.py`, with a line-level agent.

use serde_json::{Value, json};

use crate::common::{CallPath, Companion, on_both_paths};
use crate::raw::RawAgent;

const SERVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/peers/fidelity_server.py"
);

/// A companion serving the fidelity server as `f`, settled.
async fn companion(path: CallPath) -> Companion {
    let c = Companion::start_on(
        json!({ "mcpServers": { "f": { "command": "python3", "args": [SERVER],
            "env": { "MY_API_TOKEN": "sekrit-fidelity-TOKEN-999" } } } }),
        path,
    );
    let servers = c.settled().await;
    assert_eq!(servers[0].state.as_str(), "running", "{}", c.log());
    c
}

/// A raw agent that declared elicitation (form and URL) and sampling; returns it with the
/// `initialize` result.
async fn agent(c: &Companion) -> (RawAgent, Value) {
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
async fn call(agent: &mut RawAgent, id: u64, tool: &str, extra: Value) -> (Value, Vec<Value>) {
    let mut params = json!({"name": format!("mcp_f_{tool}"), "arguments": {}});
    if let (Some(p), Value::Object(extra)) = (params.as_object_mut(), extra) {
        p.extend(extra);
    }
    agent
        .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
        .await;
    agent.until_response(&json!(id)).await
}

/// -32042 (URL Elicitation Required) reaches the agent as that JSON-RPC error with its
/// `data.elicitations`, not as an `isError` text: the agent must open the URL.
async fn url_elicitation_required_passes_as_a_json_rpc_error(path: CallPath) {
    let c = companion(path).await;
    let (mut agent, _) = agent(&c).await;
    let (answer, _) = call(&mut agent, 1, "urlerror", json!({})).await;
    assert!(answer.get("result").is_none(), "{path:?}: {answer}");
    assert_eq!(answer["error"]["code"], -32042, "{path:?}: {answer}");
    let elicitation = &answer["error"]["data"]["elicitations"][0];
    assert_eq!(elicitation["mode"], "url", "{answer}");
    assert_eq!(elicitation["elicitationId"], "e-1", "{answer}");
    assert_eq!(
        elicitation["url"], "https://auth.example/authorize?state=abc",
        "{answer}"
    );
}
on_both_paths!(
    url_elicitation_required,
    url_elicitation_required_passes_as_a_json_rpc_error
);
