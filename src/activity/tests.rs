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
        profile: None,
        path: "rmcp",
        server: Some("demo".into()),
        tool: tool.to_owned(),
        arguments: Payload::None,
        attempts: 0,
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
    let activity =
        Activity::open_with(&path, &ActivityConfig::default(), 4, None).expect("open the log");
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
    let activity = Activity::open_with(&path, &ActivityConfig::default(), 64, None).expect("open");
    activity.record(call("mcp_demo_echo"));
    activity.record(call("mcp_demo_add"));
    assert!(activity.flush(Duration::from_secs(10)));
    drop(activity);
    let again = Activity::open_with(&path, &ActivityConfig::default(), 64, None).expect("reopen");
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

#[test]
fn the_profile_a_withheld_outcome_and_a_capped_agent_name_are_stored_and_read_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("a.db");
    let activity =
        Activity::open_with(&path, &ActivityConfig::default(), 64, None).expect("open the log");
    let huge = format!("evil\x1b[2J{}", "n".repeat(200_000));
    activity.record(Entry::Call(Box::new(CallEntry {
        at_ms: now_ms(),
        duration: Duration::from_millis(1),
        agent: Agent {
            name: Some(huge.clone()),
            version: Some("v".repeat(1000)),
            ..Agent::default()
        },
        profile: Some("work".into()),
        path: "rmcp",
        server: None,
        tool: "mcp_demo_changed".into(),
        arguments: Payload::None,
        attempts: 0,
        ended: Ended::Failed {
            outcome: "withheld",
            kind: "withheld",
            detail: "tool \"mcp_demo_changed\" is withheld".into(),
            message: "tool \"mcp_demo_changed\" is withheld".into(),
        },
        approval: None,
    })));
    activity.record(call("mcp_demo_echo"));
    assert!(activity.flush(Duration::from_secs(10)));

    let work = records(
        &path,
        &Filter {
            profile: Some("work".into()),
            ..Filter::default()
        },
    );
    assert_eq!(work.len(), 1, "{work:#?}");
    let r = &work[0];
    assert_eq!(r.outcome.as_deref(), Some("withheld"));
    assert_eq!(r.error_kind.as_deref(), Some("withheld"));
    let name = r.agent.as_deref().unwrap_or_default();
    assert!(
        name.starts_with("evil\\x1b[2Jnnn"),
        "escaped: {}",
        &name[..20]
    );
    assert_eq!(
        name.chars().count(),
        AGENT_TEXT_MAX + 1,
        "256 characters and the mark"
    );
    assert!(name.ends_with('…'));
    assert_eq!(
        r.agent_version.as_deref().map(|v| v.chars().count()),
        Some(AGENT_TEXT_MAX + 1)
    );
    let line = r.line();
    assert!(
        line.contains("profile work") && line.contains("withheld"),
        "{line}"
    );
    let json = serde_json::to_value(r).expect("json");
    assert_eq!(json["profile"], "work");
    assert_eq!(json["outcome"], "withheld");
    // The default view's calls carry no profile.
    let all = records(&path, &Filter::default());
    let echo = all
        .iter()
        .find(|r| r.tool.as_deref() == Some("mcp_demo_echo"));
    assert_eq!(echo.map(|r| r.profile.clone()), Some(None), "{all:#?}");
}

#[test]
fn a_database_of_schema_1_gains_the_profile_column_and_reads_before_that() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("old.db");
    let old = rusqlite::Connection::open(&path).expect("create");
    old.execute_batch(&format!(
        "CREATE TABLE entries (id INTEGER PRIMARY KEY AUTOINCREMENT, at_ms INTEGER NOT NULL,
            kind TEXT NOT NULL, agent TEXT, agent_version TEXT, agent_pid INTEGER,
            agent_exe TEXT, server TEXT, tool TEXT, path TEXT, duration_ms REAL, outcome TEXT,
            error_kind TEXT, detail TEXT, bytes_in INTEGER, bytes_out INTEGER, arguments TEXT,
            result TEXT, count INTEGER);
         INSERT INTO entries (at_ms, kind, tool) VALUES ({}, 'call', 'mcp_old_t');
         PRAGMA user_version = 1;",
        now_ms()
    ))
    .expect("old schema");
    drop(old);
    // Read by a newer `activity` before any newer companion opened it.
    let before = records(&path, &Filter::default());
    assert_eq!(before.len(), 1);
    assert_eq!(before[0].profile, None);
    let none = records(
        &path,
        &Filter {
            profile: Some("work".into()),
            ..Filter::default()
        },
    );
    assert!(none.is_empty());
    let activity =
        Activity::open_with(&path, &ActivityConfig::default(), 64, None).expect("migrate");
    activity.record(call("mcp_new_t"));
    assert!(activity.flush(Duration::from_secs(10)));
    assert_eq!(activity.dropped(), 0);
    let after = records(&path, &Filter::default());
    assert_eq!(after.len(), 2, "{after:#?}");
}

/// A sink that keeps what it is handed.
struct Collect(std::sync::Arc<std::sync::Mutex<(Vec<String>, usize)>>);

impl Sink for Collect {
    fn row(&mut self, row: &Row) {
        let mut g = self.0.lock().expect("lock");
        g.0.push(format!(
            "{} {} {} args={}",
            row.kind,
            row.tool.as_deref().unwrap_or("-"),
            row.outcome.as_deref().unwrap_or("-"),
            row.arguments.is_some()
        ));
    }
    fn flush(&mut self) {
        self.0.lock().expect("lock").1 += 1;
    }
}

#[test]
fn with_the_database_off_a_sink_still_gets_every_row_without_payloads() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new((Vec::new(), 0)));
    let config = ActivityConfig {
        enabled: false,
        ..ActivityConfig::default()
    };
    let activity =
        Activity::open(&config, Some(Box::new(Collect(seen.clone())))).expect("sink only");
    assert!(activity.is_on());
    assert_eq!(activity.path(), None);
    let mut args = serde_json::Map::new();
    args.insert("message".into(), "hi".into());
    activity.record(Entry::Call(Box::new(CallEntry {
        arguments: Payload::Object(args),
        ..match call("mcp_demo_echo") {
            Entry::Call(c) => *c,
            _ => unreachable!("call() makes calls"),
        }
    })));
    assert!(activity.flush(Duration::from_secs(10)));
    let g = seen.lock().expect("lock");
    assert_eq!(
        g.0,
        vec!["call mcp_demo_echo cancelled args=false".to_owned()]
    );
    assert!(g.1 >= 1, "the flush reached the sink");
    let off = Activity::open(&config, None).expect("off");
    assert!(!off.is_on());
}
