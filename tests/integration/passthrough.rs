//! Proves that calls reach the right upstream capability and that results come back in MCP form:
//! text unchanged, images, structuredContent, isError, JSON-RPC errors with code and message,
//! resources, resource templates, prompts, large payloads, and servers that print garbage.

use std::time::Duration;

use serde_json::json;

use crate::common::{Companion, call, demo, text, tool_names};

#[tokio::test]
async fn demo_server_capabilities_are_served_and_results_pass_through() {
    let c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    let servers = c.settled().await;
    assert_eq!(
        servers[0].state.as_str(),
        "running",
        "{servers:?}\n{}",
        c.log()
    );
    let client = c.client().await;
    let names = tool_names(&client).await;
    for expected in [
        "mcp_demo_echo",
        "mcp_demo_add",
        "mcp_demo_image",
        "mcp_demo_odd_name_v2",
        "mcp_demo_resource_hello",
        "mcp_demo_resource_greeting",
        "mcp_demo_prompt_greet",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} missing from {names:?}"
        );
    }

    let echo = call(
        &client,
        "mcp_demo_echo",
        json!({ "message": "hi  there\n✓" }),
    )
    .await;
    assert_eq!(text(&echo), "hi  there\n✓");
    assert_ne!(echo.is_error, Some(true));

    let add = call(&client, "mcp_demo_add", json!({ "a": 2, "b": 40 })).await;
    assert_eq!(text(&add), "42");
    assert_eq!(add.structured_content, Some(json!({ "sum": 42.0 })));

    let image = call(
        &client,
        "mcp_demo_image",
        json!({ "width": 4, "height": 3 }),
    )
    .await;
    let img = image
        .content
        .iter()
        .find_map(|c| c.as_image())
        .expect("an image block");
    assert_eq!(img.mime_type, "image/png");
    assert!(
        img.data.starts_with("iVBORw0KGgo"),
        "base64 PNG signature: {}",
        &img.data[..16]
    );

    let odd = call(&client, "mcp_demo_odd_name_v2", json!({})).await;
    assert_eq!(text(&odd), "odd ok");

    let hello = call(&client, "mcp_demo_resource_hello", json!({})).await;
    assert_eq!(text(&hello), "Hello from the demo server");
    let greeting = call(
        &client,
        "mcp_demo_resource_greeting",
        json!({ "name": "Ada" }),
    )
    .await;
    assert_eq!(text(&greeting), "Hello, Ada!");
    // URI template variables are percent-encoded (RFC 6570 simple expansion).
    let encoded = call(
        &client,
        "mcp_demo_resource_greeting",
        json!({ "name": "Ada Lovelace" }),
    )
    .await;
    assert_eq!(text(&encoded), "Hello, Ada%20Lovelace!");
    let pixel = call(&client, "mcp_demo_resource_pixel", json!({})).await;
    assert!(
        pixel.content[0].as_image().is_some(),
        "image blob becomes an image block: {pixel:?}"
    );

    let prompt = call(
        &client,
        "mcp_demo_prompt_greet",
        json!({ "name": "Bob", "style": "formal" }),
    )
    .await;
    assert_eq!(text(&prompt), "user: Please greet Bob in a formal way.");
}

#[tokio::test]
async fn errors_come_back_as_is_error_with_the_servers_message() {
    let c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    c.settled().await;
    let client = c.client().await;

    let fail = call(
        &client,
        "mcp_demo_fail",
        json!({ "message": "disk is full" }),
    )
    .await;
    assert_eq!(fail.is_error, Some(true));
    assert_eq!(text(&fail), "disk is full");

    let rpc = call(
        &client,
        "mcp_demo_protocol_error",
        json!({ "code": -32042, "message": "quota exceeded" }),
    )
    .await;
    assert_eq!(rpc.is_error, Some(true));
    let msg = text(&rpc);
    assert!(
        msg.contains("quota exceeded") && msg.contains("-32042") && msg.contains("\"demo\""),
        "{msg}"
    );

    let unknown = call(&client, "mcp_demo_nope", json!({})).await;
    assert_eq!(unknown.is_error, Some(true));
    assert!(
        text(&unknown).contains("unknown tool \"mcp_demo_nope\""),
        "{}",
        text(&unknown)
    );

    let bad_template = call(&client, "mcp_demo_resource_greeting", json!({})).await;
    assert_eq!(bad_template.is_error, Some(true), "{bad_template:?}");
}

