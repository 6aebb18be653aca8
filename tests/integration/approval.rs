//! The call policy (`docs/src/trust.md`, "Approval of calls") over real processes, on both
//! call paths: `deny` answers `isError` and the server never sees the call; with no approver an
//! explicit `ask` is refused at once saying what to do, while a `destructiveHint` tool runs and
//! the activity log says so; `mcp-companion policy` writes the config and the running server
//! follows it without a restart; and an approver attached with `mcp-companion approvals
//! --watch` answers: once → the call runs exactly once, deny → `isError`, no answer within
//! `approvalTimeout` → `isError`, always → it runs and `allow` lands in the config; an agent
//! that cancels its call withdraws its ask.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::common::activity::recorded;
use crate::common::{BIN, CallPath, Companion, call, demo, eventually, on_both_paths, text};

/// The tools that reached the demo server (its `--call-log`), one name per line.
pub(crate) fn reached(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// A demo entry logging its calls to `log`, with `toolPolicy` `policy`; `echo` declares
/// `destructiveHint` when `destructive_echo`.
pub(crate) fn entry(dir: &Path, log: &Path, policy: Value, destructive_echo: bool) -> Value {
    let overrides = dir.join("overrides.json");
    let o = if destructive_echo {
        json!({"echo": {"annotations": {"destructiveHint": true}}})
    } else {
        json!({})
    };
    std::fs::write(&overrides, o.to_string()).expect("overrides");
    let mut e = demo(&[
        "--call-log",
        log.to_str().expect("utf-8"),
        "--tool-overrides",
        overrides.to_str().expect("utf-8"),
    ]);
    e["toolPolicy"] = policy;
    e
}

async fn deny_and_headless_ask(path: CallPath) {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("calls.log");
    let policy = json!({"add": "deny", "sl*": "ask"});
    let c = Companion::start_on(
        json!({ "mcpServers": { "a": entry(dir.path(), &log, policy, true) } }),
        path,
    );
    c.settled().await;
    let client = c.client().await;

    let denied = call(&client, "mcp_a_add", json!({"a": 1, "b": 2})).await;
    assert_eq!(denied.is_error, Some(true), "{denied:?}");
    assert!(
        text(&denied).contains("policy denies tool \"add\" of server \"a\""),
        "{}",
        text(&denied)
    );

    let asked = call(&client, "mcp_a_sleep", json!({"seconds": 0})).await;
    assert_eq!(asked.is_error, Some(true), "{asked:?}");
    let why = text(&asked);
    assert!(
        why.contains("needs the person's approval")
            && why.contains("mcp-companion approvals --watch")
            && why.contains("mcp-companion policy a sleep allow"),
        "{why}"
    );

    // echo declares destructiveHint and no key matches it: with nobody to ask, it runs.
    let echoed = call(&client, "mcp_a_echo", json!({"message": "hi"})).await;
    assert_eq!(text(&echoed), "hi");

    // The same calls from an agent whose plain calls take the fast path when it is on.
    let mut raw = crate::raw::RawAgent::connect_only(&c.socket).await;
    raw.handshake().await;
    for (id, tool) in [(1, "mcp_a_add"), (2, "mcp_a_sleep")] {
        let answer = raw
            .call_tool(id, tool, json!({"a": 1, "b": 2, "seconds": 0}))
            .await;
        assert_eq!(answer["result"]["isError"], json!(true), "{tool}: {answer}");
    }

    assert_eq!(reached(&log), ["echo"], "only echo reached the server");
    let add = recorded(&c, "mcp_a_add").await;
    assert_eq!(add.outcome.as_deref(), Some("denied"), "{add:?}");
    assert_eq!(add.error_kind.as_deref(), Some("policy"), "{add:?}");
    let sleep = recorded(&c, "mcp_a_sleep").await;
    assert_eq!(sleep.outcome.as_deref(), Some("denied"), "{sleep:?}");
    assert_eq!(
        sleep.error_kind.as_deref(),
        Some("no_approver"),
        "{sleep:?}"
    );
    let echo = recorded(&c, "mcp_a_echo").await;
    assert_eq!(echo.outcome.as_deref(), Some("ok"), "{echo:?}");
    assert!(
        echo.detail
            .as_deref()
            .is_some_and(|d| d.contains("ran unasked")),
        "{echo:?}"
    );
}

on_both_paths!(deny_and_headless_ask_on, deny_and_headless_ask);

#[tokio::test]
async fn the_policy_command_writes_the_config_and_the_server_follows_without_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("calls.log");
    let c = Companion::start(json!({ "mcpServers": {
        "a": entry(dir.path(), &log, Value::Null, false)
    } }));
    c.settled().await;
    let pid = c.server("a").await.pid;
    let client = c.client().await;
    assert_eq!(
        text(&call(&client, "mcp_a_echo", json!({"message": "hi"})).await),
        "hi"
    );
    let config = c.config.to_str().expect("utf-8");
    let out = c.cli(&["--config", config, "policy", "a", "echo", "deny"]);
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("the running companion applied it"), "{said}");
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(&c.config).expect("config")).expect("json");
    assert_eq!(
        file["mcpServers"]["a"]["toolPolicy"],
        json!({"echo": "deny"})
    );
    let denied = call(&client, "mcp_a_echo", json!({"message": "hi"})).await;
    assert_eq!(denied.is_error, Some(true), "{denied:?}");
    assert_eq!(c.server("a").await.pid, pid, "the server was not restarted");

    let listed = c.cli(&["--config", config, "policy"]);
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("a  echo  deny"),
        "{listed:?}"
    );
    let one = c.cli(&["--config", config, "policy", "a", "mcp_a_echo"]);
    assert_eq!(
        String::from_utf8_lossy(&one.stdout),
        "a mcp_a_echo: deny (toolPolicy)\n",
        "{one:?}"
    );
    let other = c.cli(&["--config", config, "policy", "a", "add"]);
    assert!(
        String::from_utf8_lossy(&other.stdout).starts_with("a add: default"),
        "{other:?}"
    );
    let bad = c.cli(&["--config", config, "policy", "a", "echo", "maybe"]);
    assert!(!bad.status.success());
    let unknown = c.cli(&["--config", config, "policy", "nope", "echo", "deny"]);
    assert!(!unknown.status.success());
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("no server named \"nope\""),
        "{unknown:?}"
    );
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("warning"),
        "a key naming a listed tool is not warned about: {out:?}"
    );
    let before = std::fs::read_to_string(&c.config).expect("config");
    let empty = c.cli(&["--config", config, "policy", "a", "", "allow"]);
    assert!(!empty.status.success(), "{empty:?}");
    assert!(
        String::from_utf8_lossy(&empty.stderr).contains("an empty key names no tool"),
        "{empty:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&c.config).expect("config"),
        before,
        "nothing written"
    );
    // The server's tools are known once it listed them (its pins): a typo is written, and
    // warned about by name.
    let pins = c.home.join(".local/share/mcp-companion/pins.json");
    assert!(
        eventually(Duration::from_secs(30), || std::fs::read_to_string(&pins)
            .is_ok_and(|p| p.contains("\"echo\"")))
        .await,
        "pins written"
    );
    let typo = c.cli(&["--config", config, "policy", "a", "ehco", "ask"]);
    assert!(typo.status.success(), "{typo:?}");
    let warned = String::from_utf8_lossy(&typo.stderr);
    assert!(
        warned.contains("warning: toolPolicy key \"ehco\" matches none of the")
            && warned.contains("server \"a\"")
            && warned.contains("echo"),
        "{warned}"
    );
    for fine in ["mcp_a_ec*", "*"] {
        let out = c.cli(&["--config", config, "policy", "a", fine, "ask"]);
        assert!(
            out.status.success() && !String::from_utf8_lossy(&out.stderr).contains("warning"),
            "{fine}: {out:?}"
        );
        let out = c.cli(&["--config", config, "policy", "a", fine, "default"]);
        assert!(out.status.success(), "{out:?}");
    }
    let out = c.cli(&["--config", config, "policy", "a", "ehco", "default"]);
    assert!(out.status.success(), "{out:?}");

    let out = c.cli(&["--config", config, "policy", "a", "echo", "default"]);
    assert!(out.status.success(), "{out:?}");
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(&c.config).expect("config")).expect("json");
    assert_eq!(file["mcpServers"]["a"].get("toolPolicy"), None, "{file}");
    assert_eq!(
        text(&call(&client, "mcp_a_echo", json!({"message": "again"})).await),
        "again"
    );
    assert_eq!(reached(&log), ["echo", "echo"]);
}

