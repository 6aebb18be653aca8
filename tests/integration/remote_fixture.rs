//! Fixtures for the remote-server tests: our own rmcp streamable-HTTP server (records request
//! headers, can expire its session with HTTP 404), a redirecting server, a listener that only
//! counts accepted connections, and the Python SDK's FastMCP server. Loopback only.

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::json;

use crate::common::{everything_js, peers_root, python_sdk2};

/// A one-tool (`echo`) MCP server.
#[derive(Clone)]
pub struct EchoServer;

impl ServerHandler for EchoServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let schema = json!({"type": "object", "properties": {"message": {"type": "string"}}});
        let schema = Arc::new(schema.as_object().cloned().unwrap_or_default());
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "echo",
            "Return the message",
            schema,
        )]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let message = request
            .arguments
            .and_then(|a| a.get("message").and_then(|m| m.as_str().map(str::to_owned)))
            .unwrap_or_default();
        Ok(CallToolResponse::Complete(CallToolResult::success(vec![
            ContentBlock::text(message),
        ])))
    }
}

/// What the HTTP fixture saw and can be told to do.
#[derive(Default)]
pub struct Shared {
    /// Headers of every request, in order.
    pub headers: Mutex<Vec<HeaderMap>>,
    /// Method and `mcp-session-id` of every request, in order.
    pub requests: Mutex<Vec<(String, Option<String>)>>,
    /// Session ids handed out (from `mcp-session-id` response headers).
    pub sessions: Mutex<Vec<String>>,
    /// Set to make the next request on a session answer 404 and forget that session.
    pub expire_next: AtomicBool,
    expired: Mutex<HashSet<String>>,
}

async fn gatekeeper(State(shared): State<Arc<Shared>>, req: Request, next: Next) -> Response {
    shared.headers.lock().unwrap().push(req.headers().clone());
    let session = req
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    shared
        .requests
        .lock()
        .unwrap()
        .push((req.method().to_string(), session.clone()));
    if let Some(id) = session {
        if shared.expire_next.swap(false, Ordering::SeqCst) {
            shared.expired.lock().unwrap().insert(id.clone());
        }
        if shared.expired.lock().unwrap().contains(&id) {
            return (StatusCode::NOT_FOUND, "session not found").into_response();
        }
    }
    let resp = next.run(req).await;
    if let Some(id) = resp
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
    {
        let mut sessions = shared.sessions.lock().unwrap();
        if !sessions.iter().any(|s| s == id) {
            sessions.push(id.to_owned());
        }
    }
    resp
}

/// An in-process HTTP server on 127.0.0.1; stopped when dropped.
pub struct HttpFixture {
    pub port: u16,
    pub shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for HttpFixture {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Our rmcp streamable-HTTP server at `/mcp`.
pub async fn mcp_server() -> HttpFixture {
    mcp_server_at("127.0.0.1").await
}

/// Our rmcp streamable-HTTP server at `/mcp` on `ip` (another loopback address is another
/// origin).
pub async fn mcp_server_at(ip: &str) -> HttpFixture {
    let shared = Arc::new(Shared::default());
    let app = axum::Router::new()
        .nest_service("/mcp", echo_service())
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            gatekeeper,
        ));
    serve_at(app, shared, ip).await
}

/// `app` on 127.0.0.1 with every request recorded in [`Shared`] (and `expire_next` obeyed).
pub async fn serve_recorded(app: axum::Router) -> HttpFixture {
    let shared = Arc::new(Shared::default());
    let app = app.layer(axum::middleware::from_fn_with_state(
        shared.clone(),
        gatekeeper,
    ));
    serve(app, shared).await
}

/// Our server at `/mcp`, with `/old` answering `307` to `/mcp` (a same-origin redirect).
pub async fn mcp_server_moved() -> HttpFixture {
    let shared = Arc::new(Shared::default());
    let app = axum::Router::new()
        .nest_service("/mcp", echo_service())
        .route(
            "/old",
            axum::routing::any(|| async { axum::response::Redirect::temporary("/mcp") }),
        )
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            gatekeeper,
        ));
    serve(app, shared).await
}