#[tokio::test]
async fn a_non_json_line_on_stdout_is_skipped_and_large_results_arrive_whole() {
    let c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    c.settled().await;
    let client = c.client().await;

    let garbage = call(&client, "mcp_demo_garbage", json!({})).await;
    assert_eq!(text(&garbage), "ok after garbage");
    let echo = call(&client, "mcp_demo_echo", json!({ "message": "still fine" })).await;
    assert_eq!(text(&echo), "still fine");

    let big = call(&client, "mcp_demo_big", json!({ "bytes": 3 * 1024 * 1024 })).await;
    assert_eq!(text(&big).len(), 3 * 1024 * 1024);
    assert_eq!(c.server("demo").await.state.as_str(), "running");
}

#[tokio::test]
async fn progress_is_forwarded_and_cancellation_reaches_the_server() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Clone, Default)]
    struct Progress(Arc<AtomicUsize>);
    impl rmcp::ClientHandler for Progress {
        async fn on_progress(
            &self,
            _p: rmcp::model::ProgressNotificationParam,
            _cx: rmcp::service::NotificationContext<rmcp::RoleClient>,
        ) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    let mut entry = demo(&[]);
    entry["env"] = json!({ "RUST_LOG": "info" });
    let c = Companion::start(json!({ "mcpServers": { "demo": entry } }));
    c.settled().await;
    let seen = Progress::default();
    let client = c.client_with(seen.clone()).await;
    // rmcp's client attaches a progressToken to every request.
    let slept = call(&client, "mcp_demo_sleep", json!({ "seconds": 1 })).await;
    assert_ne!(slept.is_error, Some(true), "{slept:?}");
    assert!(
        seen.0.load(Ordering::SeqCst) >= 2,
        "progress notifications forwarded: {}",
        seen.0.load(Ordering::SeqCst)
    );

    // Abandon a long call: the companion must forward notifications/cancelled upstream.
    let args = json!({ "seconds": 30 })
        .as_object()
        .cloned()
        .expect("object");
    let long = client
        .call_tool(rmcp::model::CallToolRequestParams::new("mcp_demo_sleep").with_arguments(args));
    assert!(
        tokio::time::timeout(Duration::from_millis(500), long)
            .await
            .is_err()
    );
    let cancelled = crate::common::eventually(Duration::from_secs(5), || {
        let out = c.cli(&["logs", "demo"]);
        String::from_utf8_lossy(&out.stdout).contains("sleep cancelled by the client")
    })
    .await;
    assert!(
        cancelled,
        "upstream saw the cancellation; logs:\n{}",
        String::from_utf8_lossy(&c.cli(&["logs", "demo"]).stdout)
    );
}

#[tokio::test]
async fn upstream_pagination_is_followed_to_the_end() {
    let c = Companion::start(json!({ "mcpServers": {
        "paged": demo(&["--page-size", "2", "--extra-tools", "7"]),
        "flat": demo(&["--extra-tools", "7"]),
    } }));
    let servers = c.settled().await;
    assert!(
        servers.iter().all(|s| s.state.as_str() == "running"),
        "{servers:?}"
    );
    assert!(servers[0].tools > 20, "{servers:?}");
    assert_eq!(
        servers[0].tools, servers[1].tools,
        "a paginated server lists as much as an unpaginated one"
    );
    let client = c.client().await;
    let names = tool_names(&client).await;
    assert!(names.contains(&"mcp_paged_gen_6".to_owned()));
    assert!(names.contains(&"mcp_paged_prompt_review_code".to_owned()));
}
