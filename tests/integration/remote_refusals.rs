//! Proves that a remote server refusing a call with an HTTP error status (5xx, 429) is quoted
//! to the agent and in the log: the status line, the start of the body (masked, escaped, at
//! most 2 KiB, read for at most a few seconds) and `Retry-After` — not a bare `HTTP 500`.
//! The legacy SSE transport quotes the same way, and its stalled refusal is bounded too.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::common::{Companion, call, text};

/// The header value the companion sends (from the config), which one tool's refusal echoes.
const API_KEY: &str = "k3y-0f-the-user-77b1c9";
/// The first bytes of the huge body, then filler.
const HUGE_START: &str = "huge refusal starts here;";
/// What the stalling server sends before it stalls.
const PARTIAL: &str = "the database said";

fn json_response(value: Value) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

/// A 500 whose body sends `PARTIAL` and then never ends.
fn stalled(status: StatusCode) -> Response {
    let first = futures::stream::once(async { Ok::<_, std::io::Error>(Bytes::from(PARTIAL)) });
    let body = Body::from_stream(futures::StreamExt::chain(first, futures::stream::pending()));
    (status, body).into_response()
}

/// `tools/call` of each tool answered with an HTTP refusal.
fn refuse(tool: &str, headers: &HeaderMap) -> Response {
    match tool {
        "down" => (
            StatusCode::SERVICE_UNAVAILABLE,
            "database is down\n\u{1b}[2Kforged line",
        )
            .into_response(),
        "busy" => (
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, "30")],
            "slow down",
        )
            .into_response(),
        "echo" => {
            let sent = headers
                .get("x-api-key")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_owned();
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("key {sent} is not allowed here"),
            )
                .into_response()
        }
        "huge" => {
            let body = format!("{HUGE_START}{}", "y".repeat(4 << 20));
            (StatusCode::BAD_GATEWAY, body).into_response()
        }
        _ => stalled(StatusCode::INTERNAL_SERVER_ERROR),
    }
}

/// A hand-written streamable HTTP server: `initialize`, `tools/list` and refusals.
async fn server(headers: HeaderMap, body: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or_default();
    let id = body.get("id").cloned();
    let method = body.get("method").and_then(Value::as_str).unwrap_or("");
    let result = match (method, id.as_ref()) {
        (_, None) => return StatusCode::ACCEPTED.into_response(),
        ("initialize", _) => json!({
            "protocolVersion": body["params"]["protocolVersion"],
            "capabilities": { "tools": {} },
            "serverInfo": { "name": "refuser", "version": "1" },
        }),
        ("tools/list", _) => {
            let tool = |name: &str| json!({ "name": name, "inputSchema": { "type": "object" } });
            let tools = ["down", "busy", "echo", "huge", "stall"].map(tool);
            json!({ "tools": tools })
        }
        ("tools/call", _) => {
            let tool = body["params"]["name"].as_str().unwrap_or("");
            return refuse(tool, &headers);
        }
        _ => json!({}),
    };
    json_response(json!({ "jsonrpc": "2.0", "id": id, "result": result }))
}

async fn fixture() -> (u16, tokio::task::JoinHandle<()>) {
    use axum::routing::{get, post};
    let app = axum::Router::new()
        .route("/mcp", post(server))
        .route(
            "/mcp-busy",
            post(|| async {
                (
                    StatusCode::TOO_MANY_REQUESTS,
                    [(header::RETRY_AFTER, "120")],
                    "come back in two minutes",
                )
            }),
        )
        .route(
            "/sse-stall",
            get(|| async { stalled(StatusCode::SERVICE_UNAVAILABLE) }),
        )
        .route(
            "/sse-busy",
            get(|| async {
                (
                    StatusCode::TOO_MANY_REQUESTS,
                    [(header::RETRY_AFTER, "120")],
                    "too many streams",
                )
            }),
        );
    crate::remote_fixture::listen(app).await
}

