//! Proves what `serve`'s own log says, read from a real `serve` process: what a server wrote
//! (its stderr, the error that quotes it) is written inert, control characters and
//! bidirectional overrides as escapes.

use std::time::Duration;

use serde_json::json;

use crate::common::{BIN, Companion, eventually};

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
