//! The database: one SQLite file (bundled SQLite), mode 0600 in a 0700 directory, WAL journal
//! with `synchronous = NORMAL` (a crash or kill loses at most the last transactions, never
//! the file's consistency), incremental auto-vacuum so retention gives space back.
//!
//! One table, `entries`; each row is one entry of one `kind`. Columns that do not apply to a
//! kind are NULL, so new kinds (an approval, a pinned definition) add rows, not tables.
//!
//! | column | holds |
//! |---|---|
//! | `id` | increasing; `--follow` reads the rows after the last one seen |
//! | `at_ms` | when it happened (calls: when they started), Unix ms |
//! | `kind` | `call`, `list`, `server`, `dropped` |
//! | `agent`, `agent_version`, `agent_pid`, `agent_exe` | who (`clientInfo`, escaped and cut to 256 characters; pid and exe when known) |
//! | `profile` | the profile of the agent's session (NULL: the default view); added in schema 2 |
//! | `server`, `tool`, `path` | where: the server, the wrapped tool (or the listing's method), `fast` / `rmcp` |
//! | `duration_ms` | calls: until the answer (or the cancel) |
//! | `outcome`, `error_kind` | calls: `ok`, `isError`, `error` (+ kind), `timeout`, `cancelled`, `withheld` (waits for approval; never sent), `denied` / `declined` (the call policy, + kind); servers: the new state |
//! | `detail` | a short text: the error, the previous state, the page's cursor |
//! | `bytes_in`, `bytes_out` | the arguments' and the result's JSON size |
//! | `arguments`, `result` | their shape, or in full with `recordPayloads` |
//! | `count` | `dropped`: entries lost; `list`: items on the page |
//! | `attempts` | calls: how many times the companion sent the call to the server (2 when it was retried on a new session); NULL when it never reached the server; added in schema 3 |

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

/// The schema version in `PRAGMA user_version`.
const SCHEMA_VERSION: i64 = 3;

/// How long a statement waits for another connection's lock (a reader, the CLI) before
/// failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at_ms INTEGER NOT NULL,
    kind TEXT NOT NULL,
    agent TEXT, agent_version TEXT, agent_pid INTEGER, agent_exe TEXT,
    server TEXT, tool TEXT, path TEXT,
    duration_ms REAL,
    outcome TEXT, error_kind TEXT, detail TEXT,
    bytes_in INTEGER, bytes_out INTEGER,
    arguments TEXT, result TEXT,
    count INTEGER,
    profile TEXT,
    attempts INTEGER
);
CREATE INDEX IF NOT EXISTS entries_at ON entries(at_ms);
";

/// Why the database could not be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The OS names no data directory and no `activity.path` is set.
    #[error("no data directory for the activity log; set \"activity\": {{\"path\": …}}")]
    NoDataDir,
    /// The file or its directory could not be created.
    #[error("cannot create the activity log {path}: {reason}")]
    Create {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        reason: String,
    },
    /// SQLite refused.
    #[error("activity log {path}: {reason}")]
    Sqlite {
        /// The file.
        path: PathBuf,
        /// What SQLite said.
        reason: String,
    },
}

/// One row to insert (see the module table).
#[derive(Debug, Default)]
pub struct Row {
    pub at_ms: u64,
    pub kind: &'static str,
    pub agent: Option<String>,
    pub agent_version: Option<String>,
    pub agent_pid: Option<u32>,
    pub agent_exe: Option<String>,
    pub profile: Option<String>,
    pub server: Option<String>,
    pub tool: Option<String>,
    pub path: Option<&'static str>,
    pub duration_ms: Option<f64>,
    pub outcome: Option<String>,
    pub error_kind: Option<&'static str>,
    pub detail: Option<String>,
    pub bytes_in: Option<u64>,
    pub bytes_out: Option<u64>,
    pub arguments: Option<String>,
    pub result: Option<String>,
    pub count: Option<u64>,
    pub attempts: Option<u32>,
}

