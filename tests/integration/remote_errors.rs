//! Proves that a remote server's refusal reaches `status` and the agent in the server's own
//! words: the HTTP status, its body text, the `error` / `error_description` of a 401/403
//! `WWW-Authenticate` challenge, a JSON-RPC error answering `initialize`, and an invalid content
//! block named by index and field — never a Rust `Debug` dump or a type name. A block of a type
//! no revision knows is no error: it reaches the agent as the server sent it.

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::common::{Companion, call, text};
use crate::raw::RawAgent;

/// Texts that only a Rust `Debug` dump or a type name would contain.
const DUMPS: [&str; 6] = [
    "ErrorData {",
    "ErrorCode(",
    "Transport [",
    "rmcp::",
    "reqwest::",
    "Some(",
];

fn challenge(status: StatusCode, value: &'static str) -> Response {
    let mut headers = HeaderMap::new();
    headers.insert(header::WWW_AUTHENTICATE, value.parse().expect("header"));
    (status, headers, "denied").into_response()
}

/// A JSON-RPC server with hand-written answers: `initialize`, `tools/list` with the tools `bad`
/// and `future`; `bad`'s result has an `image` block without `data`, `future`'s a block of
/// `"type": "blob"`, a type no MCP revision has.
/// `value` as an `application/json` response.
fn json_response(value: Value) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

async fn hand_written(body: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or_default();
    let id = body.get("id").cloned();
    let method = body.get("method").and_then(Value::as_str).unwrap_or("");
    let result = match (method, id.as_ref()) {
        (_, None) => return StatusCode::ACCEPTED.into_response(),
        ("initialize", _) => json!({
            "protocolVersion": body["params"]["protocolVersion"],
            "capabilities": { "tools": {} },
            "serverInfo": { "name": "hand-written", "version": "1" },
        }),
        ("tools/list", _) => json!({ "tools": [
            { "name": "bad", "inputSchema": { "type": "object" } },
            { "name": "future", "inputSchema": { "type": "object" } },
        ] }),
        ("tools/call", _) if body["params"]["name"] == "future" => json!({ "content": [
            { "type": "text", "text": "fine" },
            { "type": "blob", "data": "AAAA" },
        ] }),
        ("tools/call", _) => json!({ "content": [
            { "type": "text", "text": "fine" },
            { "type": "image", "mimeType": "image/png" },
        ] }),
        _ => json!({}),
    };
    json_response(json!({ "jsonrpc": "2.0", "id": id, "result": result }))
}

async fn refuse_initialize(body: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or_default();
    json_response(json!({
        "jsonrpc": "2.0",
        "id": body.get("id"),
        "error": { "code": -32602, "message": "unsupported protocol version: try 1999-01-01" },
    }))
}

async fn fixture() -> (u16, tokio::task::JoinHandle<()>) {
    use axum::routing::{get, post};
    let app = axum::Router::new()
        .route(
            "/401",
            post(|| async {
                challenge(
                    StatusCode::UNAUTHORIZED,
                    r#"Bearer realm="mcp", error="invalid_token", error_description="The access token expired""#,
                )
            }),
        )
        .route(
            "/403",
            post(|| async {
                challenge(
                    StatusCode::FORBIDDEN,
                    r#"Bearer error="insufficient_scope", scope="files:write", error_description="Writing needs the files:write scope""#,
                )
            }),
        )
        .route(
            "/400",
            post(|| async {
                (
                    StatusCode::BAD_REQUEST,
                    "unknown session: please re-initialize",
                )
            }),
        )
        .route(
            "/sse401",
            get(|| async {
                challenge(
                    StatusCode::UNAUTHORIZED,
                    r#"Bearer error="invalid_token", error_description="The access token expired""#,
                )
            }),
        )
        .route(
            "/sse400",
            get(|| async { (StatusCode::BAD_REQUEST, "no such stream") }),
        )
        .route(
            "/echo401",
            // A careless server that quotes the credential it refuses.
            post(|headers: HeaderMap| async move {
                let sent = headers
                    .get(header::AUTHORIZATION)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_owned();
                let mut out = HeaderMap::new();
                let value = format!(
                    r#"Bearer error="invalid_token", error_description="token {sent} is revoked""#
                );
                out.insert(header::WWW_AUTHENTICATE, value.parse().expect("header"));
                (StatusCode::UNAUTHORIZED, out, format!("token {sent} is revoked")).into_response()
            }),
        )
        .route("/rpc-error", post(refuse_initialize))
        .route("/blob", post(hand_written));
    crate::remote_fixture::listen(app).await
}

