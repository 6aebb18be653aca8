//! In-process tests: an rmcp client talks to the demo server over a `tokio::io::duplex` pair
//! and checks every tool, list, read and get that can run without exiting the process
//! (`crash` is left to the integration tests that spawn the binary).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientRequest, ErrorCode, GetPromptRequestParams,
    JsonObject, PaginatedRequestParams, ProgressNotificationParam, ReadResourceRequestParams,
    Request, ResourceContents, Role, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceError, ServiceExt as _};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Notify;

use super::output::spawn_line_output;
use super::server::DemoServer;
use super::tools::{GARBAGE_LINE, ODD_TOOL, Tools};
use super::{DemoOptions, png, resources, serve_on};

/// Records the notifications the tests look for.
#[derive(Clone, Debug, Default)]
struct TestClient {
    tools_changed: Arc<Notify>,
    progress: Arc<Mutex<Vec<f64>>>,
}

impl ClientHandler for TestClient {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.notify_one();
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress
            .lock()
            .expect("progress lock")
            .push(params.progress);
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

#[tokio::test]
async fn default_tools_echo_add_and_image_answer_as_specified() {
    let s = connect(DemoOptions::default()).await;
    assert_eq!(
        first_text(&call(&s, "echo", json!({"message": "héllo\n"})).await),
        "héllo\n"
    );

    let sum = call(&s, "add", json!({"a": 2, "b": 40.5})).await;
    assert_eq!(first_text(&sum), "42.5");
    assert_eq!(sum.structured_content, Some(json!({"sum": 42.5})));
    let tools = s.client.list_all_tools().await.expect("list");
    let add = tools.iter().find(|t| t.name == "add").expect("add listed");
    assert!(add.output_schema.is_some());
    assert!(
        !tools.iter().any(|t| t.name == "fail"),
        "test tools hidden by default"
    );

    let image = call(&s, "image", json!({"width": 3, "height": 2})).await;
    let block = image.content[0].as_image().expect("image block");
    assert_eq!(block.mime_type, "image/png");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&block.data)
        .expect("base64");
    assert_eq!(bytes[..8], png::PNG_SIGNATURE);
    assert!(image.content[1].as_text().is_some());
}

#[tokio::test]
async fn bad_arguments_and_unknown_tools_are_invalid_params() {
    let s = connect(DemoOptions::default()).await;
    for (name, arguments) in [
        ("add", json!({"a": "two", "b": 1})),
        ("echo", json!({})),
        ("nope", json!({})),
        ("fail", json!({"message": "x"})),
    ] {
        let err = s
            .client
            .call_tool(CallToolRequestParams::new(name).with_arguments(args(arguments)))
            .await
            .expect_err(name);
        match err {
            ServiceError::McpError(e) => assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{name}"),
            other => panic!("{name}: unexpected {other}"),
        }
    }
}

#[tokio::test]
async fn test_tools_fail_big_odd_env_and_pid() {
    let s = connect(test_opts()).await;
    let failed = call(&s, "fail", json!({"message": "boom"})).await;
    assert_eq!(failed.is_error, Some(true));
    assert_eq!(first_text(&failed), "boom");

    for n in [0, 1, 100_000] {
        let big = call(&s, "big", json!({"bytes": n})).await;
        let text = first_text(&big);
        assert_eq!(text.len(), n, "big({n})");
        assert!(text.is_ascii());
    }

    assert_eq!(first_text(&call(&s, ODD_TOOL, json!({})).await), "odd ok");
    let tools = s.client.list_all_tools().await.expect("list");
    assert!(tools.iter().any(|t| t.name == ODD_TOOL));

    let path = call(&s, "get_env", json!({"name": "PATH"})).await;
    assert_eq!(path.is_error, Some(false));
    let unset = call(
        &s,
        "get_env",
        json!({"name": "MCP_COMPANION_DEMO_UNSET_VAR"}),
    )
    .await;
    assert_eq!(unset.is_error, Some(true));

    let pid = call(&s, "pid", json!({})).await;
    assert_eq!(first_text(&pid), std::process::id().to_string());
}

