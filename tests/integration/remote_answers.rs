//! Proves that a streamable HTTP server's answer that carries no result for the call is named
//! in the agent's error, at once, on both forwarding paths: a wrong content type, a body that is
//! not JSON, an empty body, `202 Accepted` (for notifications and responses only), and a
//! JSON-RPC error under another request's id in a 500. None of them claims a lost connection
//! or waits out `toolTimeout`; each says the call may have run (the server got it), none is
//! sent again, and the session goes on serving.
//!
//! The fixture is a small streamable HTTP server of our own with one session; each tool but
//! `echo` misbehaves in one way.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::Mutex;

use crate::common::{CallPath, Companion, eventually, on_both_paths};
use crate::raw::RawAgent;

/// What the fixture saw.
#[derive(Default)]
struct Seen {
    /// `initialize` requests (sessions handed out).
    sessions: Mutex<u32>,
    /// `tools/call` requests, by tool.
    calls: Mutex<HashMap<String, u32>>,
}

/// The misbehaving tools, each with the text its call's error must start with (after
/// `server "odd": `).
const ODD: [(&str, &str); 5] = [
    (
        "plain",
        r#"the server answered with content type "text/plain; charset=utf-8", not application/json or text/event-stream"#,
    ),
    (
        "notjson",
        r#"the server's answer is not JSON: expected value at line 1 column 1: "<b>not json</b>""#,
    ),
    ("empty", "the server answered with an empty body"),
    (
        "accepted",
        "the server answered HTTP 202 Accepted with no result",
    ),
    (
        "otherid",
        "the server answered HTTP 500 Internal Server Error with a JSON-RPC error for another request (id 999): boom (JSON-RPC error -32603)",
    ),
];

fn json_body(status: StatusCode, session: Option<u32>, value: &Value) -> Response {
    let mut response = (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response();
    if let Some(n) = session {
        let id = format!("session-{n}").parse().expect("header value");
        response.headers_mut().insert("mcp-session-id", id);
    }
    response
}

async fn post(State(seen): State<Arc<Seen>>, headers: HeaderMap, body: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or_default();
    let method = body["method"].as_str().unwrap_or("");
    if method == "initialize" {
        let mut n = seen.sessions.lock().await;
        *n += 1;
        let result = json!({
            "protocolVersion": body["params"]["protocolVersion"],
            "capabilities": { "tools": {} },
            "serverInfo": { "name": "odd-answers", "version": "1" },
        });
        return json_body(
            StatusCode::OK,
            Some(*n),
            &json!({"jsonrpc": "2.0", "id": body["id"], "result": result}),
        );
    }
    let session = headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if session != format!("session-{}", *seen.sessions.lock().await) {
        return StatusCode::NOT_FOUND.into_response();
    }
    let Some(id) = body.get("id").cloned() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let ok = |result: Value| {
        json_body(
            StatusCode::OK,
            None,
            &json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        )
    };
    match method {
        "tools/list" => {
            let mut tools = vec![json!({ "name": "echo", "inputSchema": { "type": "object" } })];
            tools.extend(
                ODD.iter()
                    .map(|(name, _)| json!({ "name": name, "inputSchema": { "type": "object" } })),
            );
            ok(json!({ "tools": tools }))
        }
        "tools/call" => {
            let tool = body["params"]["name"].as_str().unwrap_or("").to_owned();
            *seen.calls.lock().await.entry(tool.clone()).or_default() += 1;
            let json = [(header::CONTENT_TYPE, "application/json")];
            match tool.as_str() {
                "plain" => (StatusCode::OK, "hello").into_response(),
                "notjson" => (StatusCode::OK, json, "<b>not json</b>").into_response(),
                "empty" => (StatusCode::OK, json, "").into_response(),
                "accepted" => StatusCode::ACCEPTED.into_response(),
                "otherid" => json_body(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    None,
                    &json!({ "jsonrpc": "2.0", "id": 999,
                             "error": { "code": -32603, "message": "boom" } }),
                ),
                _ => ok(json!({ "content": [
                    { "type": "text", "text": body["params"]["arguments"]["message"] },
                ] })),
            }
        }
        _ => ok(json!({})),
    }
}

/// The activity log's path (`fast` or `rmcp`) of the first recorded call of `tool`.
async fn path_of(c: &Companion, tool: &str) -> Option<String> {
    let read = || {
        let out = c.cli(&["activity", "--json", "--tool", tool]);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find_map(|v| v["path"].as_str().map(str::to_owned))
    };
    eventually(Duration::from_secs(30), || read().is_some()).await;
    read()
}

async fn an_answer_without_a_result_is_named_at_once(path: CallPath) {
    let seen = Arc::new(Seen::default());
    let app = axum::Router::new()
        .route(
            "/mcp",
            axum::routing::post(post)
                .get(|| async { StatusCode::METHOD_NOT_ALLOWED })
                .delete(|| async { StatusCode::OK }),
        )
        .with_state(seen.clone());
    let (port, _serving) = crate::remote_fixture::listen(app).await;
    // Long enough that a call waiting it out fails the test by its text, not by its time.
    let c = Companion::start_on(
        json!({
            "mcpServers": { "odd": {
                "url": format!("http://127.0.0.1:{port}/mcp"),
                "toolTimeout": 20,
            }},
            "ssrfWhitelist": ["127.0.0.1/32"],
        }),
        path,
    );
    c.running().await;
    let mut agent = RawAgent::connect(&c.socket).await;
    for (n, (tool, want)) in (1..).zip(ODD) {
        let answer = agent
            .call_tool(n, &format!("mcp_odd_{tool}"), json!({}))
            .await;
        assert_eq!(answer["result"]["isError"], true, "{tool}: {answer}");
        let said = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(
            said.starts_with(&format!("server \"odd\": {want}")),
            "{tool}: {said}\n{}",
            c.log()
        );
        assert!(said.contains("the call may have run"), "{tool}: {said}");
        for wrong in ["connection", "lost", "timed out"] {
            assert!(!said.contains(wrong), "{tool}: {wrong:?} in {said}");
        }
    }
    // The session was never dropped: the next call is answered on it.
    let answer = agent
        .call_tool(10, "mcp_odd_echo", json!({ "message": "still here" }))
        .await;
    assert_eq!(
        answer["result"]["content"][0]["text"], "still here",
        "{answer}"
    );
    assert_eq!(*seen.sessions.lock().await, 1, "{}", c.log());
    // None of them was sent again.
    let calls = seen.calls.lock().await.clone();
    for (tool, _) in ODD {
        assert_eq!(calls.get(tool), Some(&1), "{tool}: {calls:?}");
    }
    let want = match path {
        CallPath::Fast => "fast",
        CallPath::Slow => "rmcp",
    };
    assert_eq!(path_of(&c, "mcp_odd_otherid").await.as_deref(), Some(want));
}

on_both_paths!(
    an_answer_without_a_result,
    an_answer_without_a_result_is_named_at_once
);
