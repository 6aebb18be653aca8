//! The forwarding fast path (`src/endpoint/fast`, `src/upstream/lane.rs`): what only it
//! does (result bytes passed through untouched, the agent's id echoed as sent), and the call
//! behaviours it must keep, each checked on both paths ([`on_both_paths`]).

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{CallPath, Companion, demo, eventually, on_both_paths};
use crate::raw::RawAgent;

const RAW_SERVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/raw_server.py");

/// The raw server answers with Python's `json.dumps` spacing (`"content": [`). The fast path
/// hands those bytes to the agent as they are, under the agent's own id; the slow path writes
/// the text it kept of a stdio server's result (`src/upstream/exact.rs`).
async fn results_keep_their_bytes_on_both_paths(path: CallPath) {
    let c = Companion::start_on(
        json!({ "mcpServers": { "raw": { "command": "python3", "args": [RAW_SERVER] } } }),
        path,
    );
    c.settled().await;
    let mut agent = RawAgent::connect(&c.socket).await;
    for id in [json!("a \"quoted\" id"), json!(-7), json!(12)] {
        agent
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "mcp_raw_echo", "arguments": {"message": "hi"}}}))
            .await;
        let line = agent.recv_line().await;
        let answer: Value = serde_json::from_str(&line).expect("JSON");
        assert_eq!(answer["id"], id, "{line}");
        assert_eq!(answer["result"]["content"][0]["text"], "echo: hi", "{line}");
        let untouched = line.contains(r#""content": [{"type": "text", "text": "echo: hi"}]"#);
        assert!(untouched, "{path:?}: {line}");
    }
}

/// An agent's `notifications/cancelled` for a call without a progress token (so one the fast
/// path takes) reaches the server, and the call gets no answer (as rmcp does).
async fn a_cancelled_call_is_cancelled_upstream_and_not_answered(path: CallPath) {
    let (c, mut agent) = sleeping_call(path, 7).await;
    agent
        .send(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 7, "reason": "test"}}),
        )
        .await;
    assert_sleep_cancelled_upstream(&c).await;
    echo(&mut agent, 9, "after").await;
    // The server answered the cancelled sleep at once ("sleep cancelled"); it must not reach us.
    no_response_within(&mut agent, Duration::from_millis(500)).await;
}

/// An agent that hangs up mid-call has its calls cancelled upstream.
async fn an_agent_that_leaves_has_its_calls_cancelled_upstream(path: CallPath) {
    let (c, agent) = sleeping_call(path, 1).await;
    drop(agent);
    assert_sleep_cancelled_upstream(&c).await;
}

/// A companion on `path` whose demo server logs at info, and an agent with a 30 s
/// `mcp_demo_sleep` call (request `id`) in flight that the server has certainly read (a round
/// trip with id `id + 1` followed it).
async fn sleeping_call(path: CallPath, id: u64) -> (Companion, RawAgent) {
    let mut entry = demo(&[]);
    entry["env"] = json!({ "RUST_LOG": "info" });
    let c = Companion::start_on(json!({ "mcpServers": { "demo": entry } }), path);
    c.settled().await;
    let mut agent = RawAgent::connect(&c.socket).await;
    agent
        .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "mcp_demo_sleep", "arguments": {"seconds": 30}}}))
        .await;
    echo(&mut agent, id + 1, "first").await;
    (c, agent)
}

/// Waits (up to 30 s) for the demo server's log to say its sleep was cancelled.
async fn assert_sleep_cancelled_upstream(c: &Companion) {
    let logs = || String::from_utf8_lossy(&c.cli(&["logs", "demo"]).stdout).into_owned();
    let cancelled = eventually(Duration::from_secs(30), || {
        logs().contains("sleep cancelled by the client")
    })
    .await;
    assert!(cancelled, "upstream saw no cancellation; logs:\n{}", logs());
}

/// A call whose server dies under it is answered once, without waiting for its timeout, saying
/// how the process exited; a tool without `readOnlyHint`/`idempotentHint` is not run again
/// (the server may have run it).
async fn a_call_lost_in_flight_is_answered_once(path: CallPath) {
    let c = Companion::start_on(json!({ "mcpServers": { "demo": demo(&[]) } }), path);
    c.settled().await;
    let mut agent = RawAgent::connect(&c.socket).await;
    agent
        .send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "mcp_demo_crash", "arguments": {"exit_code": 9}}}))
        .await;
    // Notifications (the catalog changes as the server goes down) may come first.
    let (answer, _) = agent.until_response(&json!(3)).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    // The session negotiated a version before 2026-07-28: no `resultType`, on either path.
    assert!(answer["result"].get("resultType").is_none(), "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(!text.contains("timed out"), "{text}");
    // Whichever noticed first (the lost output, or the supervisor closing the session of the
    // exited process), the words are the exit's; the call is not run again.
    assert!(
        text.contains("exited during the call (exit code 9)")
            && text.contains("may or may not have run"),
        "{text}"
    );
    assert!(text.contains("\"demo\""), "{text}");
    no_response_within(&mut agent, Duration::from_millis(500)).await;
}

