//! `mcp-companion tools --tokens` over real servers (server-everything, the PyPI time server,
//! the demo): each view's bytes are exactly the `tools/list` result a real agent receives on
//! that view's socket, and its tokens are that JSON counted with o200k_base; servers add up to
//! the whole; search mode and a two-server profile cost less than everything.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::common::{Companion, demo, eventually, everything_js, peers_dir, time_server};

/// The `result` of `tools/list` as an agent on the socket at `path` receives it, as JSON text.
async fn listed_json(path: &Path) -> String {
    let stream = tokio::net::UnixStream::connect(path)
        .await
        .expect("connect");
    let (rd, mut wr) = stream.into_split();
    let mut lines = BufReader::new(rd).lines();
    for m in [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "0" } } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }),
    ] {
        wr.write_all(format!("{m}\n").as_bytes())
            .await
            .expect("write");
    }
    loop {
        let line = lines.next_line().await.expect("read").expect("an answer");
        let v: Value = serde_json::from_str(&line).expect("json");
        if v["id"] == json!(2) {
            return serde_json::to_string(&v["result"]).expect("json");
        }
    }
}

fn row<'a>(report: &'a Value, kind: &str, name: &str) -> &'a Value {
    report[kind]
        .as_array()
        .expect(kind)
        .iter()
        .find(|r| r["name"] == json!(name))
        .unwrap_or_else(|| panic!("no {kind} {name}: {report:#}"))
}

#[cfg(unix)]
#[tokio::test]
async fn tokens_of_each_view_are_those_of_what_its_agents_receive() {
    let Some(peers) = peers_dir() else { return };
    let c = Companion::start(json!({
        "mcpServers": {
            "everything": { "command": "node", "args": [everything_js(&peers), "stdio"] },
            "time": { "command": time_server(&peers) },
            "demo": demo(&[])
        },
        "profiles": {
            "search": { "toolSearch": true },
            "two": { "servers": ["everything", "time"] }
        }
    }));
    c.settled().await;
    let two = mcp_companion::ipc::paths::profile_socket(&c.socket, "two");
    let search = mcp_companion::ipc::paths::profile_socket(&c.socket, "search");
    assert!(eventually(Duration::from_secs(30), || two.exists() && search.exists()).await);

    let out = c.cli(&["tools", "--tokens", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["tokenizer"], json!("o200k_base"));
    let bpe = tiktoken_rs::o200k_base().expect("o200k_base");

    for (view, socket) in [
        ("everything", &c.socket),
        ("two", &two),
        ("search", &search),
    ] {
        let received = listed_json(socket).await;
        let r = row(&report, "views", view);
        assert_eq!(r["bytes"], json!(received.len()), "{view}: {r}");
        assert_eq!(
            r["tokens"],
            json!(bpe.encode_ordinary(&received).len()),
            "{view}: {r}"
        );
    }
    let everything = row(&report, "views", "everything");
    let servers = report["servers"].as_array().expect("servers");
    assert_eq!(servers.len(), 3, "{report:#}");
    let tools: u64 = servers
        .iter()
        .map(|s| s["tools"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(everything["tools"].as_u64(), Some(tools));
    assert!(row(&report, "servers", "everything")["tools"].as_u64() >= Some(10));
    assert_eq!(row(&report, "servers", "time")["tools"], json!(2));
    // Each server's share costs less than the whole; the two-server profile and search mode
    // cost less than everything, search mode least.
    let tokens = |r: &Value| r["tokens"].as_u64().expect("tokens");
    for s in servers {
        assert!(tokens(s) < tokens(everything), "{s}");
    }
    let search_row = row(&report, "views", "search");
    assert_eq!(search_row["toolSearch"], json!(true));
    assert!(tokens(row(&report, "views", "two")) < tokens(everything));
    assert!(tokens(search_row) < tokens(row(&report, "views", "two")));

    let table = c.cli(&["tools", "--tokens"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("view everything"), "{text}");
    assert!(text.contains("server time"), "{text}");
    assert!(text.contains("(tool search)"), "{text}");
}