/// `mcp-companion approvals --watch --json`: attached as an approver, its events read line by
/// line, its answers typed on its stdin.
pub(crate) struct Watcher {
    pub(crate) child: tokio::process::Child,
    events: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    stdin: tokio::process::ChildStdin,
}

impl Watcher {
    pub(crate) async fn attach(c: &Companion) -> Watcher {
        let mut child = tokio::process::Command::new(BIN)
            .args(["approvals", "--watch", "--json", "--socket"])
            .arg(&c.socket)
            .env("HOME", &c.home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn watcher");
        let stdout = child.stdout.take().expect("stdout");
        let stdin = child.stdin.take().expect("stdin");
        let mut w = Watcher {
            child,
            events: BufReader::new(stdout).lines(),
            stdin,
        };
        let first = w.next().await;
        assert_eq!(first, json!({"open": []}));
        w
    }

    pub(crate) async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(30), self.events.next_line())
            .await
            .expect("an event within 30 s")
            .expect("read")
            .expect("the watcher is running");
        serde_json::from_str(&line).expect("json event")
    }

    pub(crate) async fn answer(&mut self, id: &Value, answer: &str) {
        let line = format!("{id} {answer}\n");
        self.stdin.write_all(line.as_bytes()).await.expect("type");
        self.stdin.flush().await.expect("flush");
    }
}

