//! Remote (streamable HTTP) servers of the 2026-07-28 era: a server that speaks only that
//! revision refuses `initialize` (rmcp's answer, or HTTP 400 with an id-less -32022) and is
//! reached through `server/discover`, per-request `_meta` and multi round-trip requests, by
//! agents of the `initialize` era (the Python SDK 2.x through `bridge`, rmcp), with its
//! configured header or its OAuth sign-in on every request. And a remote server answering
//! `initialize` with a version we do not know is refused naming it. Loopback only.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use axum::response::IntoResponse;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequest,
    ElicitRequestParams, ElicitationSchema, InputRequest, InputRequiredResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::common::{BIN, Companion, agent_call, call, peers_dir, python_sdk2, run_script, text};
use crate::remote_fixture::{HttpFixture, serve_recorded};

/// The `requestState` the `confirm` tool hands out on its first round.
const STATE: &str = "modern-confirm-1";
/// The bearer token configured for the server (a test value).
const TOKEN: &str = "modern-bearer-7f3a";

/// A server that speaks only MCP 2026-07-28: `echo`, and `confirm`, which asks the client to
/// confirm with an `InputRequiredResult` and says what it answered.
#[derive(Clone)]
struct ModernServer;

fn object(schema: Value) -> Arc<serde_json::Map<String, Value>> {
    Arc::new(schema.as_object().cloned().unwrap_or_default())
}