#[tokio::test]
async fn http_refusals_of_a_call_quote_the_server_masked_and_bounded() {
    let (port, _server) = fixture().await;
    let c = Companion::start(json!({
        "mcpServers": {
            "refuser": {
                "url": format!("http://127.0.0.1:{port}/mcp"),
                "headers": { "X-Api-Key": API_KEY },
                "connectTimeout": 10,
                // Far beyond the body's own bound: a stalled body must not wait for this.
                "toolTimeout": 120,
            },
        },
        "ssrfWhitelist": ["127.0.0.1/32"],
    }));
    let servers = c.settled().await;
    assert_eq!(servers[0].state.as_str(), "running", "{servers:?}");
    let client = c.client().await;
    let said = |tool: &'static str| {
        let client = &client;
        async move {
            let result = call(client, &format!("mcp_refuser_{tool}"), json!({})).await;
            assert_eq!(result.is_error, Some(true), "{result:?}");
            text(&result)
        }
    };

    let down = said("down").await;
    assert!(
        down.contains(r#"HTTP 503 Service Unavailable: "database is down\n\u{1b}[2Kforged line""#),
        "{down}"
    );
    assert!(
        down.contains("the server refused the request: HTTP 503"),
        "{down}"
    );
    assert!(
        !down.contains('\u{1b}'),
        "a raw escape reached the agent: {down:?}"
    );

    let busy = said("busy").await;
    assert!(
        busy.contains(r#"HTTP 429 Too Many Requests: "slow down" (Retry-After: 30)"#),
        "{busy}"
    );

    let echo = said("echo").await;
    assert!(
        echo.contains(r#"HTTP 500 Internal Server Error: "key <redacted> is not allowed here""#),
        "{echo}"
    );
    assert!(!echo.contains(API_KEY), "{echo}");

    let huge = said("huge").await;
    assert!(
        huge.contains(&format!("HTTP 502 Bad Gateway: \"{HUGE_START}yyy")),
        "{huge}"
    );
    assert!(huge.contains("(its first 2048 bytes)"), "{huge}");
    assert!(huge.len() < 3000, "{} bytes quoted", huge.len());

    let stall = said("stall").await;
    assert!(
        stall.contains(&format!(
            "HTTP 500 Internal Server Error: \"{PARTIAL}\" (the rest of the body did not arrive within"
        )),
        "{stall}"
    );

    // The log line of each failed call quotes the server too, masked.
    let log = c.log();
    for want in [
        "database is down",
        "slow down",
        "Retry-After: 30",
        "key <redacted> is not allowed here",
        PARTIAL,
    ] {
        assert!(log.contains(want), "{want:?} not in the log:\n{log}");
    }
    assert!(!log.contains(API_KEY), "{log}");
    assert!(!log.contains('\u{1b}'), "a raw escape reached the log");
}

#[tokio::test]
async fn legacy_sse_refusals_are_quoted_and_a_stalled_body_is_bounded() {
    let (port, _server) = fixture().await;
    let url = |path: &str| format!("http://127.0.0.1:{port}/{path}");
    let c = Companion::start(json!({
        "mcpServers": {
            // Far beyond the body's own bound: the stalled refusal must not wait for this.
            "stalled": { "type": "sse", "url": url("sse-stall"), "connectTimeout": 60 },
            "busy": { "type": "sse", "url": url("sse-busy"), "connectTimeout": 60 },
        },
        "ssrfWhitelist": ["127.0.0.1/32"],
    }));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(45);
    let error_of = |servers: &[mcp_companion::supervisor::ServerStatus], name: &str| {
        servers
            .iter()
            .find(|s| s.name == name)
            .and_then(|s| s.last_error.clone())
            .unwrap_or_default()
    };
    loop {
        let servers = c.status().await.servers;
        let (stalled, busy) = (error_of(&servers, "stalled"), error_of(&servers, "busy"));
        if !stalled.is_empty() && !busy.is_empty() {
            assert!(
                stalled.contains(&format!(
                    "HTTP 503 Service Unavailable: \"{PARTIAL}\" (the rest of the body did not arrive within"
                )),
                "{stalled}"
            );
            assert!(
                busy.contains(
                    r#"HTTP 429 Too Many Requests: "too many streams" (Retry-After: 120)"#
                ),
                "{busy}"
            );
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no refusal reported before connectTimeout: {servers:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A streamable-HTTP server that refuses `initialize` with 429 and `Retry-After: 120` is not
/// tried again before those 120 s (the doubling alone would try after 1 s).
#[tokio::test]
async fn a_refusal_with_retry_after_holds_the_next_try_back_that_long() {
    let (port, _server) = fixture().await;
    let c = Companion::start(json!({
        "mcpServers": { "busy": { "url": format!("http://127.0.0.1:{port}/mcp-busy") } },
        "ssrfWhitelist": ["127.0.0.1/32"],
    }));
    let mut seen = None;
    assert!(
        crate::common::eventually(Duration::from_secs(30), || {
            let out = c.cli(&["status", "--json"]);
            let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            seen = report["servers"][0].as_object().cloned();
            report["servers"][0]["state"] == "backoff"
        })
        .await,
        "busy never backed off: {seen:?}\n{}",
        c.log()
    );
    let server = seen.unwrap_or_default();
    let error = server["lastError"].as_str().unwrap_or_default();
    assert!(
        error.contains("HTTP 429 Too Many Requests") && error.contains("(Retry-After: 120)"),
        "{server:?}"
    );
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as u64;
    let retry_at = server["retryAtMs"]
        .as_u64()
        .expect("retry_at_ms while backing off");
    assert!(
        retry_at > now_ms + 100_000,
        "the next try is {} ms away, not the server's 120 s",
        retry_at.saturating_sub(now_ms)
    );
}