async fn an_attached_approver_answers(path: CallPath) {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("calls.log");
    let mut slow = entry(dir.path(), &log, json!({"echo": "ask"}), false);
    slow["approvalTimeout"] = json!(30);
    let quick_log = dir.path().join("quick.log");
    let mut quick = entry(dir.path(), &quick_log, json!({"*": "ask"}), false);
    quick["approvalTimeout"] = json!(1);
    let c = Companion::start_on(json!({ "mcpServers": { "a": slow, "q": quick } }), path);
    c.settled().await;
    let client = std::sync::Arc::new(c.client().await);
    let mut watcher = Watcher::attach(&c).await;
    // The watcher is attached once its first line is out; an ask now waits for it.
    let calling = |message: &'static str| {
        let client = client.clone();
        tokio::spawn(async move { call(&client, "mcp_a_echo", json!({"message": message})).await })
    };

    let once = calling("first");
    let asked = watcher.next().await;
    assert_eq!(asked["event"], json!("asked"), "{asked}");
    assert_eq!(asked["server"], json!("a"));
    assert_eq!(asked["tool"], json!("echo"));
    assert_eq!(
        asked["agent"],
        json!("it"),
        "the test client's clientInfo name"
    );
    assert_eq!(asked["reason"], json!("policy"));
    assert!(
        asked["arguments"]
            .as_str()
            .is_some_and(|a| a.contains("\"first\"")),
        "{asked}"
    );
    assert_eq!(
        reached(&log),
        Vec::<String>::new(),
        "nothing runs before the answer"
    );
    watcher.answer(&asked["id"], "once").await;
    let ran = once.await.expect("joined");
    assert_eq!(text(&ran), "first");
    let closed = watcher.next().await;
    assert_eq!(
        closed,
        json!({"event": "closed", "id": asked["id"], "outcome": "allowed"})
    );
    assert_eq!(reached(&log), ["echo"], "run exactly once");

    let denied = calling("second");
    let asked = watcher.next().await;
    watcher.answer(&asked["id"], "deny").await;
    let answer = denied.await.expect("joined");
    assert_eq!(answer.is_error, Some(true), "{answer:?}");
    assert!(
        text(&answer).contains("the person declined the call of tool \"echo\" of server \"a\""),
        "{}",
        text(&answer)
    );
    assert_eq!(watcher.next().await["outcome"], json!("denied"));
    assert_eq!(
        reached(&log),
        ["echo"],
        "a declined call never reaches the server"
    );

    let timed_out = call(&client, "mcp_q_echo", json!({"message": "late"})).await;
    assert_eq!(timed_out.is_error, Some(true), "{timed_out:?}");
    assert!(
        text(&timed_out).contains(
            "did not answer the approval request for tool \"echo\" of server \"q\" within 1 s"
        ),
        "{}",
        text(&timed_out)
    );
    assert_eq!(watcher.next().await["event"], json!("asked"));
    assert_eq!(watcher.next().await["outcome"], json!("timedOut"));
    assert_eq!(reached(&quick_log), Vec::<String>::new());

    let always = calling("third");
    let asked = watcher.next().await;
    watcher.answer(&asked["id"], "always").await;
    assert_eq!(text(&always.await.expect("joined")), "third");
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(&c.config).expect("config")).expect("json");
    assert_eq!(
        file["mcpServers"]["a"]["toolPolicy"],
        json!({"echo": "allow"})
    );
    // Allowed from now on: were it asked, nobody would answer and it would be declined.
    let _ = watcher.next().await;
    let free = call(&client, "mcp_a_echo", json!({"message": "fourth"})).await;
    assert_eq!(text(&free), "fourth");
    assert_eq!(reached(&log), ["echo", "echo", "echo"]);
    let declined = recorded(&c, "mcp_q_echo").await;
    assert_eq!(
        declined.outcome.as_deref(),
        Some("declined"),
        "{declined:?}"
    );
    assert_eq!(declined.error_kind.as_deref(), Some("approval_timeout"));

    let _ = watcher.child.start_kill();
}

