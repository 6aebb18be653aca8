//! The wire between the companion and a stdio server, on both forwarding paths
//! ([`on_both_paths`]): the arguments a call is sent with, a deadline that progress moves,
//! server requests that reuse a call's id, and answers we cannot read.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{CallPath, Companion, on_both_paths};
use crate::raw::{RawAgent, progress_for};

const WIRE_SERVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/wire_server.py");

/// A companion on `path` with the wire server (`toolTimeout` in seconds) and an agent on it.
async fn wire(path: CallPath, tool_timeout: f64) -> (Companion, RawAgent) {
    wire_with(path, tool_timeout, &[]).await
}

/// [`wire`] with these extra server arguments.
async fn wire_with(path: CallPath, tool_timeout: f64, args: &[&str]) -> (Companion, RawAgent) {
    let mut argv = vec![WIRE_SERVER];
    argv.extend_from_slice(args);
    let c = Companion::start_on(
        json!({ "mcpServers": { "wire": { "command": "python3", "args": argv,
            "toolTimeout": tool_timeout } } }),
        path,
    );
    c.settled().await;
    let agent = RawAgent::connect(&c.socket).await;
    (c, agent)
}

/// The first text block of a `tools/call` answer.
fn first_text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

/// A call without `arguments` (or with `null`) reaches a tool whose schema is an object with
/// `{}`: the server validates them as an object.
async fn a_call_without_arguments_sends_an_empty_object(path: CallPath) {
    let (_c, mut agent) = wire(path, 30.0).await;
    for (id, params) in [
        (1, json!({"name": "mcp_wire_strict"})),
        (2, json!({"name": "mcp_wire_strict", "arguments": null})),
    ] {
        agent
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            .await;
        let (answer, _) = agent.until_response(&json!(id)).await;
        assert_eq!(first_text(&answer), "ok", "{path:?}: {answer}");
    }
}

/// A call that keeps reporting progress outlives its `toolTimeout` (the deadline counts from
/// the last progress), but not the hard maximum of 10 × `toolTimeout`.
async fn progress_moves_the_deadline_up_to_its_hard_maximum(path: CallPath) {
    let (_c, mut agent) = wire(path, 1.0).await;
    agent
        .call_with_progress(
            1,
            "mcp_wire_progress",
            json!({"seconds": 3, "every": 0.25}),
            "p1",
        )
        .await;
    let (answer, before) = agent.until_response(&json!(1)).await;
    assert_eq!(first_text(&answer), "done", "{path:?}: {answer}");
    assert!(
        progress_for(&before, "p1").len() >= 5,
        "{path:?}: {before:?}"
    );

    let started = Instant::now();
    agent
        .call_with_progress(
            2,
            "mcp_wire_progress",
            json!({"forever": true, "every": 0.25}),
            "p2",
        )
        .await;
    let (answer, _) = agent.until_response(&json!(2)).await;
    let took = started.elapsed();
    assert_eq!(answer["result"]["isError"], true, "{path:?}: {answer}");
    assert!(
        first_text(&answer).contains("timed out after 10 s"),
        "{path:?}: {answer}"
    );
    assert!(took >= Duration::from_secs(9), "{path:?}: {took:?}");
}

/// A call without progress still times out `toolTimeout` after it started.
async fn a_call_without_progress_times_out_at_tool_timeout(path: CallPath) {
    let (_c, mut agent) = wire(path, 1.0).await;
    let started = Instant::now();
    agent
        .send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "mcp_wire_progress", "arguments": {"seconds": 4}}}))
        .await;
    let (answer, _) = agent.until_response(&json!(1)).await;
    assert!(
        first_text(&answer).contains("timed out after 1 s"),
        "{path:?}: {answer}"
    );
    assert!(started.elapsed() < Duration::from_secs(3), "{path:?}");
}

/// A server request carrying the id of a call in flight is a request, not that call's answer:
/// the companion answers it, and the call gets the server's real answer.
async fn a_server_request_with_a_calls_id_is_not_its_answer(path: CallPath) {
    let (_c, mut agent) = wire(path, 10.0).await;
    agent
        .send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "mcp_wire_same_id", "arguments": {}}}))
        .await;
    let (answer, _) = agent.until_response(&json!(1)).await;
    assert_eq!(first_text(&answer), "ping answered", "{path:?}: {answer}");
}

