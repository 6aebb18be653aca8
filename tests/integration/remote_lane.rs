//! The fast lane of a streamable HTTP server (`src/upstream/http_lane.rs`): an agent's
//! `tools/call` goes as one POST on the session rmcp opened, with its session id and
//! `MCP-Protocol-Version`, and what is unusual still works: a server request on the answer's
//! event stream before the answer (rmcp answers it, the call waits for it), and a session the
//! server forgot (HTTP 404: reconnect, then the call is answered). Each runs on both paths, and
//! the activity log says which one took the call.
//!
//! The fixture is a small streamable HTTP server of our own: `echo` answers with JSON, `ask`
//! with an event stream that first sends a `ping` request and answers the call only once the
//! client's answer to the ping has arrived.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::{Mutex, oneshot};

use crate::common::{CallPath, Companion, eventually, on_both_paths};
use crate::raw::RawAgent;

/// What the fixture saw and holds.
#[derive(Default)]
struct Fixture {
    /// Sessions handed out; the last one is the only one known.
    sessions: Mutex<u32>,
    /// `(method, Mcp-Session-Id, MCP-Protocol-Version)` of every `tools/call` POST.
    calls: Mutex<Vec<(String, String, String)>>,
    /// The server's pings waiting for the client's answer, by id.
    pings: Mutex<HashMap<String, oneshot::Sender<()>>>,
}

fn json_response(session: Option<u32>, value: Value) -> Response {
    let mut response = (
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

fn header(headers: &HeaderMap, name: &str) -> String {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned()
}

async fn post(State(f): State<Arc<Fixture>>, headers: HeaderMap, body: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or_default();
    let method = body["method"].as_str().unwrap_or("").to_owned();
    let session = header(&headers, "mcp-session-id");
    if method == "initialize" {
        let mut n = f.sessions.lock().await;
        *n += 1;
        let result = json!({
            "protocolVersion": body["params"]["protocolVersion"],
            "capabilities": { "tools": {} },
            "serverInfo": { "name": "lane-fixture", "version": "1" },
        });
        return json_response(
            Some(*n),
            json!({"jsonrpc": "2.0", "id": body["id"], "result": result}),
        );
    }
    if session != format!("session-{}", *f.sessions.lock().await) {
        return StatusCode::NOT_FOUND.into_response();
    }
    // The client's answer to one of our pings.
    if method.is_empty() {
        if let Some(id) = body["id"].as_str()
            && let Some(waiting) = f.pings.lock().await.remove(id)
        {
            let _ = waiting.send(());
        }
        return StatusCode::ACCEPTED.into_response();
    }
    let Some(id) = body.get("id").cloned() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let result = match method.as_str() {
        "tools/list" => json!({ "tools": [
            { "name": "echo", "inputSchema": { "type": "object" } },
            { "name": "ask", "inputSchema": { "type": "object" } },
        ] }),
        "tools/call" => {
            let version = header(&headers, "mcp-protocol-version");
            let tool = body["params"]["name"].as_str().unwrap_or("").to_owned();
            f.calls.lock().await.push((tool.clone(), session, version));
            let said = body["params"]["arguments"]["message"].clone();
            let answer = json!({ "jsonrpc": "2.0", "id": id, "result": {
                "content": [{ "type": "text", "text": said }],
            }});
            if tool == "ask" {
                return ask_first(&f, answer).await;
            }
            return json_response(None, answer);
        }
        _ => json!({}),
    };
    json_response(
        None,
        json!({ "jsonrpc": "2.0", "id": id, "result": result }),
    )
}

/// An event stream that sends a `ping` and then `answer`, once the ping is answered.
async fn ask_first(f: &Fixture, answer: Value) -> Response {
    let (answered, waiting) = oneshot::channel();
    let mut pings = f.pings.lock().await;
    let ping_id = format!("ping-{}", pings.len() + 1);
    pings.insert(ping_id.clone(), answered);
    let ping = json!({"jsonrpc": "2.0", "id": ping_id, "method": "ping"});
    let first = futures::stream::once(async move {
        Ok::<_, std::io::Error>(Bytes::from(format!("data: {ping}\n\n")))
    });
    let then = futures::stream::once(async move {
        let _ = waiting.await;
        Ok(Bytes::from(format!("data: {answer}\n\n")))
    });
    (
        [(header::CONTENT_TYPE, "text/event-stream")],
        Body::from_stream(futures::StreamExt::chain(first, then)),
    )
        .into_response()
}

async fn start_fixture() -> (Arc<Fixture>, u16) {
    let fixture = Arc::new(Fixture::default());
    let app = axum::Router::new()
        .route(
            "/mcp",
            axum::routing::post(post)
                .get(|| async { StatusCode::METHOD_NOT_ALLOWED })
                .delete(|| async { StatusCode::OK }),
        )
        .with_state(fixture.clone());
    let (port, _serving) = crate::remote_fixture::listen(app).await;
    (fixture, port)
}

async fn companion(port: u16, path: CallPath) -> Companion {
    let c = Companion::start_on(
        json!({
            "mcpServers": { "lane": {
                "url": format!("http://127.0.0.1:{port}/mcp"),
                "toolTimeout": 20,
            }},
            "ssrfWhitelist": ["127.0.0.1/32"],
        }),
        path,
    );
    c.running().await;
    c
}

async fn call(agent: &mut RawAgent, id: u64, tool: &str, message: &str) -> Value {
    agent.call_tool(id, tool, json!({"message": message})).await
}

/// The forwarding path (`fast` or `rmcp`) of each recorded call of `tool`, oldest first.
async fn paths(c: &Companion, tool: &str, n: usize) -> Vec<String> {
    let read = || {
        let out = c.cli(&["activity", "--json", "--tool", tool]);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| v["path"].as_str().map(str::to_owned))
            .collect::<Vec<_>>()
    };
    eventually(Duration::from_secs(30), || read().len() >= n).await;
    read()
}

fn expected(path: CallPath) -> &'static str {
    match path {
        CallPath::Fast => "fast",
        CallPath::Slow => "rmcp",
    }
}