on_both_paths!(
    an_attached_approver_answers_on,
    an_attached_approver_answers
);

async fn a_cancelled_call_withdraws_its_ask(path: CallPath) {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("calls.log");
    let c = Companion::start_on(
        json!({ "mcpServers": { "a": entry(dir.path(), &log, json!({"echo": "ask"}), false) } }),
        path,
    );
    c.settled().await;
    let mut watcher = Watcher::attach(&c).await;
    let mut agent = crate::raw::RawAgent::connect_only(&c.socket).await;
    agent.handshake().await;
    agent
        .send(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "mcp_a_echo", "arguments": {"message": "never"}}}))
        .await;
    let asked = watcher.next().await;
    assert_eq!(asked["event"], json!("asked"), "{asked}");
    agent
        .send(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 7, "reason": "changed my mind"}}),
        )
        .await;
    let closed = watcher.next().await;
    assert_eq!(
        closed,
        json!({"event": "closed", "id": asked["id"], "outcome": "withdrawn"})
    );
    let answer = c.cli(&["approve", &asked["id"].to_string(), "once"]);
    assert!(!answer.status.success(), "a withdrawn ask takes no answer");
    assert!(
        String::from_utf8_lossy(&answer.stderr).contains("no longer open"),
        "{answer:?}"
    );
    assert_eq!(reached(&log), Vec::<String>::new());
    let _ = watcher.child.start_kill();
}

on_both_paths!(
    a_cancelled_call_withdraws_its_ask_on,
    a_cancelled_call_withdraws_its_ask
);

/// An approver whose input closes can no longer answer: it detaches, and an explicit `ask` is
/// then refused at once instead of waiting out `approvalTimeout`.
#[tokio::test]
async fn an_approver_whose_input_closed_detaches() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("calls.log");
    let mut e = entry(dir.path(), &log, json!({"echo": "ask"}), false);
    e["approvalTimeout"] = json!(600);
    let c = Companion::start(json!({ "mcpServers": { "a": e } }));
    c.settled().await;
    let Watcher {
        mut child, stdin, ..
    } = Watcher::attach(&c).await;
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("the watcher exits once its input closed")
        .expect("wait");
    assert!(status.success(), "{status:?}");
    let client = c.client().await;
    let asked = tokio::time::timeout(
        Duration::from_secs(60),
        call(&client, "mcp_a_echo", json!({"message": "hi"})),
    )
    .await
    .expect("refused at once, not after the 600 s approvalTimeout");
    assert_eq!(asked.is_error, Some(true), "{asked:?}");
    assert!(
        text(&asked).contains("nobody is there to ask"),
        "{}",
        text(&asked)
    );
    assert_eq!(reached(&log), Vec::<String>::new());
}

/// A call that waits for the person when the companion is stopped (SIGTERM) ends as the stop
/// it is (`shutting_down`), not as the agent's cancel.
#[tokio::test]
async fn a_call_waiting_at_a_stop_is_recorded_as_the_stop() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("calls.log");
    let mut e = entry(dir.path(), &log, json!({"echo": "ask"}), false);
    e["approvalTimeout"] = json!(600);
    let mut c = Companion::start(json!({ "mcpServers": { "a": e } }));
    c.settled().await;
    let client = c.client().await;
    let mut watcher = Watcher::attach(&c).await;
    let waiting = tokio::spawn(async move {
        let _ = call(&client, "mcp_a_echo", json!({"message": "late"})).await;
    });
    let asked = watcher.next().await;
    assert_eq!(asked["event"], json!("asked"), "{asked}");
    let status = c.terminate(Duration::from_secs(30));
    assert!(status.success(), "{status:?}");
    waiting.abort();
    let echo = recorded(&c, "mcp_a_echo").await;
    assert_eq!(echo.outcome.as_deref(), Some("error"), "{echo:?}");
    assert_eq!(
        echo.error_kind.as_deref(),
        Some("shutting_down"),
        "{echo:?}"
    );
    assert_eq!(reached(&log), Vec::<String>::new());
}
