//! Proves the supervision rules (DESIGN §7): a crashed server comes back with a new process
//! (how fast is printed, not asserted: timing goals belong in benchmarks); a server that keeps
//! dying at start gives up after 5 tries with its stderr in the error; callers that hit one
//! broken session share exactly one respawn (and only the read-only ones are sent again); `kill -9` of `serve` leaves nothing behind;
//! `reload` and `serve --watch` apply config edits without touching the servers that did not
//! change; `restart` and `logs --follow` work through the control API.

use std::time::{Duration, Instant};

use mcp_companion::control::{ControlClient, ControlRequest, ControlResponse};
use serde_json::json;

use crate::common::{
    BIN, CallPath, Companion, call, demo, eventually, on_both_paths, survivors, text, tool_names,
};

/// Polls `status` until `name` is `running` with a pid other than `old_pid` and its tools are
/// back in the merged catalog.
async fn wait_running_with_new_pid(
    c: &Companion,
    name: &str,
    old_pid: Option<u32>,
    within: Duration,
) -> u32 {
    let deadline = Instant::now() + within;
    loop {
        let s = c.server(name).await;
        if s.state.as_str() == "running" && s.pid.is_some() && s.pid != old_pid && s.tools > 0 {
            return s.pid.unwrap_or_default();
        }
        assert!(
            Instant::now() < deadline,
            "{name} not running again within {within:?}: {s:?}\n{}",
            c.log()
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

async fn a_crash_fails_the_call_without_waiting_for_its_timeout_and_the_server_comes_back(
    path: CallPath,
) {
    let c = Companion::start_on(
        json!({ "mcpServers": { "crashy": demo(&[]), "steady": demo(&[]) } }),
        path,
    );
    let servers = c.settled().await;
    let steady_pid = servers[1].pid;
    let old = c.server("crashy").await.pid;
    let client = c.client().await;

    let started = Instant::now();
    let crashed = call(&client, "mcp_crashy_crash", json!({ "exit_code": 7 })).await;
    assert_eq!(crashed.is_error, Some(true), "{crashed:?}");
    // Answered because the session broke, not because the call's toolTimeout ran out.
    assert!(!text(&crashed).contains("timed out"), "{crashed:?}");

    // How fast it comes back is measured (printed below), not asserted: under a loaded machine a
    // time bound would make this test flaky. `crash` declares no readOnlyHint, so it is never
    // sent again; still, wait until the new process answers.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut last = old;
    let new_pid = loop {
        let pid = wait_running_with_new_pid(&c, "crashy", last, Duration::from_secs(60)).await;
        let echo = call(&client, "mcp_crashy_echo", json!({ "message": "back" })).await;
        if text(&echo) == "back" {
            break pid;
        }
        assert!(
            Instant::now() < deadline,
            "never came back: {echo:?}\n{}",
            c.log()
        );
        last = Some(pid);
    };
    let back_after = started.elapsed();
    assert_ne!(Some(new_pid), old);
    let s = c.server("crashy").await;
    assert!(s.restarts >= 1, "{s:?}");
    assert!(
        s.last_error
            .as_deref()
            .unwrap_or("")
            .contains("exit code 7"),
        "{s:?}"
    );
    // The process's own last words are quoted; the log's process marker is not.
    let err = s.last_error.clone().unwrap_or_default();
    assert!(
        err.contains("demo-server: crashing with exit code 7 as requested")
            && !err.contains("── process"),
        "{err}"
    );
    assert_eq!(
        c.server("steady").await.pid,
        steady_pid,
        "the other server was not touched"
    );
    let status = String::from_utf8_lossy(&c.cli(&["status"]).stdout).into_owned();
    assert!(status.contains("RESTARTS"), "{status}");
    eprintln!(
        "crashy back after {back_after:?} with {} restarts",
        s.restarts
    );
}

#[tokio::test]
async fn a_server_that_dies_at_start_gives_up_after_five_tries_and_others_are_unaffected() {
    let c = Companion::start(
        json!({ "mcpServers": { "dies": demo(&["--fail-start"]), "fine": demo(&[]) } }),
    );
    let fine_pid = c.settled().await[1].pid;
    let deadline = Instant::now() + Duration::from_secs(120);
    let failed = loop {
        let s = c.server("dies").await;
        if s.state.as_str() == "failed" {
            break s;
        }
        assert!(Instant::now() < deadline, "never gave up: {s:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let err = failed.last_error.clone().unwrap_or_default();
    assert!(
        err.contains("failing at start as requested"),
        "last stderr lines in the error: {err}"
    );
    assert!(err.contains("gave up after 5 failures"), "{err}");
    assert_eq!(failed.restarts, 4, "{failed:?}");
    let client = c.client().await;
    assert_eq!(
        text(&call(&client, "mcp_fine_echo", json!({ "message": "ok" })).await),
        "ok"
    );
    assert_eq!(c.server("fine").await.pid, fine_pid);
    let down = call(&client, "mcp_dies_echo", json!({})).await;
    assert_eq!(down.is_error, Some(true), "no such tool while it is down");
}

/// 20 calls in flight when the process dies: the 10 read-only ones (`readOnlyHint`) are sent
/// again and all of them share one new process; the 10 others are not sent again (they may
/// have run) and each is told so.
async fn concurrent_calls_on_a_session_that_dies_share_exactly_one_respawn(path: CallPath) {
    let c = Companion::start_on(json!({ "mcpServers": { "demo": demo(&[]) } }), path);
    let old = c.settled().await[0].pid.expect("pid");
    let client = std::sync::Arc::new(c.client().await);
    let calls: Vec<_> = (0..20)
        .map(|i| {
            let client = client.clone();
            let seconds = 0.8 + f64::from(i) * 0.001;
            let tool = if i % 2 == 0 {
                "mcp_demo_read_slowly"
            } else {
                "mcp_demo_work"
            };
            tokio::spawn(async move {
                (
                    tool,
                    call(&*client, tool, json!({ "seconds": seconds })).await,
                )
            })
        })
        .collect();
    // Let all 20 reach the server, then kill it under them.
    tokio::time::sleep(Duration::from_millis(300)).await;
    crate::common::signal(old, rustix::process::Signal::KILL);
    let (mut read_ok, mut told) = (0, 0);
    for handle in calls {
        let (tool, result) = handle.await.expect("join");
        let said = text(&result);
        match (tool, result.is_error == Some(true)) {
            ("mcp_demo_read_slowly", false) if said.starts_with("read after") => read_ok += 1,
            ("mcp_demo_work", true) if said.contains("may or may not have run") => told += 1,
            _ => eprintln!("unexpected answer from {tool}: {said}"),
        }
    }
    let s = c.server("demo").await;
    assert_eq!(s.restarts, 1, "exactly one respawn: {s:?}");
    assert!(s.pid.is_some() && s.pid != Some(old), "{s:?}");
    assert_eq!(
        read_ok, 10,
        "every read-only call was retried once on the new session"
    );
    assert_eq!(told, 10, "no other call was sent again, and each was told");
}

#[tokio::test]
async fn kill_9_of_serve_leaves_no_process_behind() {
    let grandchild =
        json!({ "command": "sh", "args": ["-c", format!("sleep 300 & exec {BIN} demo-server")] });
    let mut c = Companion::start(json!({ "mcpServers": { "a": demo(&[]), "b": grandchild } }));
    let leaders: Vec<u32> = c.settled().await.iter().filter_map(|s| s.pid).collect();
    assert_eq!(leaders.len(), 2);
    assert!(
        survivors(&leaders)
            .iter()
            .any(|(_, _, cmd)| cmd.starts_with("sleep 300"))
    );
    let mut serve = c.child.take().expect("serve");
    serve.kill().expect("SIGKILL serve");
    let _ = serve.wait();
    let gone = eventually(Duration::from_secs(30), || survivors(&leaders).is_empty()).await;
    assert!(gone, "left behind after kill -9: {:?}", survivors(&leaders));
}

#[derive(Clone, Default)]
struct ListChanged(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl rmcp::ClientHandler for ListChanged {
    async fn on_tool_list_changed(
        &self,
        _cx: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

fn write_config(c: &Companion, config: &serde_json::Value) {
    std::fs::write(&c.config, serde_json::to_vec_pretty(config).expect("json"))
        .expect("write config");
}

#[tokio::test]
async fn reload_adds_removes_and_changes_servers_without_touching_the_rest() {
    let mut config =
        json!({ "mcpServers": { "keep": demo(&[]), "drop": demo(&[]), "edit": demo(&[]) } });
    let c = Companion::start(config.clone());
    let before = c.settled().await;
    let pid = |list: &[mcp_companion::supervisor::ServerStatus], n: &str| {
        list.iter().find(|s| s.name == n).and_then(|s| s.pid)
    };
    let heard = ListChanged::default();
    let client = c.client_with(heard.clone()).await;

    config["mcpServers"]
        .as_object_mut()
        .expect("object")
        .remove("drop");
    config["mcpServers"]["edit"]["enabledTools"] = json!(["echo"]);
    config["mcpServers"]["added"] = demo(&[]);
    write_config(&c, &config);
    let out = c.cli(&["reload", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("report");
    assert_eq!(report["added"], json!(["added"]));
    assert_eq!(report["removed"], json!(["drop"]));
    assert_eq!(report["changed"], json!(["edit"]));
    assert_eq!(report["unchanged"], json!(["keep"]));

    let after = c.status().await.servers;
    assert_eq!(
        pid(&after, "keep"),
        pid(&before, "keep"),
        "untouched server kept its process"
    );
    assert!(pid(&after, "added").is_some() && pid(&after, "edit") != pid(&before, "edit"));
    assert!(pid(&after, "drop").is_none());
    let names = tool_names(&client).await;
    assert!(names.contains(&"mcp_added_echo".to_owned()), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("mcp_drop_")));
    assert_eq!(
        names.iter().filter(|n| n.starts_with("mcp_edit_")).count(),
        1,
        "{names:?}"
    );
    assert!(
        eventually(Duration::from_secs(30), || heard
            .0
            .load(std::sync::atomic::Ordering::SeqCst)
            >= 1)
        .await
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        heard.0.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "one coalesced list_changed"
    );
    assert_eq!(
        text(
            &call(
                &client,
                "mcp_keep_echo",
                json!({ "message": "same session" })
            )
            .await
        ),
        "same session"
    );

    // A config that does not parse is rejected and nothing changes.
    std::fs::write(&c.config, b"{ \"mcpServers\": { oops").expect("write");
    let bad = c.cli(&["reload"]);
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("not reloaded") && err.contains("line 1"),
        "{err}"
    );
    assert_eq!(
        c.status().await.servers,
        after_without_since(&c.status().await.servers, &after)
    );
}

/// `after` with each `since_ms` taken from `now` (only state changes would move it).
fn after_without_since(
    now: &[mcp_companion::supervisor::ServerStatus],
    after: &[mcp_companion::supervisor::ServerStatus],
) -> Vec<mcp_companion::supervisor::ServerStatus> {
    after
        .iter()
        .zip(now)
        .map(|(a, n)| mcp_companion::supervisor::ServerStatus {
            since_ms: n.since_ms,
            ..a.clone()
        })
        .collect()
}

#[tokio::test]
async fn serve_watch_reloads_when_the_file_changes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.json");
    std::fs::write(
        &config,
        serde_json::to_vec(&json!({ "mcpServers": { "one": demo(&[]) } })).expect("json"),
    )
    .expect("write");
    let socket = dir.path().join("mcp.sock");
    let mut serve = std::process::Command::new(BIN)
        .args(["serve", "--watch", "--config"])
        .arg(&config)
        .arg("--socket")
        .arg(&socket)
        .env("HOME", dir.path())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("serve");
    let control = dir.path().join("control.sock");
    let status = || async { mcp_companion::control::status(&control).await.ok() };
    let mut ready = false;
    // Generous bounds: each loop ends as soon as the state is reached.
    for _ in 0..2400 {
        if status().await.is_some_and(|s| {
            s.servers
                .first()
                .is_some_and(|s| s.state.as_str() == "running")
        }) {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(ready);
    std::fs::write(
        &config,
        serde_json::to_vec(&json!({ "mcpServers": { "one": demo(&[]), "two": demo(&[]) } }))
            .expect("json"),
    )
    .expect("write");
    let mut two_running = false;
    for _ in 0..1200 {
        if status().await.is_some_and(|s| {
            s.servers
                .get(1)
                .is_some_and(|s| s.state.as_str() == "running")
        }) {
            two_running = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let warned = |s: &mcp_companion::control::StatusReport| {
        s.warnings
            .first()
            .is_some_and(|w| w.contains("the config file changed but cannot be used"))
    };
    // A broken edit: the servers keep running and `status` says why the edit is not in effect.
    std::fs::write(&config, "{ \"mcpServers\": { \"one\": ").expect("write");
    let mut refused = None;
    for _ in 0..1200 {
        if let Some(s) = status().await.filter(|s| warned(s)) {
            refused = Some(s);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Fixed again: the warning goes.
    std::fs::write(
        &config,
        serde_json::to_vec(&json!({ "mcpServers": { "one": demo(&[]) } })).expect("json"),
    )
    .expect("write");
    let mut cleared = false;
    for _ in 0..1200 {
        if status()
            .await
            .is_some_and(|s| !warned(&s) && s.servers.len() == 1)
        {
            cleared = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    crate::common::sigterm(serve.id());
    let _ = serve.wait();
    assert!(
        two_running,
        "the added server started after the file changed"
    );
    let refused = refused.expect("the broken edit shown in status");
    assert!(
        refused.warnings[0].contains("line 1") && refused.servers.len() == 2,
        "{refused:?}"
    );
    assert!(cleared, "the warning left once the file was fixed");
}

#[tokio::test]
async fn restart_gives_a_new_process_and_logs_follow_streams_new_lines() {
    let c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    let old = c.settled().await[0].pid;
    let mut follow = ControlClient::connect(&c.control).await.expect("control");
    follow
        .send(&ControlRequest::Logs {
            server: "demo".into(),
            lines: 10,
            follow: true,
        })
        .await
        .expect("send");
    let lines = |answer: Option<ControlResponse>| match answer {
        Some(ControlResponse::Logs(batch)) => batch.lines.join("\n"),
        other => panic!("expected a batch of log lines, got {other:?}"),
    };
    let first = lines(follow.next().await.expect("answer"));
    assert!(first.contains("ready"), "{first}");

    let out = c.cli(&["restart", "demo"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let new_pid = wait_running_with_new_pid(&c, "demo", old, Duration::from_secs(60)).await;
    // Batches are pushed as lines are written; the new process's "ready" line comes soon.
    let mut seen = String::new();
    let want = format!("ready (pid {new_pid})");
    while !seen.contains(&want) {
        let batch = tokio::time::timeout(Duration::from_secs(60), follow.next())
            .await
            .unwrap_or_else(|_| panic!("no batch with {want:?}; so far: {seen}"))
            .expect("ok");
        seen.push_str(&lines(batch));
        seen.push('\n');
    }
}

on_both_paths!(
    a_crash_fails_the_call_without_waiting_for_its_timeout_and_the_server_comes_back,
    a_crash_fails_the_call_without_waiting_for_its_timeout_and_the_server_comes_back
);
on_both_paths!(
    concurrent_calls_on_a_session_that_dies_share_exactly_one_respawn,
    concurrent_calls_on_a_session_that_dies_share_exactly_one_respawn
);
