//! In-process tests: an rmcp client talks to the demo server over a `tokio::io::duplex` pair
//! and checks every tool, list, read and get that can run without exiting the process
//! (`crash` is left to the integration tests that spawn the binary).

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ErrorCode, GetPromptRequestParams, JsonObject,
    PaginatedRequestParams, ReadResourceRequestParams, ResourceContents, Role,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceError, ServiceExt as _};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Notify;

use super::output::spawn_line_output;
use super::server::DemoServer;
use super::tools::{GARBAGE_LINE, ODD_TOOL, Tools};
use super::{DemoOptions, png, resources, serve_on};

mod lists;
mod tools;

/// Records the notifications the tests look for.
#[derive(Clone, Debug, Default)]
struct TestClient {
    tools_changed: Arc<Notify>,
}

impl ClientHandler for TestClient {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.notify_one();
    }
}

struct Session {
    client: RunningService<RoleClient, TestClient>,
    handler: TestClient,
    tools: Arc<Tools>,
}

/// Starts a server with `opts` and connects a [`TestClient`] to it.
async fn connect(opts: DemoOptions) -> Session {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_io);
    let (writer, raw_lines, _output_task) = spawn_line_output(write);
    let server = DemoServer::new(&opts, raw_lines);
    let tools = server.tools.clone();
    tokio::spawn(async move {
        if let Ok(running) = server.serve((read, writer)).await {
            let _ = running.waiting().await;
        }
    });
    let handler = TestClient::default();
    let client = handler
        .clone()
        .serve(client_io)
        .await
        .expect("client connects");
    Session {
        client,
        handler,
        tools,
    }
}

fn test_opts() -> DemoOptions {
    DemoOptions {
        test_tools: true,
        ..DemoOptions::default()
    }
}

fn args(value: serde_json::Value) -> JsonObject {
    value.as_object().cloned().expect("arguments are an object")
}

async fn call(s: &Session, name: &str, arguments: serde_json::Value) -> CallToolResult {
    s.client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args(arguments)))
        .await
        .unwrap_or_else(|e| panic!("{name} failed: {e}"))
}

fn first_text(result: &CallToolResult) -> &str {
    result.content[0]
        .as_text()
        .expect("text block")
        .text
        .as_str()
}

#[tokio::test]
async fn serve_on_reports_server_info_and_returns_when_the_client_leaves() {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let server = tokio::spawn(serve_on(DemoOptions::default(), server_io));
    let client = ().serve(client_io).await.expect("client connects");
    let info = client.peer_info().expect("peer info");
    let server_info = info.server_info.as_ref().expect("server info");
    assert_eq!(server_info.name, "mcp-companion-demo");
    assert_eq!(server_info.version, env!("CARGO_PKG_VERSION"));
    let caps = &info.capabilities;
    assert!(
        caps.tools
            .as_ref()
            .and_then(|t| t.list_changed)
            .unwrap_or(false)
    );
    assert!(caps.resources.is_some() && caps.prompts.is_some() && caps.logging.is_some());

    let echoed = client
        .call_tool(
            CallToolRequestParams::new("echo").with_arguments(args(json!({"message": " hi "}))),
        )
        .await
        .expect("echo");
    assert_eq!(first_text(&echoed), " hi ");

    client.cancel().await.expect("client closes");
    let result = tokio::time::timeout(Duration::from_secs(5), server).await;
    assert!(
        matches!(result, Ok(Ok(Ok(())))),
        "serve_on ended with {result:?}"
    );
}

/// `garbage` is checked on the wire, because an rmcp client would reject the line.
#[tokio::test]
async fn garbage_line_arrives_whole_before_the_reply() {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(serve_on(test_opts(), server_io));
    let (read, mut write) = tokio::io::split(client_io);
    let mut lines = BufReader::new(read).lines();
    let send = |v: serde_json::Value| format!("{v}\n");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    write.write_all(send(init).as_bytes()).await.expect("write");
    let reply = lines.next_line().await.expect("read").expect("init reply");
    assert!(reply.contains("mcp-companion-demo"), "{reply}");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "garbage", "arguments": {}}});
    write
        .write_all(send(initialized).as_bytes())
        .await
        .expect("write");
    write.write_all(send(call).as_bytes()).await.expect("write");

    let first = lines
        .next_line()
        .await
        .expect("read")
        .expect("garbage line");
    assert_eq!(first, GARBAGE_LINE);
    let second = lines.next_line().await.expect("read").expect("reply");
    let reply: serde_json::Value = serde_json::from_str(&second).expect("reply is JSON");
    assert_eq!(reply["id"], 2);
    assert_eq!(reply["result"]["content"][0]["text"], "ok after garbage");
}
