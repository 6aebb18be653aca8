//! Tool calls: default tools, test tools, JSON-RPC errors, progress and cancellation.

use super::*;

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
    // Every default tool declares itself read-only and closed-world, so agents whose default
    // policy asks before an unannotated tool (Codex) run them without a person.
    assert_eq!(tools.len(), 4);
    for tool in &tools {
        let hints = tool.annotations.as_ref().expect("annotations");
        assert_eq!(
            (
                hints.read_only_hint,
                hints.destructive_hint,
                hints.idempotent_hint,
                hints.open_world_hint
            ),
            (Some(true), Some(false), Some(true), Some(false)),
            "{}",
            tool.name
        );
    }

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

    let argv = call(&s, "argv", json!({})).await;
    let expected: Vec<String> = std::env::args().skip(1).collect();
    assert_eq!(
        first_text(&argv),
        serde_json::Value::from(expected).to_string()
    );
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

/// Checked on the wire: an rmcp client hands notifications to spawned tasks, so what it records
/// after the response says nothing about the order they arrived in.
#[tokio::test]
async fn sleep_reports_increasing_progress_before_its_result() {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(serve_on(DemoOptions::default(), server_io));
    let (read, mut write) = tokio::io::split(client_io);
    let mut lines = BufReader::new(read).lines();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "sleep", "arguments": {"seconds": 0.6}, "_meta": {"progressToken": "p"}}}),
    ];
    for m in messages {
        write
            .write_all(format!("{m}\n").as_bytes())
            .await
            .expect("write");
    }
    let mut progress = Vec::new();
    let result = loop {
        let line = lines.next_line().await.expect("read").expect("a line");
        let msg: serde_json::Value = serde_json::from_str(&line).expect("JSON");
        if msg["id"] == 2 {
            break msg["result"].clone();
        }
        if msg["method"] == "notifications/progress" {
            assert_eq!(msg["params"]["progressToken"], "p", "{msg}");
            progress.push(msg["params"]["progress"].as_f64().expect("a number"));
        }
    };
    assert_eq!(result["content"][0]["text"], "slept 0.6 s");
    assert_eq!(progress.first(), Some(&0.0), "{progress:?}");
    assert_eq!(progress.last(), Some(&0.6), "{progress:?}");
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
