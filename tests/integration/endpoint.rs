//! Proves the local endpoint's protocol on the raw wire (newline-delimited JSON-RPC): the
//! handshake, id 0 and string ids, -32601 for unknown methods, `server/discover` before `initialize`, `ping`,
//! `tools/list` pagination, and the `bridge` and CLI front ends.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

use crate::common::{BIN, Companion, demo};

/// A raw line-oriented JSON-RPC connection to the socket.
struct Raw {
    rd: tokio::io::Lines<tokio::io::BufReader<tokio::net::unix::OwnedReadHalf>>,
    wr: tokio::net::unix::OwnedWriteHalf,
}

impl Raw {
    async fn open(c: &Companion) -> Raw {
        let (rd, wr) = tokio::net::UnixStream::connect(&c.socket)
            .await
            .expect("connect")
            .into_split();
        Raw {
            rd: tokio::io::BufReader::new(rd).lines(),
            wr,
        }
    }

    async fn send(&mut self, msg: Value) {
        let mut line = serde_json::to_vec(&msg).expect("json");
        line.push(b'\n');
        self.wr.write_all(&line).await.expect("write");
    }

    /// The next message that is a response (skips notifications).
    async fn response(&mut self) -> Value {
        loop {
            let line =
                tokio::time::timeout(std::time::Duration::from_secs(60), self.rd.next_line())
                    .await
                    .expect("answer in time")
                    .expect("read")
                    .expect("connection open");
            let v: Value = serde_json::from_str(&line).expect("json line");
            if v.get("id").is_some() {
                return v;
            }
        }
    }

    async fn request(&mut self, id: Value, method: &str, params: Value) -> Value {
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        self.response().await
    }

    async fn initialize(&mut self, id: Value) -> Value {
        let init = self
            .request(
                id,
                "initialize",
                json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "raw", "version": "0" } }),
            )
            .await;
        self.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .await;
        init
    }
}

#[tokio::test]
async fn raw_wire_handshake_ids_unknown_methods_and_discover() {
    let c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    c.settled().await;
    let mut raw = Raw::open(&c).await;

    // A 2026-07-28-era client probes server/discover first. The request is shaped as the
    // Python SDK 2.x sends it (peers README §8).
    let meta = json!({ "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "raw", "version": "0" },
        "io.modelcontextprotocol/clientCapabilities": {}
    } });
    let discover = raw.request(json!(1), "server/discover", meta).await;
    // Both eras are offered: the client picks 2026-07-28 or falls back to `initialize`.
    let supported = discover["result"]["supportedVersions"]
        .as_array()
        .unwrap_or_else(|| panic!("supported versions in {discover}"));
    assert!(
        supported.contains(&json!("2025-11-25")) && supported.contains(&json!("2026-07-28")),
        "{discover}"
    );
    assert_eq!(discover["result"]["resultType"], json!("complete"));
    assert_eq!(
        discover["result"]["capabilities"]["tools"]["listChanged"],
        json!(true),
        "{discover}"
    );
    // A version the endpoint does not serve: -32022 naming the ones it does.
    let future = json!({ "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2099-01-01",
        "io.modelcontextprotocol/clientInfo": { "name": "raw", "version": "0" },
        "io.modelcontextprotocol/clientCapabilities": {}
    } });
    let refused = raw.request(json!(2), "tools/list", future).await;
    assert_eq!(refused["error"]["code"], json!(-32022), "{refused}");
    assert!(
        refused["error"]["data"]["supported"]
            .as_array()
            .is_some_and(|s| s.contains(&json!("2026-07-28"))),
        "{refused}"
    );
    // Without the modern `_meta` envelope the probe is still answered, never ignored.
    let bare = raw.request(json!(9), "server/discover", json!({})).await;
    assert!(bare["error"]["code"].is_i64(), "{bare}");

    let init = raw.initialize(json!(0)).await;
    assert_eq!(init["id"], json!(0), "id 0 is answered as 0");
    assert_eq!(
        init["result"]["protocolVersion"],
        json!("2025-06-18"),
        "negotiated down to the client's"
    );
    assert_eq!(
        init["result"]["capabilities"]["tools"]["listChanged"],
        json!(true)
    );

    let ping = raw.request(json!("p-1"), "ping", json!({})).await;
    assert_eq!(ping["id"], json!("p-1"));
    assert_eq!(ping["result"], json!({}));

    let unknown = raw
        .request(json!(5), "resources/subscribe_everything", json!({}))
        .await;
    assert_eq!(unknown["error"]["code"], json!(-32601), "{unknown}");
    // The message says what happened, not just the method name.
    let message = unknown["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("is not supported by MCP Companion"),
        "{unknown}"
    );
    assert_eq!(
        unknown["error"]["data"]["method"],
        json!("resources/subscribe_everything")
    );
    let read = raw
        .request(json!(7), "resources/read", json!({ "uri": "file:///x" }))
        .await;
    // Served natively now: the only server with resources answers for a URI it does not list.
    assert!(read["error"]["code"].is_i64(), "{read}");
    assert_ne!(read["error"]["code"], json!(-32601), "{read}");
    let hello = raw
        .request(
            json!(10),
            "resources/read",
            json!({ "uri": "demo://static/hello" }),
        )
        .await;
    assert_eq!(
        hello["result"]["contents"][0]["uri"],
        json!("demo://static/hello"),
        "{hello}"
    );

    let list = raw.request(json!(6), "tools/list", json!({})).await;
    let tools = list["result"]["tools"].as_array().expect("tools");
    assert!(tools.iter().any(|t| t["name"] == "mcp_demo_echo"));
    assert!(
        tools.iter().all(|t| t["inputSchema"]["type"] == "object"),
        "schemas normalised"
    );

    let call = raw
        .request(
            json!(7),
            "tools/call",
            json!({ "name": "mcp_demo_echo", "arguments": { "message": "raw" } }),
        )
        .await;
    assert_eq!(call["result"]["content"][0]["text"], json!("raw"));

    let level = raw
        .request(json!(8), "logging/setLevel", json!({ "level": "debug" }))
        .await;
    assert!(level.get("result").is_some(), "{level}");
}