impl ServerHandler for ModernServer {
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Owned(vec![ProtocolVersion::V_2026_07_28])
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let echo = object(json!({"type": "object", "properties": {"message": {"type": "string"}}}));
        Ok(ListToolsResult::with_all_items(vec![
            Tool::new("echo", "Return the message", echo),
            Tool::new(
                "confirm",
                "Ask the client to confirm",
                object(json!({"type": "object"})),
            ),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let done = |t: String| {
            Ok(CallToolResponse::Complete(CallToolResult::success(vec![
                ContentBlock::text(t),
            ])))
        };
        match request.name.as_ref() {
            "echo" => done(
                request
                    .arguments
                    .and_then(|a| a.get("message").and_then(|m| m.as_str().map(str::to_owned)))
                    .unwrap_or_default(),
            ),
            "confirm" => {
                if let Some(answer) = request.input_responses.as_ref().and_then(|r| r.get("ok")) {
                    let kept = request.request_state.as_deref() == Some(STATE);
                    return done(format!(
                        "confirm: {} {} (state kept: {kept})",
                        answer["action"].as_str().unwrap_or("-"),
                        answer["content"]
                    ));
                }
                let schema = ElicitationSchema::builder()
                    .required_bool("ok")
                    .build()
                    .map_err(|e| McpError::internal_error(e.to_string(), None))?;
                let form = ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: "Go ahead?".to_owned(),
                    requested_schema: schema,
                };
                Ok(CallToolResponse::InputRequired(InputRequiredResult::new(
                    Some(BTreeMap::from([(
                        "ok".to_owned(),
                        InputRequest::Elicitation(ElicitRequest::new(form)),
                    )])),
                    Some(STATE.to_owned()),
                )))
            }
            other => Err(McpError::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

/// [`ModernServer`] over streamable HTTP at `/mcp`.
fn modern_router() -> axum::Router {
    let service = StreamableHttpService::new(
        || Ok(ModernServer),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    axum::Router::new().nest_service("/mcp", service)
}

/// [`modern_router`] on loopback, every request's headers recorded.
async fn modern_server() -> HttpFixture {
    serve_recorded(modern_router()).await
}

/// Runs `script` (under `tests/peers`) with the Python SDK 2.x against `bridge` on `c`'s
/// socket, off the runtime.
async fn sdk_agent(peers: &Path, script: &str, args: &[&str], c: &Companion) -> Value {
    let python = python_sdk2(peers);
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers")
        .join(script);
    let home = c.home.clone();
    let mut args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    args.extend([
        "--".into(),
        BIN.into(),
        "bridge".into(),
        "--socket".into(),
        c.socket.display().to_string(),
    ]);
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_script(&python, &script, &args, &home, Duration::from_secs(60))
    })
    .await
    .expect("join agent")
}

#[tokio::test]
async fn a_2026_only_remote_server_serves_2025_agents_with_its_header_on_every_request() {
    let server = modern_server().await;
    let c = Companion::start(json!({
        "mcpServers": { "modern": {
            "url": format!("http://127.0.0.1:{}/mcp", server.port),
            "headers": { "Authorization": format!("Bearer {TOKEN}") },
        } },
        "ssrfWhitelist": ["127.0.0.1"],
    }));
    c.settled().await;
    let status = c.server("modern").await;
    assert_eq!(status.state.as_str(), "running", "{status:?}\n{}", c.log());
    assert_eq!(status.protocol.as_deref(), Some("2026-07-28"), "{status:?}");
    assert_eq!(status.tools, 2, "{status:?}");

    // An rmcp agent of the `initialize` era.
    let client = c.client().await;
    let echoed = call(&client, "mcp_modern_echo", json!({"message": "rmcp"})).await;
    assert_eq!(text(&echoed), "rmcp");
    assert!(echoed.is_error != Some(true), "{echoed:?}");

    if let Some(peers) = peers_dir() {
        // The Python SDK 2.x of the `initialize` era lists and calls.
        let run = sdk_agent(
            &peers,
            "agent.py",
            &[
                "--list",
                "--call",
                "mcp_modern_echo",
                r#"{"message":"sdk2"}"#,
            ],
            &c,
        )
        .await;
        assert_eq!(run["exit"], json!(0), "{run:#}");
        let tools = run["tools"].as_array().expect("tools");
        for name in ["mcp_modern_echo", "mcp_modern_confirm"] {
            assert!(tools.iter().any(|t| t == name), "{name}: {run:#}");
        }
        let echo = agent_call(&run, "mcp_modern_echo");
        assert_eq!(echo["content"][0]["text"], json!("sdk2"), "{run:#}");

        // The server's request for input reaches it as elicitation, and its answer goes back
        // with the server's state.
        let run = sdk_agent(
            &peers,
            "asking_agent.py",
            &[
                "--elicit",
                r#"{"ok":true}"#,
                "--call",
                "mcp_modern_confirm",
                "{}",
            ],
            &c,
        )
        .await;
        assert_eq!(run["exit"], json!(0), "{run:#}");
        assert_eq!(
            run["asked"][0]["method"],
            json!("elicitation/create"),
            "{run:#}"
        );
        assert_eq!(run["asked"][0]["message"], json!("Go ahead?"), "{run:#}");
        let confirm = agent_call(&run, "mcp_modern_confirm");
        assert_eq!(
            confirm["content"][0]["text"],
            json!(r#"confirm: accept {"ok":true} (state kept: true)"#),
            "{run:#}"
        );
    }

    // Every request carried the configured header; none carried a session; every one after
    // the refused `initialize` named 2026-07-28.
    let headers = server.shared.headers.lock().unwrap().clone();
    assert!(headers.len() >= 3, "{headers:?}");
    for h in &headers {
        assert_eq!(h["authorization"], format!("Bearer {TOKEN}").as_str());
        assert!(h.get("mcp-session-id").is_none(), "{h:?}");
    }
    for h in &headers[1..] {
        assert_eq!(
            h.get("mcp-protocol-version").map(|v| v.as_bytes()),
            Some(&b"2026-07-28"[..]),
            "{headers:?}"
        );
    }
    assert!(!c.log().contains(TOKEN), "the token reached the log");
}

/// A 2026-07-28-only server written by hand: it refuses `initialize` with HTTP 400 and an
/// -32022 error without an id (the shape of middleware, and of the Python SDK 2.x's HTTP status
/// mapping), and answers `server/discover`, `tools/list` and `tools/call` (`echo`).
async fn modern_by_hand(body: axum::body::Bytes) -> axum::response::Response {
    let message: Value = serde_json::from_slice(&body).unwrap_or_default();
    if message.get("id").is_none() {
        return StatusCode::ACCEPTED.into_response();
    }
    let id = message["id"].clone();
    let complete = |mut result: Value| {
        result["resultType"] = json!("complete");
        result["_meta"] =
            json!({ "io.modelcontextprotocol/serverInfo": { "name": "by-hand", "version": "0" } });
        json!({ "jsonrpc": "2.0", "id": id, "result": result })
    };
    let (status, answer) = match message["method"].as_str().unwrap_or_default() {
        "initialize" => (
            StatusCode::BAD_REQUEST,
            json!({ "jsonrpc": "2.0", "id": null, "error": {
                "code": -32022, "message": "Unsupported protocol version",
                "data": { "supported": ["2026-07-28"], "requested": message["params"]["protocolVersion"] },
            } }),
        ),
        "server/discover" => (
            StatusCode::OK,
            complete(json!({
                "supportedVersions": ["2026-07-28"],
                "capabilities": { "tools": {} },
                "ttlMs": 0, "cacheScope": "private",
            })),
        ),
        "tools/list" => (
            StatusCode::OK,
            complete(json!({
                "tools": [{ "name": "echo", "inputSchema": { "type": "object" } }],
                "ttlMs": 0, "cacheScope": "private",
            })),
        ),
        "tools/call" => (
            StatusCode::OK,
            complete(json!({ "content": [{ "type": "text",
                "text": message["params"]["arguments"]["message"] }] })),
        ),
        _ => (
            StatusCode::NOT_FOUND,
            json!({ "jsonrpc": "2.0", "id": message["id"],
                "error": { "code": -32601, "message": "method not found" } }),
        ),
    };
    (
        status,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        answer.to_string(),
    )
        .into_response()
}

#[tokio::test]
async fn a_2026_only_server_refusing_initialize_with_http_400_is_reached_through_discover() {
    let server =
        serve_recorded(axum::Router::new().route("/mcp", axum::routing::post(modern_by_hand)))
            .await;
    let c = Companion::start(json!({
        "mcpServers": { "byhand": { "url": format!("http://127.0.0.1:{}/mcp", server.port) } },
        "ssrfWhitelist": ["127.0.0.1"],
    }));
    c.settled().await;
    let status = c.server("byhand").await;
    assert_eq!(status.state.as_str(), "running", "{status:?}\n{}", c.log());
    assert_eq!(status.protocol.as_deref(), Some("2026-07-28"), "{status:?}");
    let client = c.client().await;
    let echoed = call(&client, "mcp_byhand_echo", json!({"message": "by hand"})).await;
    assert_eq!(text(&echoed), "by hand", "{echoed:?}");
}

/// Answers `initialize` with protocol version 2099-01-01, notifications with 202.
async fn future_answer(body: axum::body::Bytes) -> axum::response::Response {
    let message: Value = serde_json::from_slice(&body).unwrap_or_default();
    if message.get("id").is_none() {
        return StatusCode::ACCEPTED.into_response();
    }
    let answer = if message["method"] == "initialize" {
        json!({ "jsonrpc": "2.0", "id": message["id"], "result": {
            "protocolVersion": "2099-01-01",
            "capabilities": { "tools": {} },
            "serverInfo": { "name": "future", "version": "0" },
        } })
    } else {
        json!({ "jsonrpc": "2.0", "id": message["id"],
            "error": { "code": -32601, "message": "method not found" } })
    };
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        answer.to_string(),
    )
        .into_response()
}

#[tokio::test]
async fn a_remote_server_answering_initialize_with_an_unknown_version_is_refused() {
    let server =
        serve_recorded(axum::Router::new().route("/mcp", axum::routing::post(future_answer))).await;
    let c = Companion::start(json!({
        "mcpServers": { "future": { "url": format!("http://127.0.0.1:{}/mcp", server.port) } },
        "ssrfWhitelist": ["127.0.0.1"],
    }));
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        let s = c.server("future").await;
        if s.last_error.is_some() {
            break s;
        }
        assert!(Instant::now() < deadline, "no error: {s:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_ne!(status.state.as_str(), "running", "{status:?}");
    let error = status.last_error.unwrap_or_default();
    assert!(
        error.contains("\"2099-01-01\"") && error.contains("does not know"),
        "{error}"
    );
    assert_eq!(status.tools, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_2026_only_server_behind_oauth_is_signed_in_and_refreshed_like_any_other() {
    use crate::oauth::{start, wait_state};
    use mcp_companion::supervisor::ServerState;
    let fixture = crate::oauth_fixture::start_with(modern_router()).await;
    let c = start(crate::oauth::config(&fixture.url(), &["127.0.0.1/32"]));

    // The 401 comes before any era is settled: the server waits for a sign-in.
    wait_state(&c, ServerState::NeedsSignIn).await;
    let login = c.cli(&["login", "secure"]);
    assert!(
        login.status.success(),
        "login failed:\n{}\n{}",
        String::from_utf8_lossy(&login.stderr),
        c.log()
    );
    wait_state(&c, ServerState::Running).await;
    let status = c.server("secure").await;
    assert_eq!(status.protocol.as_deref(), Some("2026-07-28"), "{status:?}");

    let client = c.client().await;
    let result = call(&client, "mcp_secure_echo", json!({"message": "signed in"})).await;
    assert_eq!(text(&result), "signed in");

    // A revoked token: one silent refresh, then the call succeeds.
    fixture
        .shared
        .revoke_next
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let result = call(&client, "mcp_secure_echo", json!({"message": "again"})).await;
    assert_eq!(text(&result), "again", "{result:?}\n{}", c.log());
    let grants = fixture.shared.token_field("grant_type");
    assert_eq!(grants, ["authorization_code", "refresh_token"]);
    crate::oauth::assert_no_token("the log", &c.log());
}
