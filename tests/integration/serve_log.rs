//! Proves what `serve`'s own log says, read from a real `serve` process: what a server wrote
//! (its stderr, the error that quotes it) is written inert, control characters and
//! bidirectional overrides as escapes; and an ordinary restart or stop of a server, even one
//! whose remote end went away, prints no ERROR line: the failure is one WARN line naming the
//! server, in our words.

use std::time::Duration;

use serde_json::json;

use crate::common::{BIN, Companion, demo, eventually};
use crate::raw::RawAgent;
use crate::remote_fixture::mcp_server;

/// What the servers below write to stderr: a colour, a bell, a carriage return, a right-to-left
/// override and a tab, as `printf` octal escapes (so the config file holds plain text).
const OUTSIDE: &str = r"x \033[31mRED\033[0m bel\007 cr\rX \342\200\256evil\tend";
/// The same text as the log must show it.
const SHOWN: &str = "x \\x1b[31mRED\\x1b[0m bel\\x07 cr\\x0dX \\u{202e}evil\tend";

#[tokio::test]
async fn what_a_server_writes_reaches_the_log_as_escapes_never_as_control_characters() {
    let say = format!("printf '{OUTSIDE}\\n' >&2");
    let c = Companion::start(json!({ "mcpServers": {
        // A running server: its stderr line is logged as it is read.
        "noisy": { "command": "sh", "args": ["-c", format!("{say}; exec {BIN} demo-server")] },
        // A server that fails at start: the warning quotes its last stderr lines.
        "dying": { "command": "sh", "args": ["-c", format!("{say}; exec {BIN} demo-server --fail-start")] },
    } }));
    let warned = eventually(Duration::from_secs(60), || {
        c.log()
            .lines()
            .any(|l| l.contains("name=dying") && l.contains("start failed"))
    })
    .await;
    assert!(warned, "no start failure logged:\n{}", c.log());
    let noisy = eventually(Duration::from_secs(60), || {
        c.log()
            .lines()
            .any(|l| l.contains("name=noisy") && l.contains(SHOWN))
    })
    .await;
    assert!(
        noisy,
        "the running server's line is not shown escaped:\n{}",
        c.log()
    );

    let log = c.log();
    let warning = log
        .lines()
        .find(|l| l.contains("name=dying") && l.contains("start failed"))
        .unwrap_or_default();
    assert!(
        warning.contains(" WARN ") && warning.contains(SHOWN),
        "the warning quotes the stderr escaped: {warning:?}"
    );
    let obeyed: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(['\u{1b}', '\u{7}', '\r', '\u{202e}']))
        .collect();
    assert!(
        obeyed.is_empty(),
        "control characters in the log: {obeyed:#?}"
    );
}

#[tokio::test]
async fn restarting_and_stopping_servers_prints_no_error_line_even_when_one_is_gone() {
    let remote = mcp_server().await;
    let mut c = Companion::start(json!({
        "mcpServers": {
            "local": demo(&[]),
            "remote": { "url": format!("http://127.0.0.1:{}/mcp", remote.port) },
        },
        "ssrfWhitelist": ["127.0.0.1/32"],
    }));
    c.running().await;
    c.restart_process("local").await;

    // The remote server goes away; its restart ends the old session and cannot connect.
    drop(remote);
    let out = c.cli(&["restart", "remote"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let failures = |log: &str| {
        log.lines()
            .filter(|l| l.contains("name=remote") && l.contains("start failed"))
            .count()
    };
    // Two attempts: the first one's worker has long ended (and said what it had to say).
    let retried = eventually(Duration::from_secs(60), || failures(&c.log()) >= 2).await;
    assert!(retried, "no second attempt:\n{}", c.log());
    for name in ["remote", "local"] {
        let out = c.cli(&["stop", name]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let status = c.terminate(Duration::from_secs(30));
    assert!(status.success(), "{status:?}\n{}", c.log());

    let log = c.log();
    let errors: Vec<&str> = log.lines().filter(|l| l.contains(" ERROR ")).collect();
    assert!(
        errors.is_empty(),
        "ERROR lines:\n{}\n\nlog:\n{log}",
        errors.join("\n")
    );
    // The failure itself (refused, or reset while the listener closed): one WARN line per
    // attempt, in the server's span, in our words.
    let refused: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("error sending request") || l.contains("could not connect"))
        .collect();
    for line in &refused {
        assert!(
            line.contains(" WARN ")
                && line.contains("name=remote")
                && line.contains("start failed"),
            "{line}"
        );
    }
    assert_eq!(refused.len(), failures(&log), "{log}");
}

/// Agents' ordinary traffic writes no warning or error: requests for methods nobody has are
/// answered with errors (rmcp would log each as a WARN "response error", so any agent could
/// flood the log), and an agent that leaves during a long call with progress leaves no ERROR
/// for the answer that can no longer reach it.
#[tokio::test]
async fn agents_error_answers_and_departures_write_no_warning_or_error() {
    let mut c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    c.settled().await;
    let mut agent = RawAgent::connect(&c.socket).await;
    const UNKNOWN: u64 = 50;
    for id in 1..=UNKNOWN {
        agent
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": "no/such"}))
            .await;
    }
    for _ in 1..=UNKNOWN {
        let answer = agent.recv().await;
        assert_eq!(answer["error"]["code"], -32601, "{answer}");
    }
    agent
        .call_with_progress(
            UNKNOWN + 1,
            "mcp_demo_sleep",
            json!({ "seconds": 30 }),
            "long",
        )
        .await;
    let started = agent.recv().await;
    assert_eq!(started["method"], "notifications/progress", "{started}");
    drop(agent);
    // The call ends when its agent is gone: its activity entry is written.
    let ended = eventually(Duration::from_secs(30), || {
        let out = c.cli(&["activity", "--json"]);
        String::from_utf8_lossy(&out.stdout).contains("mcp_demo_sleep")
    })
    .await;
    assert!(ended, "the call did not end:\n{}", c.log());
    let status = c.terminate(Duration::from_secs(30));
    assert!(status.success(), "{status:?}\n{}", c.log());

    let log = c.log();
    let noise: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(" ERROR ") || (l.contains(" WARN ") && l.contains("rmcp")))
        .collect();
    assert!(
        noise.is_empty(),
        "WARN/ERROR lines:\n{}\n\nlog:\n{log}",
        noise.join("\n")
    );
}