/// An answer with both `result` and `error` is answered at once as an error, and logged,
/// never waited out.
async fn a_malformed_answer_is_answered_at_once(path: CallPath) {
    let (c, mut agent) = wire(path, 20.0).await;
    let started = Instant::now();
    agent
        .send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "mcp_wire_both", "arguments": {}}}))
        .await;
    let (answer, _) = agent.until_response(&json!(1)).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{path:?}: waited"
    );
    assert_eq!(answer["result"]["isError"], true, "{path:?}: {answer}");
    assert!(
        first_text(&answer).contains("both result and error"),
        "{answer}"
    );
    assert!(
        c.log().contains("both result and error"),
        "{path:?}: not logged"
    );
}

/// Arguments deeper than the JSON parser's recursion limit are answered at once (the server
/// could not read them either); the agent's id comes back.
async fn arguments_too_deep_are_answered_at_once(path: CallPath) {
    let (_c, mut agent) = wire(path, 20.0).await;
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let started = Instant::now();
    agent
        .send_line(&format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"mcp_wire_strict","arguments":{{"a":{deep}}}}}}}"#
        ))
        .await;
    let answer = agent.recv().await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{path:?}: waited"
    );
    assert!(answer.get("error").is_some(), "{path:?}: {answer}");
}

/// Outside text in the log is capped: a headless elicitation's 200 KB message and a server's
/// 200 KB error message each reach the log as at most a few KiB per line.
async fn outside_text_in_the_log_is_capped(path: CallPath) {
    let (c, mut agent) = wire(path, 20.0).await;
    for (id, tool) in [(1, "mcp_wire_elicit_big"), (2, "mcp_wire_error_big")] {
        agent
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": tool, "arguments": {}}}))
            .await;
        agent.until_response(&json!(id)).await;
    }
    let log = c.log();
    assert!(log.contains("elicitation/create"), "{path:?}: not logged");
    assert!(log.contains("bytes in all"), "{path:?}: not capped");
    let longest = log.lines().map(str::len).max().unwrap_or(0);
    assert!(
        longest < 8 * 1024,
        "{path:?}: a log line of {longest} bytes"
    );
}

/// A tool whose `inputSchema` nests past the JSON parser's recursion limit is skipped with a
/// warning; the server starts and its other tools work.
async fn a_tool_too_deep_to_read_is_skipped_and_the_server_runs(path: CallPath) {
    let (c, mut agent) = wire_with(path, 20.0, &["--deep-tool"]).await;
    assert_eq!(c.server("wire").await.state.as_str(), "running");
    agent
        .send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "mcp_wire_strict", "arguments": {}}}))
        .await;
    let (answer, _) = agent.until_response(&json!(1)).await;
    assert_eq!(first_text(&answer), "ok", "{path:?}: {answer}");
    agent
        .send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .await;
    let (list, _) = agent.until_response(&json!(2)).await;
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        names.contains(&"mcp_wire_strict") && !names.contains(&"mcp_wire_deep"),
        "{names:?}"
    );
    assert!(
        c.log().contains("skipped an item of the server's listing"),
        "{path:?}: no warning"
    );
}

on_both_paths!(
    outside_text_in_the_log_is_capped,
    outside_text_in_the_log_is_capped
);
on_both_paths!(
    a_tool_too_deep_to_read_is_skipped_and_the_server_runs,
    a_tool_too_deep_to_read_is_skipped_and_the_server_runs
);
on_both_paths!(
    a_call_without_arguments_sends_an_empty_object,
    a_call_without_arguments_sends_an_empty_object
);
on_both_paths!(
    progress_moves_the_deadline_up_to_its_hard_maximum,
    progress_moves_the_deadline_up_to_its_hard_maximum
);
on_both_paths!(
    a_call_without_progress_times_out_at_tool_timeout,
    a_call_without_progress_times_out_at_tool_timeout
);
on_both_paths!(
    a_server_request_with_a_calls_id_is_not_its_answer,
    a_server_request_with_a_calls_id_is_not_its_answer
);
on_both_paths!(
    a_malformed_answer_is_answered_at_once,
    a_malformed_answer_is_answered_at_once
);
on_both_paths!(
    arguments_too_deep_are_answered_at_once,
    arguments_too_deep_are_answered_at_once
);
