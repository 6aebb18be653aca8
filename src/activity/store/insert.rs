//! Inserting a batch of rows: one transaction, up to [`ROWS_PER_STATEMENT`] rows to an
//! `INSERT` statement, statements cached per row count.

use super::{Row, Store};

impl Store {
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
}

/// Rows one `INSERT` statement writes while a batch has that many left.
pub(super) const ROWS_PER_STATEMENT: usize = 16;

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
