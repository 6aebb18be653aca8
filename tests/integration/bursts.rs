//! Bursts of notifications a server sends while answering one call (`tests/peers/burst_server.py`
//! writes them back to back, then the result): every one reaches the agent, in order, before the
//! result, as it would on one JSON-RPC stream; and an agent that stops reading during a flood
//! neither grows the companion's memory without bound nor holds up another agent.
//!
//! Each test's name says which integration filter runs it (`progress`, `log`, `bounds`).
//! `prompts/get` and `resources/read` answers wait for the log messages before them too.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::common::{BIN, CallPath, Companion};
use crate::raw::{RawAgent, progress_for};

const BURST_SERVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/burst_server.py");

/// Progress notifications in one burst: far more than any count-bounded queue would hold.
const PROGRESS_BURST: u64 = 500;

/// Log messages in one flood (about 5 MB of JSON).
const LOG_FLOOD: u64 = 20_000;

/// The flood calls run long on a loaded machine (every message is also written to the
/// companion's log): the default 30 s `toolTimeout` would end them as timed out.
fn start(path: CallPath) -> Companion {
    Companion::start_on(
        json!({ "mcpServers": { "burst": {
            "command": "python3", "args": [BURST_SERVER], "toolTimeout": 600 } } }),
        path,
    )
}

/// The `data` of the `notifications/message` among `messages`, in order.
fn log_lines(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| m["params"]["data"].as_str().expect("data").to_owned())
        .collect()
}

/// Asserts `lines` are the flood's `n` lines, in order.
fn assert_whole_flood(lines: &[String], n: u64) {
    assert_eq!(lines.len() as u64, n, "log messages before the result");
    for (k, line) in lines.iter().enumerate() {
        assert!(
            line.starts_with(&format!("line {k} ")),
            "message {k} out of order: {line:.40}"
        );
    }
}

fn assert_whole_progress(progress: &[f64]) {
    let expected: Vec<f64> = (1..=PROGRESS_BURST).map(|k| k as f64).collect();
    assert_eq!(
        progress.len() as u64,
        PROGRESS_BURST,
        "progress notifications before the result"
    );
    assert_eq!(progress, expected, "in order");
}

#[tokio::test]
async fn progress_burst_of_500_all_arrive_before_the_result_on_the_socket() {
    let c = start(CallPath::Fast);
    c.settled().await;
    let mut agent = RawAgent::connect(&c.socket).await;
    for id in 1..=2u64 {
        agent
            .call_with_progress(
                id,
                "mcp_burst_progress",
                json!({ "n": PROGRESS_BURST }),
                "burst",
            )
            .await;
        let (result, before) = agent.until_response(&json!(id)).await;
        assert_eq!(
            result["result"]["content"][0]["text"], "progress: 500",
            "{result}"
        );
        assert_whole_progress(&progress_for(&before, "burst"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn progress_burst_of_500_all_arrive_before_the_result_through_bridge() {
    let c = start(CallPath::Fast);
    c.settled().await;
    let mut bridge = Command::new(BIN)
        .args(["bridge", "--socket"])
        .arg(&c.socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("bridge");
    let mut stdin = bridge.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(bridge.stdout.take().expect("stdout"));
    let lines = [
        json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": { "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "b", "version": "0" } } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "mcp_burst_progress", "arguments": { "n": PROGRESS_BURST }, "_meta": { "progressToken": "b" } } }),
    ];
    for line in lines {
        writeln!(stdin, "{line}").expect("write to the bridge");
    }
    let mut before = Vec::new();
    let result = loop {
        let mut line = String::new();
        let read = stdout.read_line(&mut line).expect("read from the bridge");
        assert!(read > 0, "the bridge closed its output before the result");
        let message: Value = serde_json::from_str(&line).expect("JSON");
        if message["id"] == 1 {
            break message;
        }
        before.push(message);
    };
    assert_eq!(
        result["result"]["content"][0]["text"], "progress: 500",
        "{result}"
    );
    assert_whole_progress(&progress_for(&before, "b"));
    drop(stdin);
    let _ = bridge.wait();
}

async fn a_log_flood_arrives_whole_in_order_before_the_result(path: CallPath) {
    let c = start(path);
    c.settled().await;
    let mut agent = RawAgent::connect(&c.socket).await;
    for id in 1..=2u64 {
        agent
            .send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": { "name": "mcp_burst_flood", "arguments": { "n": LOG_FLOOD } } }))
            .await;
        let (result, before) = agent.until_response(&json!(id)).await;
        assert_eq!(
            result["result"]["content"][0]["text"], "flood: 20000",
            "{result}"
        );
        assert_whole_flood(&log_lines(&before), LOG_FLOOD);
    }
}