/// The writer's connection.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Creates (0600, in a 0700 directory) or opens the database at `path` for writing, in
    /// WAL mode, with the schema.
    ///
    /// # Errors
    /// [`StoreError`] naming the file.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        create_private(path)?;
        let conn = Connection::open(path).map_err(|e| sqlite_error(path, &e))?;
        let store = Store {
            conn,
            path: path.to_owned(),
        };
        store.setup().map_err(|e| sqlite_error(path, &e))?;
        Ok(store)
    }

    fn setup(&self) -> rusqlite::Result<()> {
        self.conn.busy_timeout(BUSY_TIMEOUT)?;
        // One cached statement per row count, 1 to ROWS_PER_STATEMENT, and room for others.
        self.conn
            .set_prepared_statement_cache_capacity(ROWS_PER_STATEMENT + 8);
        // Must precede the first table to take effect on a new file.
        self.conn
            .pragma_update(None, "auto_vacuum", "INCREMENTAL")?;
        self.conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0))?;
        self.conn.pragma_update(None, "synchronous", "NORMAL")?;
        self.conn.execute_batch(SCHEMA)?;
        // Schemas 1 (no `profile` column) and 2 (no `attempts`) are brought up to date in place.
        for (column, kind) in [("profile", "TEXT"), ("attempts", "INTEGER")] {
            if !has_column(&self.conn, column)? {
                self.conn
                    .execute_batch(&format!("ALTER TABLE entries ADD COLUMN {column} {kind}"))?;
            }
        }
        self.conn
            .pragma_update(None, "user_version", SCHEMA_VERSION)?;
        Ok(())
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Inserts `rows` in one transaction, in order: 16 to a statement (`ROWS_PER_STATEMENT`)
    /// while that many are left, then the rest in one statement, so a statement's own cost
    /// (and the `AUTOINCREMENT` counter's update) is paid once for up to 16 rows.
    ///
    /// # Errors
    /// SQLite's error (the database is locked beyond `BUSY_TIMEOUT`, the disk is full).
    pub fn insert(&mut self, rows: &[Row]) -> rusqlite::Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut chunks = rows.chunks_exact(ROWS_PER_STATEMENT);
            if rows.len() >= ROWS_PER_STATEMENT {
                let mut stmt = tx.prepare_cached(&insert_sql(ROWS_PER_STATEMENT))?;
                for chunk in &mut chunks {
                    for (i, row) in chunk.iter().enumerate() {
                        bind(&mut stmt, i * COLUMNS, row)?;
                    }
                    stmt.raw_execute()?;
                }
            }
            let rest = chunks.remainder();
            if !rest.is_empty() {
                let mut stmt = tx.prepare_cached(&insert_sql(rest.len()))?;
                for (i, row) in rest.iter().enumerate() {
                    bind(&mut stmt, i * COLUMNS, row)?;
                }
                stmt.raw_execute()?;
            }
        }
        tx.commit()
    }

    /// Deletes entries older than `max_age` (before `now_ms`), then the oldest entries until
    /// the database holds at most `max_bytes` of pages, and gives the space back to the file
    /// system. Returns how many entries went.
    ///
    /// # Errors
    /// SQLite's error.
    pub fn retain(
        &mut self,
        now_ms: u64,
        max_age: Duration,
        max_bytes: u64,
    ) -> rusqlite::Result<u64> {
        let cutoff = now_ms.saturating_sub(max_age.as_millis() as u64) as i64;
        let mut gone =
            self.conn
                .execute("DELETE FROM entries WHERE at_ms < ?1", [cutoff])? as u64;
        loop {
            let used = self.used_bytes()?;
            if used <= max_bytes {
                break;
            }
            let rows: i64 = self
                .conn
                .query_row("SELECT count(*) FROM entries", [], |r| r.get(0))?;
            if rows == 0 {
                break;
            }
            // A tenth at a time (at least 100), oldest first: the size of a row varies.
            let n = (rows / 10).max(100);
            gone += self.conn.execute(
                "DELETE FROM entries WHERE id IN (SELECT id FROM entries ORDER BY id LIMIT ?1)",
                [n],
            )? as u64;
        }
        if gone > 0 {
            // Frees one page per step: stepped to the end.
            let mut vacuum = self.conn.prepare("PRAGMA incremental_vacuum")?;
            let mut steps = vacuum.query([])?;
            while steps.next()?.is_some() {}
        }
        // Moves the WAL into the file and truncates it, so the WAL does not grow past the cap.
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(gone)
    }

    /// Bytes of pages in use (the file minus its free pages).
    pub fn used_bytes(&self) -> rusqlite::Result<u64> {
        let page_size: i64 = self.conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        let pages: i64 = self.conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
        let free: i64 = self
            .conn
            .query_row("PRAGMA freelist_count", [], |r| r.get(0))?;
        Ok(((pages - free).max(0) * page_size) as u64)
    }
}

