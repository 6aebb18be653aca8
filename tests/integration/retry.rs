//! Proves the retry rule (`hub::forward`) and the restart rule: a
//! call whose server dies under it is sent again only when that cannot run it twice (a
//! side-effecting tool runs exactly once and the agent is told; a `readOnlyHint` tool is
//! retried and succeeds), and calls made while a server restarts or is replaced by a reload
//! wait for it instead of failing with "unknown tool".

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::activity::{default_db, wait_for_calls};
use crate::common::{CallPath, Companion, call, demo, on_both_paths, signal, text};
use crate::raw::RawAgent;

/// The lines of `path` (none when it does not exist yet).
fn lines(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Polls `status` until `name` runs a process other than `old` with its tools listed.
async fn running_again(c: &Companion, name: &str, old: Option<u32>) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let s = c.server(name).await;
        if s.state.as_str() == "running" && s.pid.is_some() && s.pid != old && s.tools > 0 {
            return s.pid.unwrap_or_default();
        }
        assert!(
            Instant::now() < deadline,
            "{name} not back: {s:?}\n{}",
            c.log()
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test]
async fn a_side_effecting_call_whose_server_dies_runs_exactly_once_and_the_agent_is_told() {
    let c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    let old = c.settled().await[0].pid;
    let client = Arc::new(c.client().await);
    let file = c.home.join("appended.txt");
    let pending = {
        let client = client.clone();
        let path = file.display().to_string();
        tokio::spawn(async move {
            call(
                &*client,
                "mcp_demo_append",
                json!({ "path": path, "line": "ran", "seconds": 30 }),
            )
            .await
        })
    };
    // The side effect happened: the call is in flight upstream. Kill the server under it.
    let deadline = Instant::now() + Duration::from_secs(30);
    while lines(&file).is_empty() {
        assert!(Instant::now() < deadline, "append never ran\n{}", c.log());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    signal(old.expect("pid"), rustix::process::Signal::KILL);
    let result = pending.await.expect("join");
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let said = text(&result);
    assert!(
        said.contains("the server's process exited during the call (signal 9 (SIGKILL))")
            && said.contains("may or may not have run"),
        "{said}"
    );
    // The server comes back; nothing sends the call again.
    running_again(&c, "demo", old).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(lines(&file), ["ran"], "the call ran exactly once");
    let entries = wait_for_calls(&default_db(&c), 1).await;
    assert_eq!(entries[0].attempts, Some(1), "sent once: {entries:#?}");
}

/// The retried call is one entry of the activity log that counts both attempts sent.
async fn a_read_only_call_whose_server_dies_is_retried_and_logged_with_both_attempts(
    path: CallPath,
) {
    let c = Companion::start_on(json!({ "mcpServers": { "demo": demo(&[]) } }), path);
    let old = c.settled().await[0].pid;
    let mut agent = RawAgent::connect_only(&c.socket).await;
    agent.handshake().await;
    let calling = tokio::spawn(async move {
        agent
            .call_tool(1, "mcp_demo_read_slowly", json!({"seconds": 2}))
            .await
    });
    // The call takes 2 s upstream: kill the server while it is under way.
    tokio::time::sleep(Duration::from_millis(500)).await;
    signal(old.expect("pid"), rustix::process::Signal::KILL);
    let answer = calling.await.expect("joined");
    assert_eq!(
        answer["result"]["content"][0]["text"],
        json!("read after 2 s"),
        "{answer}\n{}",
        c.log()
    );
    let s = c.server("demo").await;
    assert_eq!(s.restarts, 1, "{s:?}");
    assert_ne!(s.pid, old);
    let entries = wait_for_calls(&default_db(&c), 1).await;
    assert_eq!(entries.len(), 1, "one entry for the call: {entries:#?}");
    assert_eq!(entries[0].outcome.as_deref(), Some("ok"), "{entries:#?}");
    assert_eq!(entries[0].attempts, Some(2), "{entries:#?}");
}

on_both_paths!(
    read_only_retry,
    a_read_only_call_whose_server_dies_is_retried_and_logged_with_both_attempts
);

/// 8 agents call continuously while the server is restarted twice and a reload changes its
/// entry twice: no call answers "unknown tool", every call gets exactly one answer (each is
/// awaited with a bound), and every failure is a call caught in flight, said so.
#[tokio::test]
async fn calls_during_restarts_and_changing_reloads_wait_for_the_server() {
    let config = |marker: &str| {
        let mut entry = demo(&[]);
        entry["env"] = json!({ "RELOAD_MARKER": marker });
        json!({ "mcpServers": { "demo": entry, "other": demo(&[]) } })
    };
    let c = Companion::start(config("0"));
    c.settled().await;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (ok, in_flight, other) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(std::sync::Mutex::new(Vec::<String>::new())),
    );
    let mut agents = Vec::new();
    for agent in 0..8 {
        let client = c.client().await;
        let (stop, ok, in_flight, other) =
            (stop.clone(), ok.clone(), in_flight.clone(), other.clone());
        agents.push(tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                n += 1;
                let message = format!("{agent}-{n}");
                let answer = tokio::time::timeout(
                    Duration::from_secs(90),
                    call(&client, "mcp_demo_echo", json!({ "message": message })),
                )
                .await
                .unwrap_or_else(|_| panic!("call {message} got no answer within 90 s"));
                let said = text(&answer);
                if answer.is_error != Some(true) && said == message {
                    ok.fetch_add(1, Ordering::SeqCst);
                } else if said.contains("may or may not have run") {
                    in_flight.fetch_add(1, Ordering::SeqCst);
                } else {
                    other.lock().unwrap().push(said);
                }
            }
        }));
    }
    let ok_before = |n: usize| {
        let ok = ok.clone();
        async move {
            let deadline = Instant::now() + Duration::from_secs(60);
            while ok.load(Ordering::SeqCst) < n {
                assert!(Instant::now() < deadline, "calls stalled");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    ok_before(50).await;
    // A reload first: the new server's first session has the same generation number as the
    // old one's, which must not pass for "already in the catalog".
    for round in 1..=2 {
        std::fs::write(
            &c.config,
            serde_json::to_vec(&config(&round.to_string())).expect("json"),
        )
        .expect("write config");
        let reload = c.cli(&["reload"]);
        assert!(reload.status.success(), "{reload:?}");
        ok_before(ok.load(Ordering::SeqCst) + 50).await;
        let restart = c.cli(&["restart", "demo"]);
        assert!(restart.status.success(), "{restart:?}");
        ok_before(ok.load(Ordering::SeqCst) + 50).await;
    }
    stop.store(true, Ordering::SeqCst);
    for agent in agents {
        agent.await.expect("agent");
    }
    let other = other.lock().unwrap().clone();
    let (ok, in_flight) = (ok.load(Ordering::SeqCst), in_flight.load(Ordering::SeqCst));
    eprintln!(
        "{ok} answered, {in_flight} caught in flight, {} other",
        other.len()
    );
    assert!(
        other.is_empty(),
        "unexpected answers: {other:?}\n{}",
        c.log()
    );
    // Calls are answered as soon as the new session is up, which can be a moment before the
    // status says `running` (that waits for the tools to be in the merged catalog): wait for
    // the server to settle rather than read the state right after the last restart.
    let servers = c.settled().await;
    let s = servers
        .iter()
        .find(|s| s.name == "demo")
        .expect("demo in the status");
    assert_eq!(s.state.as_str(), "running", "{s:?}");
}