#[tokio::test]
async fn protocol_error_reaches_the_client_with_its_code_and_message() {
    let s = connect(test_opts()).await;
    for (arguments, code, message) in [
        (json!({}), -32042, "demo protocol error"),
        (
            json!({"code": -32001, "message": "custom"}),
            -32001,
            "custom",
        ),
    ] {
        let err = s
            .client
            .call_tool(CallToolRequestParams::new("protocol_error").with_arguments(args(arguments)))
            .await
            .expect_err("protocol_error fails");
        let ServiceError::McpError(e) = err else {
            panic!("expected a JSON-RPC error, got {err}");
        };
        assert_eq!(e.code, ErrorCode(code));
        assert_eq!(e.message, message);
    }
}

#[tokio::test]
async fn pagination_follows_cursors_and_rejects_unknown_ones() {
    let opts = DemoOptions {
        test_tools: true,
        extra_tools: 5,
        page_size: Some(2),
        ..DemoOptions::default()
    };
    let s = connect(opts).await;
    let mut names = Vec::new();
    let mut cursor = None;
    loop {
        let page = s
            .client
            .list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor)))
            .await
            .expect("page");
        assert!(page.tools.len() <= 2);
        names.extend(page.tools.into_iter().map(|t| t.name.into_owned()));
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    let all: Vec<_> = s
        .client
        .list_all_tools()
        .await
        .expect("all")
        .into_iter()
        .map(|t| t.name.into_owned())
        .collect();
    assert_eq!(names, all);
    assert_eq!(all.len(), 4 + 9 + 5);
    assert_eq!(all.last().map(String::as_str), Some("gen_4"));
    assert_eq!(first_text(&call(&s, "gen_4", json!({})).await), "gen_4 ok");

    assert_eq!(
        s.client
            .list_all_resources()
            .await
            .expect("resources")
            .len(),
        2
    );
    assert_eq!(s.client.list_all_prompts().await.expect("prompts").len(), 2);
    assert_eq!(
        s.client
            .list_all_resource_templates()
            .await
            .expect("templates")
            .len(),
        1
    );

    let bad = PaginatedRequestParams::default().with_cursor(Some("bogus".to_owned()));
    let err = s
        .client
        .list_prompts(Some(bad))
        .await
        .expect_err("bad cursor");
    let ServiceError::McpError(e) = err else {
        panic!("expected a JSON-RPC error, got {err}");
    };
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
}

#[tokio::test]
async fn resources_and_template_read_and_unknown_uri_is_not_found() {
    let s = connect(DemoOptions::default()).await;
    let read = |uri: &str| s.client.read_resource(ReadResourceRequestParams::new(uri));
    let hello = read(resources::HELLO_URI).await.expect("hello");
    let ResourceContents::TextResourceContents { text, .. } = &hello.contents[0] else {
        panic!("hello is text");
    };
    assert_eq!(text, "Hello from the demo server");

    let pixel = read(resources::PIXEL_URI).await.expect("pixel");
    let ResourceContents::BlobResourceContents {
        blob, mime_type, ..
    } = &pixel.contents[0]
    else {
        panic!("pixel is a blob");
    };
    assert_eq!(mime_type.as_deref(), Some("image/png"));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob)
        .expect("base64");
    assert_eq!(bytes[..8], png::PNG_SIGNATURE);

    let greeting = read("demo://greeting/Ada").await.expect("greeting");
    let ResourceContents::TextResourceContents { text, .. } = &greeting.contents[0] else {
        panic!("greeting is text");
    };
    assert_eq!(text, "Hello, Ada!");

    let err = read("demo://nowhere").await.expect_err("unknown uri");
    let ServiceError::McpError(e) = err else {
        panic!("expected a JSON-RPC error, got {err}");
    };
    assert_eq!(e.code, ErrorCode::RESOURCE_NOT_FOUND);
}