#[tokio::test]
async fn tools_list_is_paginated_with_a_cursor() {
    let c = Companion::start(json!({ "mcpServers": { "big": demo(&["--extra-tools", "1100"]) } }));
    c.settled().await;
    let mut raw = Raw::open(&c).await;
    raw.initialize(json!(1)).await;
    let first = raw.request(json!(2), "tools/list", json!({})).await;
    let page1 = first["result"]["tools"].as_array().expect("page 1").len();
    let cursor = first["result"]["nextCursor"]
        .as_str()
        .expect("a next cursor")
        .to_owned();
    let second = raw
        .request(json!(3), "tools/list", json!({ "cursor": cursor }))
        .await;
    let page2 = second["result"]["tools"].as_array().expect("page 2").len();
    assert!(second["result"].get("nextCursor").is_none(), "last page");
    assert_eq!(page1, 1000);
    assert_eq!(page1 + page2, c.server("big").await.tools);
    let bad = raw
        .request(json!(4), "tools/list", json!({ "cursor": "not-a-cursor" }))
        .await;
    assert_eq!(bad["error"]["code"], json!(-32602), "{bad}");
}

#[test]
fn bridge_without_a_companion_fails_clearly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(BIN)
        .args(["bridge", "--no-autostart", "--socket"])
        .arg(dir.path().join("mcp.sock"))
        .stdin(Stdio::null())
        .output()
        .expect("bridge");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nothing is listening") && err.contains("mcp-companion serve"),
        "{err}"
    );
}

#[tokio::test]
async fn bridge_carries_a_session_over_stdio() {
    let c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    c.settled().await;
    let socket = c.socket.clone();
    let answers = tokio::task::spawn_blocking(move || {
        let mut bridge = Command::new(BIN)
            .args(["bridge", "--socket"])
            .arg(&socket)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("bridge");
        let mut stdin = bridge.stdin.take().expect("stdin");
        let stdout = BufReader::new(bridge.stdout.take().expect("stdout"));
        let msgs = [
            json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "b", "version": "0" } } }),
            json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
            json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "mcp_demo_echo", "arguments": { "message": "through the bridge" } } }),
        ];
        for m in &msgs {
            writeln!(stdin, "{m}").expect("write");
        }
        // Closing stdin must still deliver the answers in flight, then end the bridge.
        drop(stdin);
        let lines: Vec<Value> = stdout
            .lines()
            .map(|l| serde_json::from_str(&l.expect("line")).expect("json"))
            .filter(|v: &Value| v.get("id").is_some())
            .collect();
        let status = bridge.wait().expect("bridge exit");
        (lines, status)
    })
    .await
    .expect("join");
    let (lines, status) = answers;
    assert!(status.success(), "{status:?}");
    let call = lines
        .iter()
        .find(|v| v["id"] == json!(2))
        .expect("call answered");
    assert_eq!(
        call["result"]["content"][0]["text"],
        json!("through the bridge")
    );
}

#[tokio::test]
async fn cli_tools_call_and_status() {
    let c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    c.settled().await;
    let tools = c.cli(&["tools", "--json"]);
    assert!(tools.status.success());
    let v: Value = serde_json::from_slice(&tools.stdout).expect("tools json");
    assert!(
        v["tools"]
            .as_array()
            .expect("array")
            .iter()
            .any(|t| t["name"] == "mcp_demo_echo")
    );

    let ok = c.cli(&["call", "mcp_demo_echo", r#"{"message":"cli"}"#]);
    assert!(ok.status.success());
    assert_eq!(String::from_utf8_lossy(&ok.stdout).trim(), "cli");
    let err = c.cli(&["call", "mcp_demo_fail", r#"{"message":"nope"}"#]);
    assert_eq!(err.status.code(), Some(1), "isError exits 1");
    // A tool's error and an unknown tool are said on stderr like the CLI's own errors.
    let unknown = c.cli(&["call", "mcp_demo_nope", "{}"]);
    assert_eq!(unknown.status.code(), Some(1));
    for out in [&err, &unknown] {
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.starts_with("error: "), "{said}");
        assert!(
            out.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("mcp_demo_nope"),
        "{}",
        String::from_utf8_lossy(&unknown.stderr)
    );
    let bad = c.cli(&["call", "mcp_demo_echo", "not json"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("JSON object"));

    let status = c.cli(&["status", "--json"]);
    let v: Value = serde_json::from_slice(&status.stdout).expect("status json");
    assert_eq!(v["servers"][0]["state"], json!("running"));
    assert!(v["servers"][0]["tools"].as_u64().expect("count") > 5);
}