/// Rows one `INSERT` statement writes while a batch has that many left.
const ROWS_PER_STATEMENT: usize = 16;

/// Values per row in an `INSERT` ([`bind`]'s order).
const COLUMNS: usize = 20;

/// `INSERT INTO entries (…) VALUES (?, …), …` for `rows` rows, in [`bind`]'s order.
fn insert_sql(rows: usize) -> String {
    let one = format!("({})", vec!["?"; COLUMNS].join(","));
    format!(
        "INSERT INTO entries (at_ms, kind, agent, agent_version, agent_pid, agent_exe, \
         server, tool, path, duration_ms, outcome, error_kind, detail, \
         bytes_in, bytes_out, arguments, result, count, profile, attempts) VALUES {}",
        vec![one; rows].join(",")
    )
}

/// Binds `row`'s [`COLUMNS`] values to `stmt`'s parameters after the first `before`.
fn bind(stmt: &mut rusqlite::CachedStatement<'_>, before: usize, r: &Row) -> rusqlite::Result<()> {
    let values: [&dyn rusqlite::ToSql; COLUMNS] = [
        &(r.at_ms as i64),
        &r.kind,
        &r.agent,
        &r.agent_version,
        &r.agent_pid,
        &r.agent_exe,
        &r.server,
        &r.tool,
        &r.path,
        &r.duration_ms,
        &r.outcome,
        &r.error_kind,
        &r.detail,
        &r.bytes_in.map(|b| b as i64),
        &r.bytes_out.map(|b| b as i64),
        &r.arguments,
        &r.result,
        &r.count.map(|c| c as i64),
        &r.profile,
        &r.attempts,
    ];
    for (i, value) in values.into_iter().enumerate() {
        stmt.raw_bind_parameter(before + i + 1, value)?;
    }
    Ok(())
}

/// Opens the database at `path` read-only (the `activity` command). Works whether or not a
/// companion is writing it.
///
/// # Errors
/// [`StoreError::Sqlite`] when it does not exist or is not a database.
pub fn open_read_only(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| sqlite_error(path, &e))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| sqlite_error(path, &e))?;
    Ok(conn)
}

/// Whether the `entries` table has `column` (a database written by an older companion may
/// lack one until a newer companion opens it for writing).
///
/// # Errors
/// SQLite's error.
pub fn has_column(conn: &Connection, column: &str) -> rusqlite::Result<bool> {
    let mut stmt = conn.prepare("SELECT 1 FROM pragma_table_info('entries') WHERE name = ?1")?;
    stmt.exists([column])
}

fn sqlite_error(path: &Path, e: &rusqlite::Error) -> StoreError {
    StoreError::Sqlite {
        path: path.to_owned(),
        reason: e.to_string(),
    }
}

/// Creates the directory of `path` (0700 when new) and the file (0600) if missing; an
/// existing file's mode is set to 0600.
fn create_private(path: &Path) -> Result<(), StoreError> {
    let err = |e: std::io::Error| StoreError::Create {
        path: path.to_owned(),
        reason: e.to_string(),
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir).map_err(err)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(path).map_err(err)?;
    // A file that is not a database (an `activity.path` naming someone's document) is left
    // as it was, its mode too.
    if file.metadata().map_err(err)?.len() > 0 && !is_sqlite(path) {
        return Err(StoreError::Create {
            path: path.to_owned(),
            reason: "the file is not an SQLite database; it was left as it is".to_owned(),
        });
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(err)?;
    }
    drop(file);
    Ok(())
}

/// Whether `path` starts with SQLite's file header ("SQLite format 3" and a NUL).
fn is_sqlite(path: &Path) -> bool {
    use std::io::Read;
    let mut header = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut header))
        .is_ok_and(|()| &header == b"SQLite format 3\0")
}

#[cfg(test)]
mod tests {
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
}
