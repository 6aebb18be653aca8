//! Proves that a broken server entry fails alone, with a readable error in `status`, and that
//! timeouts give an `isError` result without breaking the server. Configuration problems fail at
//! once; servers that die or hang at start keep their error while they back off and retry.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{BIN, CallPath, Companion, call, demo, on_both_paths, text, tool_names};
use crate::raw::RawAgent;

#[tokio::test]
async fn broken_entries_fail_alone_with_readable_errors() {
    let c = Companion::start(json!({ "mcpServers": {
        "good": demo(&[]),
        "nocmd": { "command": "no-such-command-mcpc-test" },
        "nopath": { "command": "/nonexistent/dir/server" },
        "exits": demo(&["--fail-start"]),
        "novar": { "command": BIN, "args": ["demo-server", "--page-size", "${MCPC_TEST_UNSET_VARIABLE}"] },
        "badtype": { "command": 42 },
        "nothing": { "args": ["x"] },
        "slow": { "command": BIN, "args": ["demo-server", "--start-delay-ms", "5000"], "connectTimeout": 1 },
    } }));
    let servers = c.settled().await;
    let by = |n: &str| {
        servers
            .iter()
            .find(|s| s.name == n)
            .unwrap_or_else(|| panic!("{n}"))
    };
    let err = |n: &str| by(n).last_error.clone().unwrap_or_default();

    assert_eq!(by("good").state.as_str(), "running", "{servers:#?}");
    for name in ["nocmd", "nopath", "novar", "badtype", "nothing"] {
        assert_eq!(by(name).state.as_str(), "failed", "{name}: {:?}", by(name));
    }
    // Retrying may help these two, so they back off (and end `failed` after 5 tries).
    for name in ["exits", "slow"] {
        assert!(
            matches!(by(name).state.as_str(), "backoff" | "starting" | "failed"),
            "{name}: {:?}",
            by(name)
        );
    }
    assert!(
        err("nocmd").contains("command \"no-such-command-mcpc-test\" not found on PATH"),
        "{}",
        err("nocmd")
    );
    assert!(
        err("nopath").contains("does not exist"),
        "{}",
        err("nopath")
    );
    assert!(
        err("exits").contains("failing at start as requested"),
        "stderr tail quoted: {}",
        err("exits")
    );
    assert!(
        err("novar").contains("MCPC_TEST_UNSET_VARIABLE") && err("novar").contains("novar"),
        "{}",
        err("novar")
    );
    assert!(err("badtype").contains("command"), "{}", err("badtype"));
    assert!(err("nothing").contains("command"), "{}", err("nothing"));
    assert!(err("slow").contains("connectTimeout"), "{}", err("slow"));

    let client = c.client().await;
    let names = tool_names(&client).await;
    assert!(
        names.iter().all(|n| n.starts_with("mcp_good_")),
        "{names:?}"
    );
    assert_eq!(
        text(&call(&client, "mcp_good_echo", json!({ "message": "ok" })).await),
        "ok"
    );

    let status = c.cli(&["status"]);
    let out = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success());
    assert!(
        out.contains("nocmd") && out.contains("failed") && out.contains("not found on PATH"),
        "{out}"
    );
}

async fn tool_timeout_gives_is_error_quickly_and_the_server_stays_usable(path: CallPath) {
    let mut entry = demo(&[]);
    entry["toolTimeout"] = json!(1);
    let c = Companion::start_on(json!({ "mcpServers": { "demo": entry } }), path);
    c.settled().await;
    let client = c.client().await;
    // The server would sleep a minute; the answer says the 1 s timeout ended it. The call asks
    // for no progress (rmcp's client always does, and progress moves the deadline), so none
    // moves it. The time bound is only a backstop (a timing goal belongs in a benchmark).
    let mut agent = RawAgent::connect(&c.socket).await;
    let started = Instant::now();
    agent
        .send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "mcp_demo_sleep", "arguments": {"seconds": 60}}}))
        .await;
    let (slow, _) = agent.until_response(&json!(1)).await;
    let took = started.elapsed();
    assert_eq!(slow["result"]["isError"], true, "{slow}");
    let said = slow["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(said.contains("timed out after 1 s"), "{said}");
    assert!(took < Duration::from_secs(30), "answered after {took:?}");
    assert_eq!(
        text(&call(&client, "mcp_demo_echo", json!({ "message": "alive" })).await),
        "alive"
    );
    assert_eq!(c.server("demo").await.state.as_str(), "running");
}

on_both_paths!(
    tool_timeout_gives_is_error_quickly_and_the_server_stays_usable,
    tool_timeout_gives_is_error_quickly_and_the_server_stays_usable
);

/// A stdio server that exits under a call: the call's error says how the process exited and
/// quotes the last line it wrote to stderr (control characters escaped), as `status` does,
/// whichever noticed first — the call's lost output, or the supervisor closing the session.
async fn a_crash_mid_call_is_told_by_exit_status_and_last_stderr_line(path: CallPath) {
    let c = Companion::start_on(json!({ "mcpServers": { "demo": demo(&[]) } }), path);
    c.settled().await;
    let mut agent = RawAgent::connect(&c.socket).await;
    agent
        .send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "mcp_demo_crash", "arguments": {
                "exit_code": 9, "last_words": "fatal: \u{1b}[31mdisk on fire\u{7} \"now\""}}}))
        .await;
    let (answer, _) = agent.until_response(&json!(1)).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let said = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        said,
        r#"server "demo": the server's process exited during the call (exit code 9); its last stderr line: "fatal: \u{1b}[31mdisk on fire\u{7} \"now\"". The call may or may not have run; it was not sent again because the tool does not declare readOnlyHint or idempotentHint"#,
        "{}",
        c.log()
    );
}

on_both_paths!(
    a_crash_mid_call_is_told,
    a_crash_mid_call_is_told_by_exit_status_and_last_stderr_line
);

/// A call in flight when the person restarts its server is told the server was stopped under
/// it — not that it crashed or that the connection was lost — whichever side noticed first.
async fn a_call_cut_short_by_a_restart_says_the_server_was_stopped(path: CallPath) {
    let c = Companion::start_on(json!({ "mcpServers": { "demo": demo(&[]) } }), path);
    c.settled().await;
    let mut agent = RawAgent::connect(&c.socket).await;
    let file = c.home.join("appended.txt");
    agent
        .send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "mcp_demo_append", "arguments": {
                "path": file.display().to_string(), "line": "ran", "seconds": 60}}}))
        .await;
    // The line is written before the wait: the call is in flight upstream.
    let ran = crate::common::eventually(Duration::from_secs(30), || {
        std::fs::read_to_string(&file).is_ok_and(|t| t.contains("ran"))
    })
    .await;
    assert!(ran, "the call never reached the server\n{}", c.log());
    let restarted = c.cli(&["restart", "demo"]);
    assert!(restarted.status.success(), "{restarted:?}");
    let (answer, _) = agent.until_response(&json!(1)).await;
    let said = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        said.starts_with(
            "server \"demo\": the server was stopped while the call was in flight. The call may or may not have run"
        ),
        "{said}\n{}",
        c.log()
    );
}

on_both_paths!(
    a_call_cut_short_by_a_restart,
    a_call_cut_short_by_a_restart_says_the_server_was_stopped
);
