//! Tool names that fit the agent's own prefix: through `mcp-companion bridge`, an agent
//! named `claude-code` (which shows the model `mcp__mcp-companion__<name>`) gets every name
//! within 64 characters with that prefix, and a shortened name calls the tool; another agent
//! sees the full names.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::common::{BIN, Companion, demo};

/// A server name long enough that `mcp_<it>_echo` (57 characters) fits 64 but not 64 − 20.
const LONG: &str = "a-server-whose-name-is-long-for-model-apis";
const CLAUDE_CODE_PREFIX: &str = "mcp__mcp-companion__";

/// The `_meta` a 2026-07-28 request of `client` carries (no `initialize` in that era).
fn modern_meta(client: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": client, "version": "2.1" },
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// initialize as `client` (with `modern`: no initialize, `client` in every request's `_meta`
/// as MCP 2026-07-28 has it), tools/list, then a call of the tool `pick` picks from the listed
/// names with `{"message": "fits"}`: the names and the call's answer.
fn session(
    socket: &std::path::Path,
    client: &str,
    modern: bool,
    pick: impl Fn(&[String]) -> String,
) -> (Vec<String>, Value) {
    let mut bridge = Command::new(BIN)
        .args(["bridge", "--no-autostart", "--socket"])
        .arg(socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("bridge");
    let mut stdin = bridge.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(bridge.stdout.take().expect("stdout"));
    let mut answer = |id: u64| -> Value {
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                stdout.read_line(&mut line).expect("read") > 0,
                "bridge ended"
            );
            let v: Value = serde_json::from_str(&line).expect("json");
            if v["id"] == json!(id) {
                return v;
            }
        }
    };
    let meta = modern_meta(client);
    let msgs = if modern {
        vec![
            json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": { "_meta": meta } }),
        ]
    } else {
        vec![
            json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": client, "version": "2.1" } } }),
            json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
            json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }),
        ]
    };
    for m in msgs {
        writeln!(stdin, "{m}").expect("write");
    }
    if !modern {
        answer(1);
    }
    let list = answer(2);
    let names: Vec<String> = list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{list}"))
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    let echo = pick(&names);
    let mut call = json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "name": echo, "arguments": { "message": "fits" } } });
    if modern {
        call["params"]["_meta"] = meta;
    }
    writeln!(stdin, "{call}").expect("write");
    let result = answer(3);
    drop(stdin);
    let _ = bridge.wait();
    (names, result)
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_code_through_the_bridge_gets_names_that_fit_its_prefix_and_calls_them() {
    names_fit_claude_codes_prefix(false).await;
}

/// Claude Code 2.1 speaks MCP 2026-07-28: its name comes only in each request's `_meta`.
#[tokio::test(flavor = "multi_thread")]
async fn claude_code_on_2026_07_28_gets_names_that_fit_its_prefix_and_calls_them() {
    names_fit_claude_codes_prefix(true).await;
}

async fn names_fit_claude_codes_prefix(modern: bool) {
    let c = Companion::start(json!({ "mcpServers": { LONG: demo(&[]) } }));
    c.settled().await;
    let socket = c.socket.clone();
    let full = format!("mcp_{LONG}_echo");
    // Another agent sees the full names.
    let by_name = |names: &[String]| names.iter().find(|n| **n == full).cloned().expect("echo");
    let (others, result) =
        tokio::task::block_in_place(|| session(&socket, "nanobot", modern, by_name));
    assert_eq!(
        result["result"]["content"][0]["text"],
        json!("fits"),
        "{result}"
    );
    let at = others.iter().position(|n| *n == full).expect("echo listed");
    // Claude Code gets the same list in the same order, shortened where it must be.
    let by_place = |names: &[String]| names[at].clone();
    let (names, result) =
        tokio::task::block_in_place(|| session(&socket, "claude-code", modern, by_place));
    assert_eq!(names.len(), others.len());
    for n in &names {
        assert!(
            CLAUDE_CODE_PREFIX.len() + n.len() <= 64,
            "{CLAUDE_CODE_PREFIX}{n} is {} characters",
            CLAUDE_CODE_PREFIX.len() + n.len()
        );
    }
    assert_ne!(names[at], full, "{names:?}");
    assert_eq!(
        result["result"]["content"][0]["text"],
        json!("fits"),
        "{result}"
    );
    // The same names every time.
    let (again, _) =
        tokio::task::block_in_place(|| session(&socket, "claude-code", modern, by_place));
    assert_eq!(again, names);
}
