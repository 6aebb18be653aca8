//! The handle, the queue and the writer together, on a real database file.

use std::time::Duration;

use super::*;
use crate::activity::query::{Filter, read};

fn call(tool: &str) -> Entry {
    Entry::Call(Box::new(CallEntry {
        at_ms: now_ms(),
        duration: Duration::from_millis(3),
        agent: Agent {
            name: Some("tester".into()),
            version: Some("1.0".into()),
            ..Agent::default()
        },
        path: "rmcp",
        server: Some("demo".into()),
        tool: tool.to_owned(),
        arguments: Payload::None,
        approval: None,
        ended: Ended::Cancelled,
    }))
}

fn records(path: &Path, filter: &Filter) -> Vec<query::Record> {
    let conn = store::open_read_only(path).expect("open read-only");
    read(&conn, filter, 0).expect("read")
}

#[test]
fn a_full_queue_drops_entries_counts_them_and_the_log_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("a.db");
    let activity = Activity::open_with(&path, &ActivityConfig::default(), 4).expect("open the log");
    assert!(activity.flush(Duration::from_secs(10)));
    // Another connection holds the write lock: the writer waits on it (busy timeout) with
    // one batch in hand while the queue fills.
    let blocker = rusqlite::Connection::open(&path).expect("open");
    blocker.execute_batch("BEGIN IMMEDIATE").expect("lock");
    // The writer takes at most one batch (512) before its insert waits, and the queue holds 4.
    for i in 0..2000 {
        activity.record(call(&format!("t{i}")));
    }
    let dropped = activity.dropped();
    assert!(
        dropped >= 1000,
        "dropped {dropped} of 2000 with a queue of 4"
    );
    blocker.execute_batch("COMMIT").expect("unlock");
    assert!(activity.flush(Duration::from_secs(20)));
    let all = records(&path, &Filter::default());
    let calls = all.iter().filter(|r| r.kind == "call").count() as u64;
    let noted: i64 = all
        .iter()
        .filter(|r| r.kind == "dropped")
        .filter_map(|r| r.count)
        .sum();
    assert_eq!(calls + dropped, 2000, "every entry is written or counted");
    assert_eq!(noted as u64, dropped, "the log says how many it lost");
}

#[test]
fn entries_survive_a_reopen_and_filters_select_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("a.db");
    let activity = Activity::open_with(&path, &ActivityConfig::default(), 64).expect("open");
    activity.record(call("mcp_demo_echo"));
    activity.record(call("mcp_demo_add"));
    assert!(activity.flush(Duration::from_secs(10)));
    drop(activity);
    let again = Activity::open_with(&path, &ActivityConfig::default(), 64).expect("reopen");
    again.record(call("mcp_demo_echo"));
    assert!(again.flush(Duration::from_secs(10)));
    let echo = Filter {
        tool: Some("mcp_demo_echo".into()),
        ..Filter::default()
    };
    let found = records(&path, &echo);
    assert_eq!(found.len(), 2);
    assert!(
        found
            .iter()
            .all(|r| r.outcome.as_deref() == Some("cancelled"))
    );
    assert!(found[0].id < found[1].id, "oldest first");
    let last = Filter {
        limit: Some(1),
        ..Filter::default()
    };
    assert_eq!(
        records(&path, &last)[0].tool.as_deref(),
        Some("mcp_demo_echo")
    );
    let nobody = Filter {
        agent: Some("someone else".into()),
        ..Filter::default()
    };
    assert!(records(&path, &nobody).is_empty());
}
