//! Proves what a careless server or client cannot break: a tool list with malformed entries keeps
//! its usable tools; messages far above rmcp's 16 MiB default pass in both directions (up to the
//! documented 64 MiB); the CLI ends quietly when its output pipe closes; a call to a stopped
//! server's tool says the server is stopped.

use std::process::{Command, Stdio};

use serde_json::json;

use crate::common::{
    BIN, CallPath, Companion, ServeWithLimit, call, demo, on_both_paths, peers_dir, python_sdk2,
    run_agent, text, tool_names,
};

const RAW_SERVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/raw_server.py");

#[tokio::test]
async fn a_malformed_tool_costs_only_itself() {
    let c = Companion::start(
        json!({ "mcpServers": { "raw": { "command": "python3", "args": [RAW_SERVER] } } }),
    );
    c.running().await;
    let client = c.client().await;
    let names = tool_names(&client).await;
    assert_eq!(
        names,
        vec![
            "mcp_raw_echo",
            "mcp_raw_bare",
            "mcp_raw_typeless",
            "mcp_raw_stringy"
        ],
        "the nameless entry is skipped"
    );
    let tools = client.list_all_tools().await.expect("tools/list");
    let bare = tools
        .iter()
        .find(|t| t.name == "mcp_raw_bare")
        .expect("bare");
    assert_eq!(
        bare.input_schema.get("type"),
        Some(&json!("object")),
        "missing schema replaced"
    );
    assert_eq!(
        text(&call(&client, "mcp_raw_bare", json!({})).await),
        "bare: "
    );
    assert!(
        c.log().contains("skipping a malformed tool"),
        "the skip is logged"
    );
    for tool in &tools {
        assert_eq!(
            tool.input_schema.get("type"),
            Some(&json!("object")),
            "{}",
            tool.name
        );
    }
    assert_eq!(
        tools
            .iter()
            .find(|t| t.name == "mcp_raw_typeless")
            .expect("typeless")
            .input_schema["properties"],
        json!({"message": {"type": "string"}}),
        "a schema without type keeps its properties"
    );
    assert!(
        c.log()
            .contains(r#"tool inputSchema has type \"string\", but MCP requires"#)
            || c.log()
                .contains(r#"tool inputSchema has type "string", but MCP requires"#),
        "the replaced schema is logged: {}",
        c.log()
    );

    // The official Python SDK 2.x validates the whole listing: one tool of type string made it
    // reject every server's tools.
    let Some(peers) = peers_dir() else { return };
    let socket = c.socket.to_string_lossy().into_owned();
    let home = c.home.clone();
    let python = python_sdk2(&peers);
    let run = tokio::task::spawn_blocking(move || {
        let args = ["--list", "--", BIN, "--socket", &socket, "bridge"];
        run_agent(&python, &args, &home, std::time::Duration::from_secs(60))
    })
    .await
    .expect("join agent");
    assert_eq!(
        run["tools"],
        json!([
            "mcp_raw_echo",
            "mcp_raw_bare",
            "mcp_raw_typeless",
            "mcp_raw_stringy"
        ]),
        "{run:#}"
    );
}

async fn messages_above_16_mib_pass_both_ways(path: CallPath) {
    let c = Companion::start_on(json!({ "mcpServers": { "demo": demo(&[]) } }), path);
    c.settled().await;
    // A 20 MiB argument from an agent (rmcp's default limit would drop it without an answer).
    let big = "x".repeat(20 * 1024 * 1024);
    let stream = mcp_companion::ipc::socket::connect(&c.socket)
        .await
        .expect("connect");
    let client = crate::common::client_config()
        .serve_with_limit(stream)
        .await;
    let echoed = call(&client, "mcp_demo_echo", json!({ "message": big })).await;
    assert_eq!(text(&echoed).len(), big.len());

    // A 20 MiB result through the CLI.
    let out = c.cli(&["call", "mcp_demo_big", r#"{"bytes": 20971520}"#]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        out.stdout.len(),
        20 * 1024 * 1024 + 1,
        "the text plus a newline"
    );
}

async fn cli_output_into_a_closed_pipe_ends_quietly_and_stopped_tools_say_why(path: CallPath) {
    let c = Companion::start_on(
        json!({ "mcpServers": { "demo": demo(&["--extra-tools", "300"]) } }),
        path,
    );
    c.settled().await;
    // `tools | head -1`: the reader goes away after one line.
    let mut tools = Command::new(BIN)
        .args(["tools", "--socket"])
        .arg(&c.socket)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tools");
    drop(tools.stdout.take());
    let out = tools.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("panicked"),
        "no panic on a closed pipe: {err}"
    );

    let stop = c.cli(&["stop", "demo"]);
    assert!(stop.status.success());
    let client = c.client().await;
    let result = call(&client, "mcp_demo_echo", json!({ "message": "x" })).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        text(&result),
        "tool \"mcp_demo_echo\" is unavailable: server \"demo\" is stopped"
    );
}

on_both_paths!(
    messages_above_16_mib_pass_both_ways,
    messages_above_16_mib_pass_both_ways
);
on_both_paths!(
    cli_output_into_a_closed_pipe_ends_quietly_and_stopped_tools_say_why,
    cli_output_into_a_closed_pipe_ends_quietly_and_stopped_tools_say_why
);

/// What a server wrote to its stderr reaches `status` and `logs` as text, not as terminal
/// commands: a screen clear and a window title are shown escaped, by `status` and by `logs`
/// (to a pipe too, as here: a pipe often ends at a terminal, `less -R` or a shared log).
#[tokio::test]
async fn a_servers_terminal_escapes_are_shown_not_obeyed_by_status() {
    let c = Companion::start(json!({ "mcpServers": { "rude": {
        "command": "sh",
        "args": ["-c", "printf '\\033[2J\\033]0;pwned\\007boom\\n' >&2; exit 3"],
    } } }));
    let servers = c.settled().await;
    let error = servers[0].last_error.clone().unwrap_or_default();
    assert!(
        error.contains("\u{1b}]0;pwned"),
        "the raw text is kept: {error:?}"
    );
    let out = c.cli(&["status"]);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
        "{shown:?}"
    );
    assert!(shown.contains(r"\x1b[2J\x1b]0;pwned\x07boom"), "{shown}");
    let logs = c.cli(&["logs", "rude"]);
    let logged = String::from_utf8_lossy(&logs.stdout);
    assert!(
        !logged.contains('\u{1b}') && logged.contains(r"\x1b[2J\x1b]0;pwned\x07boom"),
        "{logged:?}"
    );
    // A name in the config with escapes: reload and doctor show it escaped too.
    let rude_name = "e\u{1b}]0;title\u{7}";
    let doc = json!({ "mcpServers": { rude_name: { "command": "/nonexistent\u{1b}[2J" } } });
    std::fs::write(&c.config, doc.to_string()).expect("write");
    let config = c.config.to_str().expect("utf-8");
    for command in [&["reload"][..], &["doctor", "--config", config]] {
        let out = c.cli(command);
        let shown = String::from_utf8_lossy(&out.stdout);
        assert!(
            !shown.contains('\u{1b}') && shown.contains(r"e\x1b]0;title\x07"),
            "{command:?}: {shown:?}"
        );
    }
}

/// A tool's error text is for the person reading `call`'s stderr: a server's escapes are shown
/// escaped there even when stdout goes to a pipe (as `call … | jq` does).
#[tokio::test]
async fn a_tools_error_text_is_shown_not_obeyed_by_call() {
    let c = Companion::start(json!({ "mcpServers": { "demo": crate::common::demo(&[]) } }));
    c.settled().await;
    let out = c.cli(&[
        "call",
        "mcp_demo_fail",
        r#"{"message":"APPROVED\u001b[2J\u001b]0;pwned\u0007"}"#,
    ]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !said.contains('\u{1b}') && said.contains(r"APPROVED\x1b[2J\x1b]0;pwned\x07"),
        "{said:?}"
    );
}
