//! Proves that calls reach the right upstream capability and that results come back in MCP form:
//! text unchanged, images, structuredContent, isError, JSON-RPC errors with code and message,
//! resources, resource templates, prompts, large payloads, and servers that print garbage.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use serde_json::json;

use crate::common::{CallPath, Companion, call, demo, on_both_paths, text, tool_names};
use crate::raw::RawAgent;

async fn demo_server_capabilities_are_served_and_results_pass_through(path: CallPath) {
    let c = Companion::start_on(json!({ "mcpServers": { "demo": demo(&[]) } }), path);
    c.running().await;
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

async fn errors_come_back_as_is_error_with_the_servers_message(path: CallPath) {
    let c = Companion::start_on(json!({ "mcpServers": { "demo": demo(&[]) } }), path);
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
        json!({ "code": -32050, "message": "quota exceeded" }),
    )
    .await;
    assert_eq!(rpc.is_error, Some(true));
    let msg = text(&rpc);
    assert!(
        msg.contains("quota exceeded") && msg.contains("-32050") && msg.contains("\"demo\""),
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

async fn a_non_json_line_on_stdout_is_skipped_and_large_results_arrive_whole(path: CallPath) {
    let c = Companion::start_on(json!({ "mcpServers": { "demo": demo(&[]) } }), path);
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

/// Every progress notification of a call reaches the agent, re-addressed to the agent's token,
/// in order, and before that call's result (the spec forbids progress for a finished request).
/// The demo `sleep` reports right before its result, the case where forwarding raced the answer.
async fn progress_reaches_the_agent_in_order_and_before_its_result(path: CallPath) {
    let c = Companion::start_on(json!({ "mcpServers": { "demo": demo(&[]) } }), path);
    c.settled().await;
    let mut agent = RawAgent::connect(&c.socket).await;
    let mut seen: HashMap<String, Vec<f64>> = HashMap::new();
    let mut finished = HashSet::new();
    for round in 0..4_u64 {
        let mut waiting = HashMap::new();
        for i in 0..5_u64 {
            let id = 100 + round * 10 + i;
            let seconds = 0.05 * (i + 1) as f64;
            agent
                .call_with_progress(
                    id,
                    "mcp_demo_sleep",
                    json!({ "seconds": seconds }),
                    &format!("t{id}"),
                )
                .await;
            waiting.insert(id, seconds);
        }
        while !waiting.is_empty() {
            let msg = agent.recv().await;
            if msg["method"] == "notifications/progress" {
                let token = msg["params"]["progressToken"]
                    .as_str()
                    .expect("our token")
                    .to_owned();
                assert!(
                    !finished.contains(&token),
                    "progress after the result: {msg}"
                );
                seen.entry(token)
                    .or_default()
                    .push(msg["params"]["progress"].as_f64().expect("number"));
                continue;
            }
            let id = msg["id"]
                .as_u64()
                .unwrap_or_else(|| panic!("unexpected message {msg}"));
            let seconds = waiting.remove(&id).expect("a call of this round");
            assert_eq!(
                msg["result"]["content"][0]["text"],
                format!("slept {seconds} s"),
                "{msg}"
            );
            let token = format!("t{id}");
            let progress = seen.get(&token).cloned().unwrap_or_default();
            assert_eq!(progress.first(), Some(&0.0), "{token}: {progress:?}");
            assert_eq!(
                progress.last(),
                Some(&seconds),
                "{token}: the last report came after the result: {progress:?}"
            );
            assert!(
                progress.windows(2).all(|w| w[0] < w[1]),
                "{token}: {progress:?}"
            );
            finished.insert(token);
        }
    }
}

/// An agent's `notifications/cancelled` reaches the upstream server. The cancellation is sent only
/// once the server has reported that the call is running, so it cannot overtake the call.
async fn cancellation_reaches_the_server(path: CallPath) {
    let mut entry = demo(&[]);
    entry["env"] = json!({ "RUST_LOG": "info" });
    let c = Companion::start_on(json!({ "mcpServers": { "demo": entry } }), path);
    c.settled().await;
    let mut agent = RawAgent::connect(&c.socket).await;
    agent
        .call_with_progress(7, "mcp_demo_sleep", json!({ "seconds": 30 }), "long")
        .await;
    let started = agent.recv().await;
    assert_eq!(started["method"], "notifications/progress", "{started}");
    agent
        .send(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 7, "reason": "test"}}),
        )
        .await;
    let logs = || String::from_utf8_lossy(&c.cli(&["logs", "demo"]).stdout).into_owned();
    let cancelled = crate::common::eventually(Duration::from_secs(30), || {
        logs().contains("sleep cancelled by the client")
    })
    .await;
    assert!(cancelled, "upstream saw no cancellation; logs:\n{}", logs());
}

#[tokio::test]
async fn upstream_pagination_is_followed_to_the_end() {
    let c = Companion::start(json!({ "mcpServers": {
        "paged": demo(&["--page-size", "2", "--extra-tools", "7"]),
        "flat": demo(&["--extra-tools", "7"]),
    } }));
    let servers = c.running().await;
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

on_both_paths!(
    demo_server_capabilities_are_served_and_results_pass_through,
    demo_server_capabilities_are_served_and_results_pass_through
);
on_both_paths!(
    errors_come_back_as_is_error_with_the_servers_message,
    errors_come_back_as_is_error_with_the_servers_message
);
on_both_paths!(
    a_non_json_line_on_stdout_is_skipped_and_large_results_arrive_whole,
    a_non_json_line_on_stdout_is_skipped_and_large_results_arrive_whole
);
on_both_paths!(
    progress_reaches_the_agent_in_order_and_before_its_result,
    progress_reaches_the_agent_in_order_and_before_its_result
);
on_both_paths!(
    cancellation_reaches_the_server,
    cancellation_reaches_the_server
);
