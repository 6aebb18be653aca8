//! A stdio server that stops reading its input (its tool sleeps without reading stdin) while
//! agents flood it with big calls: the pipe to its stdin fills and every write to it blocks.
//! Each call must still be answered at its own `toolTimeout` deadline, the first (already
//! written) call included, on both forwarding paths; a call that could not be written at all
//! says it was not delivered (so it did not run).

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{CallPath, Companion, eventually, on_both_paths};
use crate::raw::RawAgent;

const DEAF_SERVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/deaf_server.py");
/// How long the server's `slow` sleeps, in seconds: far past every deadline and past the
/// agent's wait for a line, so an answer that waits for the server never comes in time.
const SLEEP_SECS: u64 = 600;
/// The big calls: each larger than a pipe's buffer (64 KiB on Linux), so one fills it.
const FLOOD: u64 = 4;
const BIG: usize = 1 << 20;

/// The text of the `isError` answer `answer`, asserting it is one.
fn error_text(answer: &Value) -> String {
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {answer}"))
        .to_owned()
}

/// The answers on `agent` to requests `ids`, in any order (notifications skipped).
async fn answers(agent: &mut RawAgent, ids: &[u64]) -> Vec<(u64, Value)> {
    let mut got = Vec::new();
    while got.len() < ids.len() {
        let message = agent.recv().await;
        if let Some(id) = message["id"].as_u64().filter(|id| ids.contains(id)) {
            got.push((id, message));
        }
    }
    got.sort_by_key(|(id, _)| *id);
    got
}

fn call(id: u64, tool: &str, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": {"message": message}}})
}

async fn every_call_is_answered_by_its_deadline_while_the_server_is_not_reading(path: CallPath) {
    let markers = tempfile::tempdir().expect("tempdir");
    let (asleep, awake) = (markers.path().join("asleep"), markers.path().join("awake"));
    let c = Companion::start_on(
        json!({ "mcpServers": { "deaf": {
            "command": "python3",
            "args": [DEAF_SERVER, markers.path(), SLEEP_SECS.to_string()],
            "toolTimeout": 2,
        } } }),
        path,
    );
    c.settled().await;
    let mut a = RawAgent::connect(&c.socket).await;
    a.send(&call(1, "mcp_deaf_slow", "")).await;
    assert!(
        eventually(Duration::from_secs(30), || asleep.exists()).await,
        "the server never started its sleep\n{}",
        c.log()
    );
    let big = "x".repeat(BIG);
    for id in 2..2 + FLOOD {
        a.send(&call(id, "mcp_deaf_echo", &big)).await;
    }
    let mut b = RawAgent::connect(&c.socket).await;
    b.send(&call(1, "mcp_deaf_echo", "small")).await;

    let ids: Vec<u64> = (1..2 + FLOOD).collect();
    let a_answers = answers(&mut a, &ids).await;
    let b_answer = answers(&mut b, &[1]).await.remove(0).1;
    assert_awake(&awake, false, &c);

    // The slow call was written whole before the flood: it timed out, it was not "not sent".
    let slow = error_text(&a_answers[0].1);
    assert!(
        slow.contains("server \"deaf\": timed out after 2 s"),
        "{path:?}: {slow}"
    );
    assert!(!slow.contains("not delivered"), "{path:?}: {slow}");
    let mut unsent = 0;
    for (_, answer) in a_answers[1..].iter().chain([(1, b_answer.clone())].iter()) {
        let text = error_text(answer);
        assert!(text.contains("timed out after 2 s"), "{path:?}: {text}");
        unsent += usize::from(text.contains("not delivered and did not run"));
    }
    // The first big call fills the pipe part-way through its write; the others never begin.
    assert!(unsent >= 1, "{path:?}: {a_answers:?} {b_answer}");
}

fn assert_awake(awake: &Path, expected: bool, c: &Companion) {
    assert_eq!(
        awake.exists(),
        expected,
        "the answers came only once the server read again\n{}",
        c.log()
    );
}

on_both_paths!(
    every_call_is_answered_by_its_deadline_while_the_server_is_not_reading,
    every_call_is_answered_by_its_deadline_while_the_server_is_not_reading
);