#[tokio::test]
async fn prompts_render_messages_and_require_arguments() {
    let s = connect(DemoOptions::default()).await;
    let get = |name: &str, arguments: serde_json::Value| {
        s.client
            .get_prompt(GetPromptRequestParams::new(name).with_arguments(args(arguments)))
    };
    let greet = get("greet", json!({"name": "Ada"})).await.expect("greet");
    assert_eq!(greet.messages.len(), 1);
    assert_eq!(greet.messages[0].role, Role::User);
    let text = greet.messages[0]
        .content
        .as_text()
        .expect("text")
        .text
        .clone();
    assert_eq!(text, "Please greet Ada in a friendly way.");
    let formal = get("greet", json!({"name": "Ada", "style": "formal"}))
        .await
        .expect("greet");
    let text = formal.messages[0]
        .content
        .as_text()
        .expect("text")
        .text
        .clone();
    assert_eq!(text, "Please greet Ada in a formal way.");

    let review = get("review_code", json!({"code": "fn main() {}"}))
        .await
        .expect("review");
    let roles: Vec<_> = review.messages.iter().map(|m| m.role.clone()).collect();
    assert_eq!(roles, [Role::User, Role::Assistant]);

    for (name, arguments) in [("greet", json!({})), ("nope", json!({}))] {
        let err = get(name, arguments).await.expect_err(name);
        let ServiceError::McpError(e) = err else {
            panic!("expected a JSON-RPC error, got {err}");
        };
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{name}");
    }
}

#[tokio::test]
async fn toggle_extra_notifies_list_changed_and_adds_then_removes_extra() {
    let s = connect(test_opts()).await;
    let has_extra = || async {
        let tools = s.client.list_all_tools().await.expect("list");
        tools.iter().any(|t| t.name == "extra")
    };
    assert!(!has_extra().await);

    for (added, answer) in [(true, "extra added"), (false, "extra removed")] {
        let changed = s.handler.tools_changed.notified();
        assert_eq!(
            first_text(&call(&s, "toggle_extra", json!({})).await),
            answer
        );
        tokio::time::timeout(Duration::from_secs(5), changed)
            .await
            .expect("notifications/tools/list_changed arrives");
        assert_eq!(has_extra().await, added);
        if added {
            assert_eq!(first_text(&call(&s, "extra", json!({})).await), "extra ok");
        }
    }
}

#[tokio::test]
async fn sleep_reports_progress_and_returns() {
    let s = connect(DemoOptions::default()).await;
    let params = CallToolRequestParams::new("sleep").with_arguments(args(json!({"seconds": 0.6})));
    let handle = s
        .client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(Request::new(params)),
            PeerRequestOptions::no_options(),
        )
        .await
        .expect("request sent");
    let response = handle.await_response().await.expect("sleep answers");
    let ServerResult::CallToolResult(result) = response else {
        panic!("unexpected response {response:?}");
    };
    assert_eq!(first_text(&result), "slept 0.6 s");
    let progress = s.handler.progress.lock().expect("progress lock").clone();
    assert!(progress.len() >= 2, "progress notifications: {progress:?}");
    assert!(
        progress.windows(2).all(|w| w[0] < w[1]),
        "progress increases: {progress:?}"
    );
}

#[tokio::test]
async fn sleep_stops_when_the_client_cancels() {
    let s = connect(DemoOptions::default()).await;
    let params = CallToolRequestParams::new("sleep").with_arguments(args(json!({"seconds": 30})));
    let call = tokio::time::timeout(Duration::from_millis(200), s.client.call_tool(params));
    assert!(call.await.is_err(), "sleep(30) outlived the timeout");
    // Dropping the call sends notifications/cancelled; the server must notice promptly.
    let stopped = async {
        while s
            .tools
            .cancelled_sleeps
            .load(std::sync::atomic::Ordering::SeqCst)
            == 0
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), stopped)
        .await
        .expect("sleep observed the cancellation");
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
