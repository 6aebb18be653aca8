//! The activity log (`src/activity`, `src/hub/record.rs`) of a real companion: every call on
//! either forwarding path and through the control API recorded exactly once with its outcome,
//! listings and server events too, no secret in the file in the default (shape) mode, the
//! `activity` command's filters, and a database that survives `kill -9` of its writer.

use std::path::PathBuf;
use std::time::Duration;

use mcp_companion::activity::query::{Filter, Record};
use serde_json::{Value, json};

use crate::common::activity::{calls, default_db, read, wait_for_calls};
use crate::common::{CallPath, Companion, demo, eventually, on_both_paths, signal};
use crate::raw::RawAgent;

async fn every_call_is_recorded_once_with_its_outcome(path: CallPath) {
    let mut entry = demo(&[]);
    entry["toolTimeout"] = json!(1);
    let c = Companion::start_on(json!({ "mcpServers": { "demo": entry } }), path);
    c.settled().await;
    let mut agent = RawAgent::connect(&c.socket).await;
    let ok = agent
        .call_tool(1, "mcp_demo_echo", json!({"message": "hello"}))
        .await;
    assert_eq!(ok["result"]["content"][0]["text"], "hello", "{ok}");
    agent
        .call_tool(2, "mcp_demo_fail", json!({"message": "nope"}))
        .await;
    agent
        .call_tool(3, "mcp_demo_protocol_error", json!({}))
        .await;
    let slow = agent
        .call_tool(4, "mcp_demo_sleep", json!({"seconds": 30}))
        .await;
    assert_eq!(slow["result"]["isError"], true, "{slow}");
    agent.call_tool(5, "mcp_demo_no_such_tool", json!({})).await;
    agent
        .send(&json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list"}))
        .await;
    agent.until_response(&json!(6)).await;
    let cli = c.cli(&["call", "mcp_demo_echo", r#"{"message":"from the cli"}"#]);
    assert!(cli.status.success(), "{cli:?}");

    let db = default_db(&c);
    let all = wait_for_calls(&db, 6).await;
    let taken = match path {
        CallPath::Fast => "fast",
        CallPath::Slow => "rmcp",
    };
    let one = |tool: &str, agent: &str| -> Record {
        let found: Vec<&Record> = all
            .iter()
            .filter(|r| r.tool.as_deref() == Some(tool) && r.agent.as_deref() == Some(agent))
            .collect();
        assert_eq!(found.len(), 1, "{tool} by {agent}: {all:#?}");
        found[0].clone()
    };
    let echo = one("mcp_demo_echo", "raw-agent");
    assert_eq!(echo.outcome.as_deref(), Some("ok"));
    assert_eq!(echo.path.as_deref(), Some(taken));
    assert_eq!(echo.server.as_deref(), Some("demo"));
    assert_eq!(echo.agent_version.as_deref(), Some("0"));
    assert_eq!(echo.bytes_in, Some(r#"{"message":"hello"}"#.len() as i64));
    assert!(echo.bytes_out.unwrap_or(0) > 0, "{echo:?}");
    assert_eq!(echo.arguments, Some(json!({"message": "string(5)"})));
    let fail = one("mcp_demo_fail", "raw-agent");
    assert_eq!(fail.outcome.as_deref(), Some("isError"), "{fail:?}");
    assert_eq!(fail.path.as_deref(), Some(taken));
    let rpc = one("mcp_demo_protocol_error", "raw-agent");
    assert_eq!(rpc.outcome.as_deref(), Some("error"), "{rpc:?}");
    assert_eq!(rpc.error_kind.as_deref(), Some("rpc"), "{rpc:?}");
    let timeout = one("mcp_demo_sleep", "raw-agent");
    assert_eq!(timeout.outcome.as_deref(), Some("timeout"), "{timeout:?}");
    assert!(timeout.duration_ms.unwrap_or(0.0) >= 1000.0, "{timeout:?}");
    let unknown = one("mcp_demo_no_such_tool", "raw-agent");
    assert_eq!(unknown.outcome.as_deref(), Some("error"));
    assert_eq!(unknown.error_kind.as_deref(), Some("unavailable"));
    // `mcp-companion call` is an MCP client of its own.
    let control = one("mcp_demo_echo", "mcp-companion-cli");
    assert_eq!(control.outcome.as_deref(), Some("ok"));
    assert_eq!(all.len(), 6, "exactly one entry per call: {all:#?}");

    let entries = read(&db, &Filter::default());
    assert!(
        entries
            .iter()
            .any(|r| r.kind == "list" && r.agent.as_deref() == Some("raw-agent")),
        "the listing: {entries:#?}"
    );
    assert!(
        entries.iter().any(|r| r.kind == "server"
            && r.server.as_deref() == Some("demo")
            && r.outcome.as_deref() == Some("running")),
        "the server event: {entries:#?}"
    );

    // The command reads the same log, filtered.
    let out = c.cli(&["activity", "--json", "--tool", "mcp_demo_fail"]);
    assert!(out.status.success(), "{out:?}");
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["outcome"], "isError");
    let out = c.cli(&["activity", "--outcome", "timeout", "--agent", "raw-agent"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.contains("demo/mcp_demo_sleep") && text.contains("timeout"),
        "{text}"
    );
    let out = c.cli(&["activity", "--since", "1h", "--server", "nobody"]);
    assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
    // An outcome the log never records is a mistake, said, not an empty answer.
    let out = c.cli(&["activity", "--outcome", "timedout"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && said.contains("\"timedout\" is no outcome")
            && said.contains("timeout"),
        "{out:?}"
    );
    let status = c.cli(&["status"]);
    let said = String::from_utf8_lossy(&status.stdout);
    assert!(
        said.contains(&format!("activity log: {}", db.display())),
        "{said}"
    );
}

on_both_paths!(
    every_call_is_recorded_once,
    every_call_is_recorded_once_with_its_outcome
);

/// A value the companion knows as a secret: an `env` value whose name says token.
const PLANTED: &str = "planted-Secret-4f9c2e71";

/// Runs one echo call carrying [`PLANTED`] (in the arguments, and so in the result) with
/// `recordPayloads` as given, stops the companion, and returns the log's entry and every byte
/// of its files.
async fn planted_call(record_payloads: bool) -> (Record, Vec<u8>) {
    let mut entry = demo(&[]);
    entry["env"] = json!({ "PLANTED_TOKEN": PLANTED });
    let mut c = Companion::start(json!({
        "mcpServers": { "demo": entry },
        "activity": { "recordPayloads": record_payloads },
    }));
    c.settled().await;
    let mut agent = RawAgent::connect(&c.socket).await;
    let message = planted_message();
    let answer = agent
        .call_tool(1, "mcp_demo_echo", json!({ "message": message }))
        .await;
    assert_eq!(answer["result"]["content"][0]["text"], message.as_str());
    let db = default_db(&c);
    let recorded = wait_for_calls(&db, 1).await.remove(0);
    drop(agent);
    assert!(c.terminate(Duration::from_secs(20)).success());
    let mut bytes = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        let file = PathBuf::from(format!("{}{suffix}", db.display()));
        if let Ok(b) = std::fs::read(&file) {
            bytes.extend(b);
        }
    }
    (recorded, bytes)
}

fn planted_message() -> String {
    format!("the key is {PLANTED}, keep it")
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[tokio::test]
async fn a_planted_secret_never_reaches_the_database() {
    let (shape, bytes) = planted_call(false).await;
    let size = format!("string({})", planted_message().len());
    assert_eq!(shape.arguments, Some(json!({ "message": size })));
    assert!(
        !contains(&bytes, PLANTED),
        "the secret is in the database file"
    );
    assert!(
        !contains(&bytes, "keep it"),
        "a value is in the database file"
    );

    // With payloads on, the values are kept and the secret is still masked.
    let (full, bytes) = planted_call(true).await;
    assert_eq!(
        full.arguments,
        Some(json!({"message": "the key is <redacted>, keep it"}))
    );
    assert!(contains(&bytes, "keep it"), "the payload is kept");
    assert!(
        !contains(&bytes, PLANTED),
        "the secret is in the database file"
    );
}

/// `kill -9` while calls are in flight and being written: the database opens, passes
/// SQLite's integrity check, keeps what was committed before the kill, and takes new entries.
#[tokio::test]
async fn a_killed_writer_leaves_a_sound_database() {
    let mut c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    c.settled().await;
    let db = default_db(&c);
    let mut agent = RawAgent::connect(&c.socket).await;
    // Calls one after the other until the companion dies under them.
    let caller = tokio::spawn(async move {
        for id in 1.. {
            agent
                .call_tool(id, "mcp_demo_echo", json!({"message": "x".repeat(200)}))
                .await;
        }
    });
    // Some are committed, more are coming: kill now.
    let committed_some = eventually(Duration::from_secs(30), || calls(&db).len() >= 20).await;
    assert!(committed_some, "no calls recorded");
    let before = calls(&db).len();
    let pid = c.child.as_ref().map(std::process::Child::id).expect("pid");
    signal(pid, rustix::process::Signal::KILL);
    let _ = c.child.take().map(|mut child| child.wait());
    caller.abort();

    let conn = rusqlite::Connection::open(&db).expect("reopen");
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity check");
    assert_eq!(check, "ok");
    drop(conn);
    let after = calls(&db).len();
    assert!(
        after >= before,
        "committed entries lost: {before} before, {after} after"
    );

    // A new writer takes over the file.
    let config = mcp_companion::config::ActivityConfig::default();
    let activity = mcp_companion::activity::Activity::open_with(&db, &config, 16, None)
        .expect("reopen to write");
    activity.record(mcp_companion::activity::Entry::Server(
        mcp_companion::activity::ServerEntry {
            at_ms: mcp_companion::activity::now_ms(),
            server: "after".into(),
            state: "stopped".into(),
            previous: None,
            detail: None,
        },
    ));
    assert!(activity.flush(Duration::from_secs(10)));
    let filter = Filter {
        server: Some("after".into()),
        ..Filter::default()
    };
    assert_eq!(read(&db, &filter).len(), 1);
}

/// A call of a tool that waits for the person's approval (its definition changed since it was
/// pinned) is recorded as `withheld`, and every call and listing carries the profile of the
/// session it came through (none for the default view), in the text and JSON output too; a
/// profile's call is named by the tool's wrapped name, whatever the profile's naming.
async fn withheld_calls_and_profiles_are_recorded(path: CallPath) {
    let dir = tempfile::tempdir().expect("tempdir");
    let overrides = dir.path().join("overrides.json");
    std::fs::write(&overrides, "{}").expect("write");
    let entry = demo(&["--tool-overrides", overrides.to_str().expect("utf-8 path")]);
    let c = Companion::start_on(
        json!({
            "mcpServers": { "demo": entry },
            "profiles": { "work": { "servers": ["demo"], "naming": "server" } }
        }),
        path,
    );
    c.settled().await;
    std::fs::write(&overrides, r#"{"echo": {"description": "Echo, changed."}}"#).expect("write");
    assert!(c.cli(&["restart", "demo"]).status.success());
    let waiting = eventually(Duration::from_secs(30), || {
        let out = c.cli(&["status"]);
        String::from_utf8_lossy(&out.stdout).contains("wait for approval")
    })
    .await;
    assert!(waiting, "{}", c.log());

    let mut agent = RawAgent::connect(&c.socket).await;
    let refused = agent
        .call_tool(1, "mcp_demo_echo", json!({"message": "x"}))
        .await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    agent
        .call_tool(2, "mcp_demo_add", json!({"a": 1, "b": 2}))
        .await;
    // The profile serves it as `demo_add`; the entry names it by its wrapped name.
    let cli = c.cli(&["call", "--profile", "work", "demo_add", r#"{"a":2,"b":3}"#]);
    assert!(cli.status.success(), "{cli:?}");

    let db = default_db(&c);
    let all = wait_for_calls(&db, 3).await;
    let echo: Vec<&Record> = all
        .iter()
        .filter(|r| r.tool.as_deref() == Some("mcp_demo_echo"))
        .collect();
    assert_eq!(echo.len(), 1, "{all:#?}");
    assert_eq!(
        echo[0].outcome.as_deref(),
        Some("withheld"),
        "{:?}",
        echo[0]
    );
    assert_eq!(echo[0].error_kind.as_deref(), Some("withheld"));
    assert_eq!(echo[0].profile, None);
    let work: Vec<&Record> = all
        .iter()
        .filter(|r| r.profile.as_deref() == Some("work"))
        .collect();
    assert_eq!(work.len(), 1, "{all:#?}");
    assert_eq!(work[0].tool.as_deref(), Some("mcp_demo_add"));
    assert_eq!(work[0].outcome.as_deref(), Some("ok"));

    let text = c.cli(&["activity", "--outcome", "withheld"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("demo/mcp_demo_echo  withheld (withheld)"),
        "{text}"
    );
    let json_out = c.cli(&["activity", "--profile", "work", "--json"]);
    let lines: Vec<Value> = String::from_utf8_lossy(&json_out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSONL"))
        .collect();
    assert!(!lines.is_empty(), "{json_out:?}");
    assert!(lines.iter().all(|l| l["profile"] == "work"), "{lines:#?}");
}

on_both_paths!(
    withheld_calls_and_profiles,
    withheld_calls_and_profiles_are_recorded
);
