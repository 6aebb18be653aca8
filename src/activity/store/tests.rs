use super::*;

#[test]
fn a_file_that_is_no_database_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("precious.txt");
    std::fs::write(&path, "my notes\n").expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    }
    let Err(e) = Store::open(&path) else {
        panic!("opened a text file as the activity log");
    };
    assert!(e.to_string().contains("not an SQLite database"), "{e}");
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "my notes\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o644);
    }
    // A database of ours opens again.
    let db = dir.path().join("a.db");
    drop(Store::open(&db).expect("new"));
    drop(Store::open(&db).expect("again"));
}

fn row(at_ms: u64, size: usize) -> Row {
    Row {
        at_ms,
        kind: "call",
        tool: Some("mcp_x_t".into()),
        result: Some("r".repeat(size)),
        ..Row::default()
    }
}

fn count(store: &Store) -> i64 {
    store
        .conn
        .query_row("SELECT count(*) FROM entries", [], |r| r.get(0))
        .unwrap_or(-1)
}

#[test]
fn the_file_is_private_and_in_wal_mode() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("sub").join("a.db");
    let store = Store::open(&path).expect("open");
    let mode: String = store
        .conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .expect("mode");
    assert_eq!(mode, "wal");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let file = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(file & 0o777, 0o600);
        let dir = std::fs::metadata(path.parent().expect("dir"))
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(dir & 0o777, 0o700);
    }
}

#[test]
fn a_batch_is_inserted_whole_and_in_order_across_statements() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = Store::open(&dir.path().join("a.db")).expect("open");
    // Two statements of ROWS_PER_STATEMENT rows and some left over, every column set on
    // the odd rows and NULL on the even ones.
    let n = 2 * ROWS_PER_STATEMENT + 5;
    let rows: Vec<Row> = (0..n as u64)
        .map(|i| {
            let set = i % 2 == 1;
            Row {
                at_ms: 1000 + i,
                kind: "call",
                agent: set.then(|| format!("a{i}")),
                agent_version: set.then(|| format!("v{i}")),
                agent_pid: set.then_some(i as u32),
                agent_exe: set.then(|| format!("e{i}")),
                profile: set.then(|| format!("p{i}")),
                server: set.then(|| format!("s{i}")),
                tool: Some(format!("t{i}")),
                path: set.then_some("fast"),
                duration_ms: set.then_some(i as f64 / 2.0),
                outcome: set.then(|| "ok".to_owned()),
                error_kind: set.then_some("rpc"),
                detail: set.then(|| format!("d{i}")),
                bytes_in: set.then_some(i * 3),
                bytes_out: set.then_some(i * 5),
                arguments: set.then(|| format!("g{i}")),
                result: set.then(|| format!("r{i}")),
                count: set.then_some(i * 7),
                attempts: set.then_some(i as u32 + 1),
            }
        })
        .collect();
    store.insert(&rows).expect("insert");
    let mut stmt = store
        .conn
        .prepare(
            "SELECT at_ms, agent, agent_version, agent_pid, agent_exe, profile, server, tool,
                path, duration_ms, outcome, error_kind, detail, bytes_in, bytes_out,
                arguments, result, count, attempts FROM entries ORDER BY id",
        )
        .expect("prepare");
    let read: Vec<String> = stmt
        .query_map([], |r| {
            let mut cells = Vec::new();
            for i in 0..19 {
                cells.push(format!("{:?}", r.get::<_, rusqlite::types::Value>(i)?));
            }
            Ok(cells.join("|"))
        })
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(read.len(), n);
    for (i, line) in read.iter().enumerate() {
        let i = i as u64;
        let expected = if i % 2 == 1 {
            format!(
                "Integer({})|Text(\"a{i}\")|Text(\"v{i}\")|Integer({i})|Text(\"e{i}\")|Text(\"p{i}\")|Text(\"s{i}\")|Text(\"t{i}\")|Text(\"fast\")|Real({:?})|Text(\"ok\")|Text(\"rpc\")|Text(\"d{i}\")|Integer({})|Integer({})|Text(\"g{i}\")|Text(\"r{i}\")|Integer({})|Integer({})",
                1000 + i,
                i as f64 / 2.0,
                i * 3,
                i * 5,
                i * 7,
                i + 1
            )
        } else {
            format!(
                "Integer({})|Null|Null|Null|Null|Null|Null|Text(\"t{i}\")|Null|Null|Null|Null|Null|Null|Null|Null|Null|Null|Null",
                1000 + i
            )
        };
        assert_eq!(line, &expected, "row {i}");
    }
}

#[test]
fn retention_deletes_old_entries_then_the_oldest_until_under_the_cap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = Store::open(&dir.path().join("a.db")).expect("open");
    let day = 86_400_000;
    let now = 100 * day;
    let rows: Vec<Row> = (0..10).map(|i| row(now - (40 - i) * day, 10)).collect();
    store.insert(&rows).expect("insert");
    let rows: Vec<Row> = (0..10).map(|i| row(now - i * 1000, 10)).collect();
    store.insert(&rows).expect("insert");
    let gone = store
        .retain(now, Duration::from_secs(30 * 86_400), u64::MAX)
        .expect("retain");
    // The ten from 40 to 31 days ago.
    assert_eq!(gone, 10);
    assert_eq!(count(&store), 10);

    // 2000 rows of 2 KiB: about 4 MiB; a cap of 1 MiB keeps the newest.
    let rows: Vec<Row> = (0..2000).map(|i| row(now + i, 2048)).collect();
    store.insert(&rows).expect("insert");
    let before = store.used_bytes().expect("used");
    assert!(before > 4 * 1024 * 1024, "{before}");
    store
        .retain(now + 2000, Duration::from_secs(30 * 86_400), 1024 * 1024)
        .expect("retain");
    assert!(store.used_bytes().expect("used") <= 1024 * 1024);
    let newest: i64 = store
        .conn
        .query_row("SELECT max(at_ms) FROM entries", [], |r| r.get(0))
        .expect("max");
    assert_eq!(newest as u64, now + 1999);
    let file = std::fs::metadata(dir.path().join("a.db"))
        .expect("meta")
        .len();
    assert!(
        file <= 2 * 1024 * 1024,
        "the file gave its space back: {file}"
    );
}