/// Asserts that no response (a message with an `id`) arrives on `agent` within `wait`;
/// notifications are skipped.
async fn no_response_within(agent: &mut RawAgent, wait: Duration) {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match agent.recv_within(left).await {
            None => return,
            Some(message) => assert!(message.get("id").is_none(), "a second answer: {message}"),
        }
    }
}

/// `tools/call` and its answer on `agent`: `echo` of `message` with request id `id`.
async fn echo(agent: &mut RawAgent, id: u64, message: &str) {
    agent
        .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "mcp_demo_echo", "arguments": {"message": message}}}))
        .await;
    let (answer, _) = agent.until_response(&json!(id)).await;
    assert_eq!(answer["result"]["content"][0]["text"], message, "{answer}");
}

/// `tools/list` with two pages (1200 extra tools): the fast path answers from the catalog's
/// page JSON, and every page is what the rmcp session path answers, on a session's first
/// listing and on a later one; an offset the catalog never handed out as a cursor and a bad
/// cursor get rmcp's answers on both. Only the fast path echoes an id's bytes as sent, which
/// shows it answered. A session on protocol version 2026-07-28 (another result shape) is
/// answered by rmcp on both.
#[tokio::test]
async fn tools_list_pages_are_the_rmcp_paths_and_only_the_fast_path_echoes_ids_as_sent() {
    let config = json!({ "mcpServers": { "demo": demo(&["--extra-tools", "1200"]) } });
    let mut seen = Vec::new();
    for path in [CallPath::Fast, CallPath::Slow] {
        let c = Companion::start_on(config.clone(), path);
        c.settled().await;
        let mut agent = RawAgent::connect(&c.socket).await;
        let first = all_pages(&mut agent).await;
        assert_eq!(first.len(), 2, "{path:?}: two pages");
        assert_eq!(all_pages(&mut agent).await, first, "{path:?}: listed again");

        agent
            .send_line(r#"{"jsonrpc":"2.0","id":"l\u0069st","method":"tools/list"}"#)
            .await;
        let line = loop {
            let line = agent.recv_line().await;
            if line.contains(r#""id":"l"#) {
                break line;
            }
        };
        let as_sent = line.starts_with(r#"{"jsonrpc":"2.0","id":"l\u0069st","result":"#);
        assert_eq!(as_sent, path == CallPath::Fast, "{path:?}: {}", &line[..60]);
        let answer: Value = serde_json::from_str(&line).expect("JSON");
        assert_eq!(answer["result"], first[0], "{path:?}");

        let mut modern = RawAgent::connect_only(&c.socket).await;
        modern.handshake_on("2026-07-28").await;
        modern
            .send_line(r#"{"jsonrpc":"2.0","id":"l\u0069st","method":"tools/list"}"#)
            .await;
        let modern_answer = modern.until_response(&json!("list")).await.0;

        let mut odd = Vec::new();
        for (id, cursor) in [(90, "7"), (91, "x")] {
            agent
                .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list",
                    "params": {"cursor": cursor}}))
                .await;
            let (answer, _) = agent.until_response(&json!(id)).await;
            odd.push(answer);
        }
        assert_eq!(odd[1]["error"]["code"], -32602, "{path:?}: {}", odd[1]);
        seen.push((first, odd, modern_answer));
    }
    let (fast, slow) = (&seen[0], &seen[1]);
    assert_eq!(fast.0, slow.0, "the same pages on both paths");
    assert_eq!(
        fast.1, slow.1,
        "the same answers to odd cursors on both paths"
    );
    assert_eq!(
        fast.2, slow.2,
        "the same answer to a 2026-07-28 session on both paths"
    );
}

/// Every page of `tools/list` on `agent`, following `nextCursor`.
async fn all_pages(agent: &mut RawAgent) -> Vec<Value> {
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    for id in 1000.. {
        let mut request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
        if let Some(c) = &cursor {
            request["params"] = json!({ "cursor": c });
        }
        agent.send(&request).await;
        let (answer, _) = agent.until_response(&json!(id)).await;
        let result = answer["result"].clone();
        assert!(result["tools"].is_array(), "{answer}");
        cursor = result["nextCursor"].as_str().map(str::to_owned);
        pages.push(result);
        if cursor.is_none() {
            break;
        }
    }
    pages
}

on_both_paths!(
    results_keep_their_bytes_on_both_paths,
    results_keep_their_bytes_on_both_paths
);
on_both_paths!(
    a_cancelled_call_is_cancelled_upstream_and_not_answered,
    a_cancelled_call_is_cancelled_upstream_and_not_answered
);
on_both_paths!(
    an_agent_that_leaves_has_its_calls_cancelled_upstream,
    an_agent_that_leaves_has_its_calls_cancelled_upstream
);
on_both_paths!(
    a_call_lost_in_flight_is_answered_once,
    a_call_lost_in_flight_is_answered_once
);
