//! Reading the log back (`mcp-companion activity`): the entries that match a [`Filter`],
//! oldest first, as one line of text each or as JSON objects (one per line: JSONL).

use rusqlite::Connection;
use rusqlite::types::Value as Sql;
use serde::Serialize;

use super::time::format_ms;

/// Which entries to read. Every set field must match.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// The agent's `clientInfo.name`, exactly.
    pub agent: Option<String>,
    /// The server, exactly.
    pub server: Option<String>,
    /// The wrapped tool name, exactly.
    pub tool: Option<String>,
    /// The outcome (`ok`, `isError`, `error`, `timeout`, `cancelled`, `withheld`; for server
    /// entries the state), exactly.
    pub outcome: Option<String>,
    /// The profile of the agent's session, exactly.
    pub profile: Option<String>,
    /// Entries at or after this Unix ms.
    pub since_ms: Option<u64>,
    /// At most the newest this many (of those after `after_id`).
    pub limit: Option<u64>,
}

/// One entry as read back (fields as in the store's table; absent ones are left out of the
/// JSON).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    pub id: i64,
    pub at_ms: i64,
    /// `at_ms` in UTC, for people.
    pub at: String,
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_pid: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_exe: Option<String>,
    /// The profile of the agent's session (absent: the default view).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_in: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_out: Option<i64>,
    /// The arguments' shape or payload, as JSON when it is JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<serde_json::Value>,
    /// The result's shape or payload, as JSON when it is JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<i64>,
    /// Calls: how many times the companion sent it to the server (2: retried on a new
    /// session); absent when it never reached the server, and in entries written before the
    /// log had this column.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempts: Option<i64>,
}

/// The entries matching `filter` with an id above `after_id`, oldest first (with a limit:
/// the newest `limit` of them).
///
/// # Errors
/// SQLite's error.
pub fn read(conn: &Connection, filter: &Filter, after_id: i64) -> rusqlite::Result<Vec<Record>> {
    // A database an older companion wrote lacks the newer columns until a newer one opens it.
    let newer = |column: &'static str| -> rusqlite::Result<&'static str> {
        Ok(if super::store::has_column(conn, column)? {
            column
        } else {
            "NULL"
        })
    };
    let profile = newer("profile")?;
    let attempts = newer("attempts")?;
    let mut sql = format!(
        "SELECT id, at_ms, kind, agent, agent_version, agent_pid, agent_exe, server, tool, path,
                duration_ms, outcome, error_kind, detail, bytes_in, bytes_out, arguments, result,
                count, {profile}, {attempts}
         FROM entries WHERE id > ?"
    );
    let mut args: Vec<Sql> = vec![Sql::Integer(after_id)];
    for (column, value) in [
        ("agent", &filter.agent),
        ("server", &filter.server),
        ("tool", &filter.tool),
        ("outcome", &filter.outcome),
        ("profile", &filter.profile),
    ] {
        if let Some(v) = value {
            if column == "profile" && profile == "NULL" {
                sql.push_str(" AND 0");
                continue;
            }
            sql.push_str(&format!(" AND {column} = ?"));
            args.push(Sql::Text(v.clone()));
        }
    }
    if let Some(since) = filter.since_ms {
        sql.push_str(" AND at_ms >= ?");
        args.push(Sql::Integer(since as i64));
    }
    sql.push_str(" ORDER BY id DESC");
    if let Some(limit) = filter.limit {
        sql.push_str(" LIMIT ?");
        args.push(Sql::Integer(limit.min(i64::MAX as u64) as i64));
    }
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(args), |r| {
        let at_ms: i64 = r.get(1)?;
        Ok(Record {
            id: r.get(0)?,
            at_ms,
            at: format_ms(at_ms.max(0) as u64),
            kind: r.get(2)?,
            agent: r.get(3)?,
            agent_version: r.get(4)?,
            agent_pid: r.get(5)?,
            agent_exe: r.get(6)?,
            server: r.get(7)?,
            tool: r.get(8)?,
            path: r.get(9)?,
            duration_ms: r.get(10)?,
            outcome: r.get(11)?,
            error_kind: r.get(12)?,
            detail: r.get(13)?,
            bytes_in: r.get(14)?,
            bytes_out: r.get(15)?,
            arguments: r.get::<_, Option<String>>(16)?.map(json_or_text),
            result: r.get::<_, Option<String>>(17)?.map(json_or_text),
            count: r.get(18)?,
            profile: r.get(19)?,
            attempts: r.get(20)?,
        })
    })?;
    let mut out = rows.collect::<rusqlite::Result<Vec<_>>>()?;
    out.reverse();
    Ok(out)
}

fn json_or_text(text: String) -> serde_json::Value {
    serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text))
}

impl Record {
    /// One line for people: time, kind, who, where, outcome, numbers.
    pub fn line(&self) -> String {
        let mut out = format!("{}  {:<7}", self.at, self.kind);
        if let Some(agent) = &self.agent {
            out.push_str(&format!(
                "  {agent}{}",
                self.agent_version
                    .as_ref()
                    .map(|v| format!(" {v}"))
                    .unwrap_or_default()
            ));
            if let Some(pid) = self.agent_pid {
                out.push_str(&format!(" (pid {pid})"));
            }
        }
        if let Some(profile) = &self.profile {
            out.push_str(&format!("  profile {profile}"));
        }
        match (&self.server, &self.tool) {
            (Some(s), Some(t)) => out.push_str(&format!("  {s}/{t}")),
            (Some(s), None) => out.push_str(&format!("  {s}")),
            (None, Some(t)) => out.push_str(&format!("  {t}")),
            (None, None) => {}
        }
        if let Some(outcome) = &self.outcome {
            out.push_str(&format!("  {outcome}"));
            if let Some(kind) = &self.error_kind {
                out.push_str(&format!(" ({kind})"));
            }
        }
        if let Some(ms) = self.duration_ms {
            out.push_str(&format!("  {ms:.1} ms"));
        }
        if self.kind == "call" {
            out.push_str(&format!(
                "  in {} B, out {} B",
                self.bytes_in.unwrap_or(0),
                self.bytes_out.unwrap_or(0)
            ));
        }
        match (self.kind.as_str(), self.count) {
            ("dropped", Some(n)) => out.push_str(&format!("  {n} entries dropped")),
            ("list", Some(n)) => out.push_str(&format!("  {n} items")),
            _ => {}
        }
        if let Some(n) = self.attempts.filter(|n| *n > 1) {
            out.push_str(&format!("  {n} attempts"));
        }
        if let Some(path) = &self.path {
            out.push_str(&format!("  [{path}]"));
        }
        if let Some(detail) = &self.detail {
            out.push_str(&format!("  {detail}"));
        }
        out
    }
}
