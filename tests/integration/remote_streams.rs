//! Proves that a remote server's answer reaches the agent when its event arrives, not when the
//! server ends the stream it came on (MCP 2025-11-25 "Transports", Streamable HTTP: the server
//! may keep a POST's event stream open after the response, e.g. to send more). The fixture
//! answers `tools/call` with an event stream (a priming event with an id and no data, as
//! server-everything sends from 2025-11-25 on, then the response) and holds it open until the
//! test has the answer.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::{Mutex, oneshot};

use crate::common::{Companion, call, text};

/// The release of each held stream: the stream ends when its sender is used or dropped.
#[derive(Default)]
struct Held {
    releases: Mutex<Vec<oneshot::Sender<()>>>,
}

fn json_response(value: Value) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

async fn server(State(held): State<Arc<Held>>, body: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or_default();
    let Some(id) = body.get("id").cloned() else {
        return axum::http::StatusCode::ACCEPTED.into_response();
    };
    let result = match body.get("method").and_then(Value::as_str).unwrap_or("") {
        "initialize" => json!({
            "protocolVersion": body["params"]["protocolVersion"],
            "capabilities": { "tools": {} },
            "serverInfo": { "name": "held-streams", "version": "1" },
        }),
        "tools/list" => json!({ "tools": [
            { "name": "echo", "inputSchema": { "type": "object" } },
        ] }),
        "tools/call" => {
            let said = body["params"]["arguments"]["message"].clone();
            let answer = json!({ "jsonrpc": "2.0", "id": id, "result": {
                "content": [{ "type": "text", "text": said }],
            }});
            let (release, released) = oneshot::channel();
            held.releases.lock().await.push(release);
            let events = futures::stream::unfold(0, move |step| {
                let answer = answer.clone();
                async move {
                    let chunk = match step {
                        0 => "id: prime-1\ndata: \n\n".to_owned(),
                        1 => format!("id: answer-1\nevent: message\ndata: {answer}\n\n"),
                        _ => return None,
                    };
                    Some((Ok::<_, std::io::Error>(Bytes::from(chunk)), step + 1))
                }
            });
            let hold = futures::stream::once(async move {
                let _ = released.await;
                None
            });
            let body = futures::StreamExt::filter_map(
                futures::StreamExt::chain(futures::StreamExt::map(events, Some), hold),
                std::future::ready,
            );
            return (
                [(header::CONTENT_TYPE, "text/event-stream")],
                Body::from_stream(body),
            )
                .into_response();
        }
        _ => json!({}),
    };
    json_response(json!({ "jsonrpc": "2.0", "id": id, "result": result }))
}

#[tokio::test]
async fn an_answer_on_a_held_stream_reaches_the_agent_before_the_stream_ends() {
    let held = Arc::new(Held::default());
    let app = axum::Router::new()
        .route("/mcp", axum::routing::post(server))
        .with_state(held.clone());
    let (port, _server) = crate::remote_fixture::listen(app).await;
    let c = Companion::start(json!({
        "mcpServers": { "held": { "url": format!("http://127.0.0.1:{port}/mcp") } },
        "ssrfWhitelist": ["127.0.0.1/32"],
    }));
    let servers = c.settled().await;
    assert!(
        servers.iter().all(|s| s.state.as_str() == "running"),
        "{servers:?}\n{}",
        c.log()
    );
    let client = c.client().await;
    for message in ["first", "second"] {
        // The stream stays open until the answer is here: a client that waited for its end
        // would never answer, and the timeout says so.
        let result = tokio::time::timeout(
            Duration::from_secs(60),
            call(&client, "mcp_held_echo", json!({ "message": message })),
        )
        .await
        .unwrap_or_else(|_| {
            panic!(
                "no answer to {message:?} while its stream was open\n{}",
                c.log()
            )
        });
        assert_eq!(text(&result), message, "{result:?}");
        let mut releases = held.releases.lock().await;
        assert_eq!(releases.len(), 1, "one held stream per call");
        // Ending the stream after its answer leaves the session working: the next call is
        // answered too.
        for release in releases.drain(..) {
            let _ = release.send(());
        }
    }
}