#[tokio::test]
async fn remote_refusals_are_reported_in_the_servers_own_words() {
    let (port, _server) = fixture().await;
    let url = |path: &str| format!("http://127.0.0.1:{port}/{path}");
    let c = Companion::start(json!({
        "mcpServers": {
            "unauthorized": { "url": url("401"), "connectTimeout": 5 },
            "forbidden": { "url": url("403"), "connectTimeout": 5 },
            "badrequest": { "url": url("400"), "connectTimeout": 5 },
            "refused": { "url": url("rpc-error"), "connectTimeout": 5 },
            "echoer": { "url": url("echo401"), "connectTimeout": 5,
                        "headers": { "Authorization": "Bearer s3cr3t-echoed-token" } },
            "blob": { "url": url("blob"), "connectTimeout": 5 },
            "sseunauthorized": { "type": "sse", "url": url("sse401"), "connectTimeout": 5 },
            "ssebadrequest": { "type": "sse", "url": url("sse400"), "connectTimeout": 5 },
        },
        "ssrfWhitelist": ["127.0.0.1/32"],
    }));
    let servers = c.settled().await;
    let error_of = |name: &str| {
        let s = servers
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no {name}"));
        assert_ne!(s.state.as_str(), "running", "{s:?}");
        s.last_error.clone().unwrap_or_default()
    };
    let expected: [(&str, &[&str]); 6] = [
        (
            "sseunauthorized",
            &["HTTP 401", "invalid_token", "The access token expired"],
        ),
        ("ssebadrequest", &["HTTP 400", "no such stream"]),
        (
            "unauthorized",
            &["HTTP 401", "invalid_token", "The access token expired"],
        ),
        (
            "forbidden",
            &[
                "HTTP 403",
                "insufficient_scope",
                "Writing needs the files:write scope",
            ],
        ),
        (
            "badrequest",
            &["HTTP 400", "unknown session: please re-initialize"],
        ),
        (
            "refused",
            &[
                "refused initialize",
                "unsupported protocol version: try 1999-01-01",
                "-32602",
            ],
        ),
    ];
    for (name, wants) in expected {
        let err = error_of(name);
        for want in wants {
            assert!(err.contains(want), "{name}: {want:?} missing from {err:?}");
        }
        for dump in DUMPS {
            assert!(!err.contains(dump), "{name}: {dump:?} in {err:?}");
        }
    }

    // The server's words are quoted, the credential it echoed is not.
    let echoed = error_of("echoer");
    assert!(
        echoed.contains("invalid_token") && echoed.contains("is revoked"),
        "{echoed:?}"
    );
    assert!(!echoed.contains("s3cr3t-echoed-token"), "{echoed:?}");
    assert!(
        !c.cli(&["status"])
            .stdout
            .windows(19)
            .any(|w| w == b"s3cr3t-echoed-token")
    );
    assert!(!c.log().contains("s3cr3t-echoed-token"), "{}", c.log());

    let blob = servers.iter().find(|s| s.name == "blob").expect("blob");
    assert_eq!(blob.state.as_str(), "running", "{blob:?}\n{}", c.log());
    let client = c.client().await;
    let result = call(&client, "mcp_blob_bad", json!({})).await;
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let said = text(&result);
    assert!(
        said.contains(r#"content block 1 (type "image"): field "data" is missing"#),
        "{said}"
    );
    for dump in DUMPS {
        assert!(!said.contains(dump), "{dump:?} in {said:?}");
    }

    let mut agent = RawAgent::connect(&c.socket).await;
    let answer = agent.call_tool(1, "mcp_blob_future", json!({})).await;
    let result = &answer["result"];
    assert_ne!(result["isError"], true, "{answer}");
    assert_eq!(
        result["content"][1],
        json!({ "type": "blob", "data": "AAAA" }),
        "{answer}"
    );
}
