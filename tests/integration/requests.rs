//! Proves that every bad request gets exactly one JSON-RPC error in plain words, on the socket
//! and through `mcp-companion bridge`, with the fast path on and off: an invalid Request object
//! (JSON-RPC 2.0 §5) is answered -32600 even without an id, a request whose params do not fit
//! a method we serve is answered -32602 naming what is wanted (never a Rust type), a prompt
//! argument that is not a string is named as such, and a notification is never answered.

use serde_json::{Value, json};

use crate::common::{CallPath, Companion, demo, on_both_paths};
use crate::raw::{RawAgent, Via};

/// Sends `line`, then a ping; returns every line that came before the ping's answer.
async fn answers_to(agent: &mut RawAgent, line: &str, ping: u64) -> Vec<Value> {
    agent.send_line(line).await;
    agent
        .send(&json!({"jsonrpc": "2.0", "id": ping, "method": "ping"}))
        .await;
    let (pong, before) = agent.until_response(&json!(ping)).await;
    assert_eq!(pong["result"], json!({}), "{line}: {pong}");
    before
}

/// Checks that `line` got exactly one answer: an error with `id` and `code` whose message
/// contains `words` and names no Rust type.
async fn one_error(agent: &mut RawAgent, line: &str, ping: u64, id: Value, code: i64, words: &str) {
    let answers = answers_to(agent, line, ping).await;
    let [answer] = answers.as_slice() else {
        panic!("{line}: {} answers: {answers:?}", answers.len());
    };
    assert!(
        answer.as_object().is_some_and(|a| a.contains_key("id")),
        "{line}: {answer}"
    );
    assert_eq!(answer["id"], id, "{line}: {answer}");
    assert_eq!(answer["error"]["code"], code, "{line}: {answer}");
    let message = answer["error"]["message"].as_str().expect("a message");
    assert!(message.contains(words), "{line}: {message}");
    assert!(
        !message.contains("struct ")
            && !message.contains("Params")
            && !message.contains("unrecognized"),
        "{line}: {message}"
    );
}

async fn bad_requests_get_one_plain_answer(path: CallPath, via: Via) {
    let c = Companion::start_on(json!({ "mcpServers": { "demo": demo(&[]) } }), path);
    c.settled().await;
    let mut agent = RawAgent::via(&c.socket, via).await;
    // Before the handshake too; then the session still starts.
    one_error(
        &mut agent,
        r#"{"jsonrpc":"2.0"}"#,
        900,
        Value::Null,
        -32600,
        "\"method\" is missing",
    )
    .await;
    agent.handshake().await;

    let invalid: [(&str, Value, &str); 6] = [
        (
            r#"{"jsonrpc":"2.0"}"#,
            Value::Null,
            "invalid request: \"method\" is missing",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1}"#,
            json!(1),
            "invalid request: \"method\" is missing",
        ),
        (
            r#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#,
            json!(2),
            "invalid request: \"jsonrpc\" must be \"2.0\", not \"1.0\"",
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":5}"#,
            json!(3),
            "invalid request: \"method\" must be a string, not 5",
        ),
        ("[]", Value::Null, "invalid request: an empty batch"),
        (
            r#"[{"jsonrpc":"2.0","id":4,"method":"ping"}]"#,
            Value::Null,
            "invalid request: batches (JSON arrays) are not supported",
        ),
    ];
    for (n, (line, id, words)) in invalid.into_iter().enumerate() {
        one_error(&mut agent, line, 1000 + n as u64, id, -32600, words).await;
    }

    let params: [(&str, &str); 5] = [
        ("tools/call", "\"name\""),
        ("prompts/get", "\"name\""),
        ("resources/read", "\"uri\""),
        ("completion/complete", "\"ref\" and \"argument\""),
        ("tasks/get", "\"taskId\""),
    ];
    for (n, (method, members)) in params.into_iter().enumerate() {
        let id = 10 + n as u64;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": "x"}).to_string();
        let words = format!("invalid params for {method}: params must be an object with {members}");
        one_error(
            &mut agent,
            &line,
            1100 + n as u64,
            json!(id),
            -32602,
            &words,
        )
        .await;
    }

    // MCP prompt arguments are strings: 5 is named, not reported "missing" by the server.
    let line = json!({"jsonrpc": "2.0", "id": 20, "method": "prompts/get",
        "params": {"name": "demo_greet", "arguments": {"name": 5}}});
    one_error(
        &mut agent,
        &line.to_string(),
        1200,
        json!(20),
        -32602,
        "invalid params for prompts/get: argument \"name\" must be a string, not 5",
    )
    .await;

    // Notifications are never answered, even ones nobody can read.
    for (n, line) in [
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/nothing/here"}"#,
    ]
    .into_iter()
    .enumerate()
    {
        let answers = answers_to(&mut agent, line, 1300 + n as u64).await;
        assert!(answers.is_empty(), "{line}: {answers:?}");
    }

    // The session still works: a real call and a real prompt.
    let call = agent
        .call_tool(30, "mcp_demo_echo", json!({"message": "still here"}))
        .await;
    assert_eq!(call["result"]["content"][0]["text"], "still here", "{call}");
    let (prompt, _) = agent
        .request(
            31,
            "prompts/get",
            json!({"name": "demo_greet", "arguments": {"name": "Ada"}}),
        )
        .await;
    assert!(prompt["result"]["messages"].is_array(), "{prompt}");
}

async fn on_the_socket(path: CallPath) {
    bad_requests_get_one_plain_answer(path, Via::Socket).await;
}

async fn through_bridge(path: CallPath) {
    bad_requests_get_one_plain_answer(path, Via::Bridge).await;
}

on_both_paths!(bad_requests_on_the_socket, on_the_socket);
on_both_paths!(bad_requests_through_bridge, through_bridge);