async fn a_server_request_before_the_answer_is_answered_and_the_call_too(path: CallPath) {
    let (fixture, port) = start_fixture().await;
    let c = companion(port, path).await;
    let mut agent = RawAgent::connect(&c.socket).await;
    for (id, message) in [(1, "first"), (2, "second")] {
        let answer = call(&mut agent, id, "mcp_lane_ask", message).await;
        assert_eq!(
            answer["result"]["content"][0]["text"],
            message,
            "{answer}\n{}",
            c.log()
        );
        assert_eq!(answer["result"].get("isError"), None, "{answer}");
    }
    assert!(fixture.pings.lock().await.is_empty(), "every ping answered");
    let calls = fixture.calls.lock().await.clone();
    for (tool, session, version) in &calls {
        assert_eq!(
            (tool.as_str(), session.as_str(), version.as_str()),
            ("ask", "session-1", "2025-11-25"),
            "the call goes on rmcp's session with its protocol version: {calls:?}"
        );
    }
    let taken = paths(&c, "mcp_lane_ask", 2).await;
    assert_eq!(taken, vec![expected(path); 2], "{}", c.log());
}

on_both_paths!(
    a_server_request_on_the_answer_stream,
    a_server_request_before_the_answer_is_answered_and_the_call_too
);

async fn a_forgotten_session_is_reopened_and_the_call_answered(path: CallPath) {
    let (fixture, port) = start_fixture().await;
    let c = companion(port, path).await;
    let mut agent = RawAgent::connect(&c.socket).await;
    let answer = call(&mut agent, 1, "mcp_lane_echo", "before").await;
    assert_eq!(answer["result"]["content"][0]["text"], "before", "{answer}");
    // The server forgets the session (as a restarted one does): it answers it with 404.
    *fixture.sessions.lock().await += 1;
    let answer = call(&mut agent, 2, "mcp_lane_echo", "after").await;
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "after",
        "{answer}\n{}",
        c.log()
    );
    // The call was refused on the old session, then sent on a new one (initialized anew).
    let sessions: Vec<String> = fixture
        .calls
        .lock()
        .await
        .iter()
        .map(|(_, s, _)| s.clone())
        .collect();
    assert_eq!(sessions.first().map(String::as_str), Some("session-1"));
    assert_eq!(sessions.last().map(String::as_str), Some("session-3"));
    let taken = paths(&c, "mcp_lane_echo", 2).await;
    assert_eq!(taken, vec![expected(path); 2], "{}", c.log());
}

on_both_paths!(
    a_forgotten_session,
    a_forgotten_session_is_reopened_and_the_call_answered
);
