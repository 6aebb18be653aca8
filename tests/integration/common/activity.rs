//! Reading a test companion's activity log (`src/activity`) as the CLI does: read-only, while
//! the companion writes it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use mcp_companion::activity::query::{self, Filter, Record};
use mcp_companion::activity::store;

use super::{Companion, eventually};

/// Where a companion with a private HOME and no `activity.path` keeps its log (Linux).
pub fn default_db(c: &Companion) -> PathBuf {
    c.home.join(".local/share/mcp-companion/activity.db")
}

/// The entries of `db` matching `filter`, oldest first (none while it does not exist).
pub fn read(db: &Path, filter: &Filter) -> Vec<Record> {
    if !db.exists() {
        return Vec::new();
    }
    let Ok(conn) = store::open_read_only(db) else {
        return Vec::new();
    };
    query::read(&conn, filter, 0).unwrap_or_default()
}

/// The `call` entries of `db`, oldest first.
pub fn calls(db: &Path) -> Vec<Record> {
    read(db, &Filter::default())
        .into_iter()
        .filter(|r| r.kind == "call")
        .collect()
}

/// Waits until `db` holds `n` calls (at most 30 s) and returns them.
pub async fn wait_for_calls(db: &Path, n: usize) -> Vec<Record> {
    let found = eventually(Duration::from_secs(30), || calls(db).len() >= n).await;
    let all = calls(db);
    assert!(
        found,
        "{} calls recorded, {n} expected: {all:#?}",
        all.len()
    );
    all
}

/// The first recorded call of `tool` in `c`'s default log (waits for it, at most 30 s).
pub async fn recorded(c: &Companion, tool: &str) -> Record {
    let db = default_db(c);
    let of_tool = || {
        calls(&db)
            .into_iter()
            .find(|r| r.tool.as_deref() == Some(tool))
    };
    let found = eventually(Duration::from_secs(30), || of_tool().is_some()).await;
    assert!(found, "no call of {tool} recorded: {:#?}", calls(&db));
    of_tool().expect("found above")
}
