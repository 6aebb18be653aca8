//! One agent cannot hurt the others or the machine: an agent that writes
//! calls and never reads is paused at a bounded cost while another agent is served; when an
//! agent goes away its calls stop reaching the server and the running ones are cancelled; a
//! half-closed agent still gets its answers. (The connection caps: `caps.rs`.)
//!
//! Each runs on both call paths ([`on_both_paths`]): the fast path's calls count against the
//! same bounds as the ones rmcp serves.
//!
//! Calls are counted at the demo server itself (`--call-log`: one line per call as it arrives,
//! `<tool> cancelled` when a call ends cancelled by the client).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use crate::common::{CallPath, Companion, call, demo, eventually, on_both_paths, text};

/// What [`mcp_companion::endpoint::limits::MAX_IN_FLIGHT`] allows.
const MAX_IN_FLIGHT: usize = mcp_companion::endpoint::limits::MAX_IN_FLIGHT;

/// A companion taking `path` whose demo server records every call in the returned file.
async fn companion_counting_calls(path: CallPath) -> (Companion, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir").keep();
    let calls = dir.join("calls.log");
    let log = calls.display().to_string();
    let c = Companion::start_on(
        json!({ "mcpServers": { "demo": demo(&["--call-log", &log]) } }),
        path,
    );
    c.settled().await;
    (c, calls)
}

/// Lines of the call log equal to `line`.
fn count(calls: &Path, line: &str) -> usize {
    std::fs::read_to_string(calls)
        .unwrap_or_default()
        .lines()
        .filter(|l| *l == line)
        .count()
}

/// Waits until `calls` has had no new line for `quiet`, at most `limit`; returns the count of
/// `line`.
async fn settle_count(calls: &Path, line: &str, quiet: Duration, limit: Duration) -> usize {
    let deadline = Instant::now() + limit;
    let mut last = (count(calls, line), Instant::now());
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = count(calls, line);
        if now != last.0 {
            last = (now, Instant::now());
        } else if last.1.elapsed() >= quiet || Instant::now() > deadline {
            return now;
        }
    }
}

/// A raw agent connection that has finished the handshake.
pub(crate) async fn raw_agent(c: &Companion) -> (BufReader<OwnedReadHalf>, OwnedWriteHalf) {
    let (rd, mut wr) = UnixStream::connect(&c.socket)
        .await
        .expect("connect")
        .into_split();
    let mut rd = BufReader::new(rd);
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "raw", "version": "0" } } });
    write_line(&mut wr, &init).await;
    let mut line = String::new();
    tokio::time::timeout(Duration::from_secs(30), rd.read_line(&mut line))
        .await
        .expect("initialize answered in time")
        .expect("read");
    let answer: Value = serde_json::from_str(&line).expect("json");
    assert_eq!(answer["id"], 0, "{answer}");
    write_line(
        &mut wr,
        &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
    )
    .await;
    (rd, wr)
}

async fn write_line(wr: &mut OwnedWriteHalf, message: &Value) {
    let mut line = serde_json::to_vec(message).expect("json");
    line.push(b'\n');
    wr.write_all(&line).await.expect("write");
}

fn tools_call(id: usize, tool: &str, arguments: Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": tool, "arguments": arguments } }))
    .expect("json");
    line.push(b'\n');
    line
}

/// Writes `n` calls of `tool` as fast as the socket takes them (ids 1..=n), in a task that
/// holds the write half (without half-closing it) until aborted.
fn flood(
    mut wr: OwnedWriteHalf,
    n: usize,
    tool: &'static str,
    arguments: Value,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        for id in 1..=n {
            if wr
                .write_all(&tools_call(id, tool, arguments.clone()))
                .await
                .is_err()
            {
                return;
            }
        }
        std::future::pending::<()>().await;
    })
}