#[tokio::test]
async fn log_flood_of_20000_arrives_whole_in_order_before_the_result_fast_path() {
    a_log_flood_arrives_whole_in_order_before_the_result(CallPath::Fast).await;
}

#[tokio::test]
async fn log_flood_of_20000_arrives_whole_in_order_before_the_result_slow_path() {
    a_log_flood_arrives_whole_in_order_before_the_result(CallPath::Slow).await;
}

/// Log messages a server sends before its `prompts/get` or `resources/read` answer.
const READ_FLOOD: u64 = 2000;

/// A log flood a server sends while answering `prompts/get` and `resources/read` reaches the
/// agent whole, in order, before the answer, as for `tools/call`.
#[tokio::test]
async fn log_flood_arrives_whole_in_order_before_prompt_and_resource_answers() {
    let c = start(CallPath::Fast);
    c.settled().await;
    let mut agent = RawAgent::connect(&c.socket).await;
    for id in [1, 3] {
        agent
            .send(&json!({ "jsonrpc": "2.0", "id": id, "method": "prompts/get",
                "params": { "name": "burst_flood", "arguments": { "n": READ_FLOOD.to_string() } } }))
            .await;
        let (answer, before) = agent.until_response(&json!(id)).await;
        assert_eq!(
            answer["result"]["messages"][0]["content"]["text"], "flood: 2000",
            "{answer}"
        );
        assert_whole_flood(&log_lines(&before), READ_FLOOD);

        agent
            .send(
                &json!({ "jsonrpc": "2.0", "id": id + 1, "method": "resources/read",
                "params": { "uri": "burst://flood" } }),
            )
            .await;
        let (answer, before) = agent.until_response(&json!(id + 1)).await;
        assert_eq!(
            answer["result"]["contents"][0]["text"], "flood: 2000",
            "{answer}"
        );
        assert_whole_flood(&log_lines(&before), READ_FLOOD);
    }
}

/// Log messages per flood round while agents do not read.
const SILENT_FLOOD: u64 = 50_000;

/// Flood rounds; 200 000 messages (about 50 MB of JSON) in all.
const SILENT_ROUNDS: u64 = 4;

/// What the floods may add to the companion's resident memory with silent agents connected:
/// their queues hold at most `AGENT_NOTICE_BYTES` (16 MiB) of shared notices, plus the
/// allocator's slack.
const SILENT_GROWTH_CAP_KIB: u64 = 96 * 1024;

#[tokio::test(flavor = "multi_thread")]
async fn bounds_silent_agents_during_a_log_flood_hold_memory_and_others_are_served() {
    let c = start(CallPath::Fast);
    c.settled().await;
    let mut reader = RawAgent::connect(&c.socket).await;
    // A warm-up round with everyone reading sets the baseline.
    reader
        .send(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": { "name": "mcp_burst_flood", "arguments": { "n": LOG_FLOOD } } }))
        .await;
    reader.until_response(&json!(1)).await;
    let baseline = c.rss_kib();
    let mut silent = Vec::new();
    for _ in 0..3 {
        silent.push(RawAgent::connect(&c.socket).await);
    }
    let mut peak = baseline;
    for round in 0..SILENT_ROUNDS {
        let id = 10 + round;
        reader
            .send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": { "name": "mcp_burst_flood", "arguments": { "n": SILENT_FLOOD } } }))
            .await;
        let (result, before) = reader.until_response(&json!(id)).await;
        assert_eq!(
            result["result"]["content"][0]["text"], "flood: 50000",
            "{result}"
        );
        // The reading agent is not thinned by the others.
        assert_whole_flood(&log_lines(&before), SILENT_FLOOD);
        peak = peak.max(c.rss_kib());
        eprintln!(
            "round {round}: rss {} KiB (baseline {baseline} KiB)",
            c.rss_kib()
        );
    }
    // Another agent is answered while the silent ones still hold their queues.
    reader
        .send(&json!({ "jsonrpc": "2.0", "id": 99, "method": "tools/call",
            "params": { "name": "mcp_burst_echo", "arguments": { "message": "still here" } } }))
        .await;
    let (echo, _) = reader.until_response(&json!(99)).await;
    assert_eq!(
        echo["result"]["content"][0]["text"], "echo: still here",
        "{echo}"
    );
    assert!(
        peak - baseline <= SILENT_GROWTH_CAP_KIB,
        "the companion grew by {} KiB with silent agents (cap {SILENT_GROWTH_CAP_KIB} KiB)",
        peak - baseline
    );
    assert!(
        c.log().contains("not reading server notifications"),
        "dropping for a silent agent is logged"
    );
    drop(silent);
}
