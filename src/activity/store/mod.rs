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

mod file;
mod insert;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

use file::create_private;
pub use file::open_read_only;
use insert::ROWS_PER_STATEMENT;

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