/// The echo MCP server as a streamable-HTTP service (to nest under a path).
pub fn echo_service() -> StreamableHttpService<EchoServer, LocalSessionManager> {
    StreamableHttpService::new(
        || Ok(EchoServer),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    )
}

/// A server answering every request with `307 Temporary Redirect` to `location`.
pub async fn redirector(location: String) -> HttpFixture {
    let shared = Arc::new(Shared::default());
    let app = axum::Router::new()
        .fallback(move || {
            let location = location.clone();
            async move { axum::response::Redirect::temporary(&location) }
        })
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            gatekeeper,
        ));
    serve(app, shared).await
}

async fn serve(app: axum::Router, shared: Arc<Shared>) -> HttpFixture {
    serve_at(app, shared, "127.0.0.1").await
}

async fn serve_at(app: axum::Router, shared: Arc<Shared>, ip: &str) -> HttpFixture {
    let (port, task) = listen_at(app, ip).await;
    HttpFixture { port, shared, task }
}

/// `app` served on a free port of 127.0.0.1: the port, and the task serving it (which runs on
/// when the handle is dropped).
pub async fn listen(app: axum::Router) -> (u16, tokio::task::JoinHandle<()>) {
    listen_at(app, "127.0.0.1").await
}

async fn listen_at(app: axum::Router, ip: &str) -> (u16, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind((ip, 0)).await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (port, task)
}

/// A listener on `addr` that accepts and counts connections, and never answers.
pub async fn accept_counter(addr: &str) -> (u16, Arc<AtomicUsize>, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind(addr).await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            seen.fetch_add(1, Ordering::SeqCst);
            held.push(stream);
        }
    });
    (port, count, task)
}

/// The Python (SDK 2.x) of the peers venv, or `None` with a loud skip message.
pub fn peer_python() -> Option<PathBuf> {
    let py = python_sdk2(&peers_root());
    if py.exists() {
        Some(py)
    } else {
        eprintln!(
            "SKIPPED: {} missing; run tests/peers/setup.sh",
            py.display()
        );
        None
    }
}

/// A child process killed (by PID) when dropped.
pub struct Peer {
    pub child: Child,
    pub port: u16,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// Starts `tests/peers/fastmcp_server.py MODE --port N EXTRA…` and waits for its port.
pub fn fastmcp(python: &std::path::Path, mode: &str, extra: &[&str]) -> Peer {
    fastmcp_on(python, mode, extra, free_port())
}

/// [`fastmcp`] on a given port (to restart a server where it was).
pub fn fastmcp_on(python: &std::path::Path, mode: &str, extra: &[&str], port: u16) -> Peer {
    python_server("fastmcp_server.py", python, mode, extra, port)
}

/// Starts `tests/peers/SCRIPT MODE --port N EXTRA…` and waits for its port.
pub fn python_server(
    script: &str,
    python: &std::path::Path,
    mode: &str,
    extra: &[&str],
    port: u16,
) -> Peer {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers")
        .join(script);
    let child = Command::new(python)
        .arg(&script)
        .arg(mode)
        .arg("--port")
        .arg(port.to_string())
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {}: {e}", script.display()));
    let peer = Peer { child, port };
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "{} {mode} did not listen",
            script.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    peer
}

/// Starts `@modelcontextprotocol/server-everything MODE` bound to 127.0.0.1 (through the
/// `loopback-listen.cjs` preload), or `None` with a loud skip message when it is not installed.
pub fn everything(mode: &str) -> Option<Peer> {
    everything_on(mode, free_port())
}

/// [`everything`] on a given port (to restart a server where it was).
pub fn everything_on(mode: &str, port: u16) -> Option<Peer> {
    let index = everything_js(&peers_root());
    if !index.exists() {
        eprintln!(
            "SKIPPED: {} missing; run tests/peers/setup.sh",
            index.display()
        );
        return None;
    }
    let preload = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/peers/loopback-listen.cjs"
    );
    let child = Command::new("node")
        .arg(index)
        .arg(mode)
        .env("PORT", port.to_string())
        .env("NODE_OPTIONS", format!("--require {preload}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn node");
    let peer = Peer { child, port };
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "server-everything {mode} did not listen"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    Some(peer)
}