/// An agent writes 5 000 calls of a tool answering 64 KiB and never reads: the companion reads
/// no more than its in-flight bound, its memory stays bounded, another agent's calls are served
/// promptly meanwhile, the episode is logged once, and after the agent disconnects no further
/// call of it reaches the server. Without the bounds the companion ran all 5 000 (≈ 320 MiB of
/// answers held in memory) and kept running them after the agent left.
async fn an_agent_that_never_reads_is_paused_at_a_bounded_cost_and_others_are_served(
    path: CallPath,
) {
    const CALLS: usize = 5_000;
    let (c, calls) = companion_counting_calls(path).await;
    let polite = c.client().await;
    let echo = |i: usize| {
        let polite = &polite;
        async move {
            let started = Instant::now();
            let r = call(
                polite,
                "mcp_demo_echo",
                json!({ "message": format!("hi {i}") }),
            )
            .await;
            assert_eq!(text(&r), format!("hi {i}"));
            started.elapsed()
        }
    };
    // Warm up (the first tools/list, allocator pools) before taking the baselines.
    for _ in 0..20 {
        call(&polite, "mcp_demo_big", json!({ "bytes": 65_536 })).await;
    }
    let mut alone = Duration::ZERO;
    for i in 0..50 {
        alone = alone.max(echo(i).await);
    }
    let before = c.rss_kib();
    let big_before = count(&calls, "big");

    let (hostile_rd, hostile_wr) = raw_agent(&c).await;
    let flooding = flood(
        hostile_wr,
        CALLS,
        "mcp_demo_big",
        json!({ "bytes": 65_536 }),
    );
    // Served while the hostile agent's first calls run.
    let mut during_burst = Duration::ZERO;
    for i in 0..50 {
        during_burst = during_burst.max(echo(i).await);
    }
    let reached = settle_count(
        &calls,
        "big",
        Duration::from_secs(2),
        Duration::from_secs(60),
    )
    .await
        - big_before;
    // Served while the hostile agent is paused.
    let mut paused = Duration::ZERO;
    for i in 0..50 {
        paused = paused.max(echo(i).await);
    }
    let after = c.rss_kib();
    let log = c.log();
    eprintln!(
        "hostile agent: {reached} of {CALLS} calls reached the server; RSS {before} -> {after} KiB; \
         slowest polite call alone {alone:?}, during the burst {during_burst:?}, while paused {paused:?}"
    );
    // In flight (64), plus the few answers the socket buffers hold (each written answer frees
    // a slot): far below the 5 000 sent.
    assert!(
        (MAX_IN_FLIGHT..4 * MAX_IN_FLIGHT).contains(&reached),
        "{reached} calls reached the server\n{log}"
    );
    // 64 answers of 64 KiB held (as parsed values and as encoded lines) plus the 4 MiB queue
    // bound is about 20 MiB; 64 MiB leaves room for the allocator. Unbounded, the 5 000
    // answers alone are 320 MiB.
    assert!(
        after.saturating_sub(before) < 64 * 1024,
        "RSS grew from {before} to {after} KiB"
    );
    assert!(
        paused < alone.max(Duration::from_millis(100)) * 10,
        "a polite call took {paused:?} while the hostile agent was paused (alone: {alone:?})"
    );
    assert_eq!(
        log.matches("is not reading its answers").count(),
        1,
        "one line per episode\n{log}"
    );
    assert_eq!(
        log.matches("requests in flight; each further").count(),
        1,
        "{log}"
    );

    // The agent dies: both halves of its socket close.
    flooding.abort();
    let _ = flooding.await;
    drop(hostile_rd);
    let gone_at = count(&calls, "big");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let one_second = count(&calls, "big");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        count(&calls, "big"),
        one_second,
        "calls still reached the server 1 s after the agent left (at {gone_at}, then {one_second})"
    );
    let log = c.log();
    assert_eq!(
        log.matches("agent connection closed; cancelling").count(),
        1,
        "{log}"
    );
    // The polite agent is still served.
    let r = call(&polite, "mcp_demo_echo", json!({ "message": "still here" })).await;
    assert_eq!(text(&r), "still here");
}

/// An agent starts 100 slow calls and disconnects: only 64 were read (the in-flight bound),
/// and all 64 are cancelled at the server within a second of the disconnect; the 36 never read
/// never run. Without the fix all 100 ran, and were cancelled only after rmcp's 5 s drain.
async fn a_departed_agents_calls_are_cancelled_upstream_within_a_second(path: CallPath) {
    let (c, calls) = companion_counting_calls(path).await;
    let (rd, mut wr) = raw_agent(&c).await;
    let mut batch = Vec::new();
    for id in 1..=100 {
        batch.extend(tools_call(id, "mcp_demo_sleep", json!({ "seconds": 60 })));
    }
    wr.write_all(&batch).await.expect("write");
    let started = settle_count(
        &calls,
        "sleep",
        Duration::from_secs(1),
        Duration::from_secs(30),
    )
    .await;
    assert_eq!(
        started,
        MAX_IN_FLIGHT,
        "calls read while 64 were in flight\n{}",
        c.log()
    );

    let stream = rd.into_inner().reunite(wr).expect("same stream");
    drop(stream);
    let left = Instant::now();
    let all_cancelled = eventually(Duration::from_secs(5), || {
        count(&calls, "sleep cancelled") == MAX_IN_FLIGHT
    })
    .await;
    let took = left.elapsed();
    assert!(
        all_cancelled,
        "{} of {MAX_IN_FLIGHT} cancelled\n{}",
        count(&calls, "sleep cancelled"),
        c.log()
    );
    assert!(
        took < Duration::from_millis(1500),
        "cancelled after {took:?}"
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(count(&calls, "sleep"), MAX_IN_FLIGHT, "unread calls ran");
}

/// A client that closes only its sending half (as `mcp-companion bridge` does when its stdin
/// ends) still gets an answer to every request it sent, even ones that take longer than
/// rmcp's 5 s drain; nothing is cancelled.
async fn a_half_closed_agent_still_gets_every_answer(path: CallPath) {
    let (c, calls) = companion_counting_calls(path).await;
    let (rd, mut wr) = raw_agent(&c).await;
    for id in 1..=3 {
        wr.write_all(&tools_call(id, "mcp_demo_sleep", json!({ "seconds": 6 })))
            .await
            .expect("write");
    }
    wr.shutdown().await.expect("half-close");
    let mut lines = rd.lines();
    let mut answered = Vec::new();
    while let Some(line) = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("answers in time")
        .expect("read")
    {
        let v: Value = serde_json::from_str(&line).expect("json");
        assert_eq!(
            v["result"]["content"][0]["text"],
            "slept 6 s",
            "{v}\n{}",
            c.log()
        );
        answered.push(v["id"].as_u64().expect("id"));
    }
    answered.sort_unstable();
    assert_eq!(answered, [1, 2, 3]);
    assert_eq!(count(&calls, "sleep cancelled"), 0);
}

on_both_paths!(
    an_agent_that_never_reads_is_paused_at_a_bounded_cost_and_others_are_served,
    an_agent_that_never_reads_is_paused_at_a_bounded_cost_and_others_are_served,
    multi_thread
);
on_both_paths!(
    a_departed_agents_calls_are_cancelled_upstream_within_a_second,
    a_departed_agents_calls_are_cancelled_upstream_within_a_second,
    multi_thread
);
on_both_paths!(
    a_half_closed_agent_still_gets_every_answer,
    a_half_closed_agent_still_gets_every_answer
);
