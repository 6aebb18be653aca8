//! Proves that the local endpoint answers malformed input as JSON-RPC 2.0 requires, over the
//! real socket, and that the connection stays usable afterwards: -32700 (`"id": null`) for a
//! line that is not JSON, -32600 for JSON that is not a request, -32602 for a `tools/call` with
//! missing or mistyped `params` (not -32601), before and after the handshake.

use serde_json::{Value, json};

use crate::common::{Companion, demo};
use crate::raw::RawAgent;

/// Sends `line` and returns the error answer, checking `id` and `code`.
async fn error_for(agent: &mut RawAgent, line: &str, id: Value, code: i64) -> String {
    agent.send_line(line).await;
    let answer = agent.recv().await;
    assert_eq!(answer["jsonrpc"], "2.0", "{line}: {answer}");
    assert!(
        answer.as_object().is_some_and(|a| a.contains_key("id")),
        "{line}: no id member in {answer}"
    );
    assert_eq!(answer["id"], id, "{line}: {answer}");
    assert_eq!(answer["error"]["code"], code, "{line}: {answer}");
    answer["error"]["message"]
        .as_str()
        .expect("an error message")
        .to_owned()
}

#[tokio::test]
async fn malformed_lines_get_json_rpc_errors_and_the_connection_stays_usable() {
    let c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    c.settled().await;

    // Before the handshake: the garbage is answered and initialize still works.
    let mut agent = RawAgent::connect_only(&c.socket).await;
    error_for(&mut agent, "GET / HTTP/1.1", Value::Null, -32700).await;
    agent.handshake().await;

    let cases: [(&str, Value, i64, &str); 7] = [
        (
            "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ",
            Value::Null,
            -32700,
            "parse error",
        ),
        ("[]", Value::Null, -32600, "invalid request"),
        (
            r#"{"jsonrpc": "2.0", "id": 2, "method": "tools/call"}"#,
            json!(2),
            -32602,
            "params are missing",
        ),
        (
            r#"{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": 7}}"#,
            json!(3),
            -32602,
            "invalid params for tools/call",
        ),
        (
            r#"{"jsonrpc": "2.0", "id": "four", "method": "tools/call", "params": {"name": "mcp_demo_echo", "arguments": "hi"}}"#,
            json!("four"),
            -32602,
            "invalid params for tools/call",
        ),
        (
            r#"{"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"cursor": 1}}"#,
            json!(5),
            -32602,
            "invalid params for tools/list",
        ),
        (
            r#"{"jsonrpc": "2.0", "id": "r", "method": "resources/read", "params": {}}"#,
            json!("r"),
            -32602,
            "invalid params for resources/read",
        ),
    ];
    for (line, id, code, words) in cases {
        let message = error_for(&mut agent, line, id, code).await;
        assert!(message.contains(words), "{line}: {message}");
    }

    // Still the same session: a real call goes through.
    agent
        .send(&json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
            "params": {"name": "mcp_demo_echo", "arguments": {"message": "still here"}}}))
        .await;
    let (answer, before) = agent.until_response(&json!(6)).await;
    assert!(before.is_empty(), "{before:?}");
    assert_eq!(
        answer["result"]["content"][0]["text"], "still here",
        "{answer}"
    );
    // And an unknown method is still -32601.
    let message = error_for(
        &mut agent,
        r#"{"jsonrpc": "2.0", "id": 7, "method": "no/such"}"#,
        json!(7),
        -32601,
    )
    .await;
    assert!(!message.is_empty());
}
