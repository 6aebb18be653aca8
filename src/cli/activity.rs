//! `activity`: the activity log, read straight from its database (read-only), so it works
//! whether or not a companion runs and needs no control verb; `--follow` polls for new rows.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use mcp_companion::activity::query::{self, Filter};
use mcp_companion::activity::{self as log, store};
use mcp_companion::config;

use super::out::{inert, outln};

/// Every outcome an entry can have: a call's (`ok`, `isError`, the companion's own answers)
/// and a server entry's state.
const OUTCOMES: &[&str] = &[
    "ok",
    "isError",
    "error",
    "timeout",
    "cancelled",
    "withheld",
    "denied",
    "declined",
    "stopped",
    "starting",
    "running",
    "backoff",
    "failed",
    "needs sign-in",
];

/// How often `--follow` looks for new entries.
const FOLLOW_EVERY: Duration = Duration::from_millis(300);

/// What `activity` was asked for.
#[derive(Debug)]
pub struct ActivityArgs {
    pub agent: Option<String>,
    pub server: Option<String>,
    pub tool: Option<String>,
    pub outcome: Option<String>,
    pub profile: Option<String>,
    pub since: Option<String>,
    /// 0: every matching entry.
    pub limit: u64,
    pub follow: bool,
    pub json: bool,
}

/// `activity`: prints the matching entries, oldest first (the newest `limit`), one per line,
/// or as JSON objects one per line (`--json`: JSONL); with `follow`, keeps printing new ones.
pub async fn activity(config_path: Option<&Path>, args: ActivityArgs) -> anyhow::Result<ExitCode> {
    let settings = config::resolve_config_path(config_path)
        .ok()
        .and_then(|p| config::load(&p).ok())
        .map(|c| c.activity)
        .unwrap_or_default();
    let path = settings
        .database_path()
        .context("no data directory for the activity log; set \"activity\": {\"path\": …}")?;
    if !path.exists() {
        anyhow::bail!(
            "no activity log at {} (nothing recorded yet, or \"activity\": {{\"enabled\": false}})",
            path.display()
        );
    }
    let since_ms = match &args.since {
        Some(s) => Some(log::parse_since(s, log::now_ms()).with_context(|| {
            format!("--since \"{s}\": give a duration back from now (90s, 15m, 2h, 7d) or a UTC date (2026-12-04, 2026-12-04T17:05:00Z)")
        })?),
        None => None,
    };
    if let Some(outcome) = &args.outcome
        && !OUTCOMES.contains(&outcome.as_str())
    {
        anyhow::bail!(
            "--outcome \"{}\" is no outcome the log records: give one of {}",
            inert(outcome),
            OUTCOMES.join(", ")
        );
    }
    let mut filter = Filter {
        agent: args.agent,
        server: args.server,
        tool: args.tool,
        outcome: args.outcome,
        profile: args.profile,
        since_ms,
        limit: (args.limit > 0).then_some(args.limit),
    };
    let conn = store::open_read_only(&path)?;
    let mut last = 0;
    loop {
        let records = query::read(&conn, &filter, last)
            .with_context(|| format!("cannot read the activity log {}", path.display()))?;
        for r in &records {
            if args.json {
                outln!("{}", serde_json::to_string(r)?);
            } else {
                outln!("{}", text_line(r));
            }
            last = last.max(r.id);
        }
        if !args.follow {
            return Ok(ExitCode::SUCCESS);
        }
        filter.limit = None;
        tokio::time::sleep(FOLLOW_EVERY).await;
    }
}

/// An entry for people, always one line: agent names, tool names and details come from agents
/// and servers, so every control character in them (newline and colour included) is escaped.
fn text_line(r: &query::Record) -> String {
    inert(&r.line()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_cannot_add_lines_or_hide_text_in_the_activity_output() {
        let r = query::Record {
            id: 1,
            at_ms: 0,
            at: "2026-12-04 18:00:00.000".into(),
            kind: "call".into(),
            agent: Some("b\x1b[8mHIDDEN\n2026-12-04 18:00:00.000  call  fake".into()),
            agent_version: Some("2".into()),
            agent_pid: None,
            agent_exe: None,
            profile: None,
            server: Some("demo".into()),
            tool: Some("x\x1b[32mG\nfake".into()),
            path: None,
            duration_ms: None,
            outcome: Some("error".into()),
            error_kind: Some("rpc".into()),
            detail: Some("last stderr: \x1b[31mred\r\n".into()),
            bytes_in: None,
            bytes_out: None,
            arguments: None,
            result: None,
            count: None,
            attempts: None,
        };
        let line = text_line(&r);
        assert!(!line.contains('\n') && !line.contains('\x1b'), "{line}");
        assert!(line.contains("b\\x1b[8mHIDDEN\\x0a2026"), "{line}");
        assert!(line.contains("demo/x\\x1b[32mG\\x0afake"), "{line}");
        assert!(
            line.ends_with("last stderr: \\x1b[31mred\\x0d\\x0a"),
            "{line}"
        );
    }
}
