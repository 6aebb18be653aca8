//! `status`: every server's state, as a table (or the control API's JSON with `--json`).

use std::path::Path;
use std::process::ExitCode;

use mcp_companion::control;
use mcp_companion::supervisor::ServerStatus;

use super::out::{inert, outln, visible};

/// `status`: every server's state.
pub async fn status(socket: Option<&Path>, json: bool) -> anyhow::Result<ExitCode> {
    let paths = mcp_companion::ipc::record::locate(socket).await;
    let report = control::status(&paths.control).await?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "companion pid {} (v{}), socket {}",
        report.pid,
        report.version,
        report.socket.display()
    );
    let width = report
        .servers
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(6)
        .clamp(6, NAME_COLUMN);
    outln!(
        "{:width$}  {:14}  {:13}  {:>5}  {:>7}  {:10}  {:>8}  LAST ERROR",
        "SERVER",
        "TRANSPORT",
        "STATE",
        "TOOLS",
        "PID",
        "PROTOCOL",
        "RESTARTS"
    );
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    for s in &report.servers {
        outln!(
            "{:width$}  {:14}  {:13}  {:>5}  {:>7}  {:10}  {:>8}  {}",
            visible(&ellipsize(&s.name, NAME_COLUMN)),
            s.transport,
            state_cell(s, now_ms),
            s.tools,
            s.pid.map(|p| p.to_string()).unwrap_or_else(|| "-".into()),
            s.protocol.as_deref().map_or_else(|| "-".into(), visible),
            s.restarts,
            error_cell(s)
        );
    }
    for s in report.servers.iter().filter(|s| s.waiting_approval > 0) {
        outln!(
            "{}: {} tool change(s) wait for approval (mcp-companion trust {})",
            visible(&s.name),
            s.waiting_approval,
            visible(&s.name)
        );
    }
    for warning in &report.warnings {
        outln!("config warning: {}", visible(warning));
    }
    print_profiles(&report.profiles)?;
    match &report.activity {
        Some(a) if a.dropped > 0 => outln!(
            "activity log: {} ({} entries dropped: its queue was full)",
            a.path.display(),
            a.dropped
        ),
        Some(a) => outln!("activity log: {}", a.path.display()),
        None => outln!("activity log: off"),
    }
    if let Some(t) = &report.telemetry {
        match &t.error {
            Some(why) => outln!(
                "telemetry: off, export to {} could not start: {}",
                visible(&t.endpoint),
                visible(why)
            ),
            None => outln!("telemetry: exporting to {}", visible(&t.endpoint)),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The profiles' table (nothing when the config has none): name, tool count, naming, servers,
/// whether tool search is on, or why the profile serves nothing.
pub(super) fn print_profiles(profiles: &[mcp_companion::hub::ProfileStatus]) -> anyhow::Result<()> {
    if profiles.is_empty() {
        return Ok(());
    }
    let width = profiles
        .iter()
        .map(|p| p.name.chars().count())
        .max()
        .unwrap_or(7)
        .max(7);
    outln!(
        "{:width$}  {:>5}  {:7}  SERVERS",
        "PROFILE",
        "TOOLS",
        "NAMING"
    );
    for p in profiles {
        match &p.error {
            Some(why) => outln!(
                "{:width$}  {:>5}  {:7}  invalid: {}",
                visible(&p.name),
                "-",
                "-",
                visible(why)
            ),
            None => outln!(
                "{:width$}  {:>5}  {:7}  {}{}{}",
                visible(&p.name),
                p.tools,
                p.naming,
                visible(&p.servers.join(", ")),
                if p.tool_search { "  (tool search)" } else { "" },
                if p.unmatched.is_empty() {
                    String::new()
                } else {
                    format!("  (match nothing: {})", visible(&p.unmatched.join(", ")))
                }
            ),
        }
        if let Some(why) = &p.socket_error {
            outln!("{:width$}  not served: {}", "", visible(why));
        }
    }
    Ok(())
}

/// The STATE column: the state's
/// [`ServerState::label`](mcp_companion::supervisor::ServerState::label),
/// and for a server waiting to restart, in how many whole seconds (rounded up) it will:
/// `retrying 3s`.
fn state_cell(s: &ServerStatus, now_ms: u64) -> String {
    match s.retry_in_secs(now_ms) {
        Some(secs) => format!("{} {secs}s", s.state.label()),
        None => s.state.label().to_owned(),
    }
}

/// The LAST ERROR column: one line, the error (often the server's own stderr) shown inert.
fn error_cell(s: &ServerStatus) -> String {
    match &s.last_error {
        Some(e) if s.error_is_current() => inert(e).into_owned(),
        Some(e) => format!("(earlier) {}", inert(e)),
        None => String::new(),
    }
}

/// Widest server name shown in full by `status`; longer names end in `…` (`--json` has them whole).
const NAME_COLUMN: usize = 32;

fn ellipsize(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_companion::supervisor::ServerState;

    fn server(state: ServerState, retry_at_ms: Option<u64>) -> ServerStatus {
        ServerStatus {
            retry_at_ms,
            ..ServerStatus::new("s", "stdio", state)
        }
    }

    #[test]
    fn the_last_error_column_shows_a_servers_stderr_inert_on_one_line() {
        let mut s = server(ServerState::Failed, None);
        s.last_error = Some("last stderr: \x1b[8mHID\nfake".into());
        assert_eq!(error_cell(&s), "last stderr: \\x1b[8mHID\\x0afake");
    }

    #[test]
    fn the_state_column_reads_as_the_window_does_with_the_wait_left() {
        assert_eq!(
            state_cell(&server(ServerState::Backoff, Some(10_200)), 8_000),
            "retrying 3s"
        );
        // Due now (or overdue): the restart is about to happen.
        assert_eq!(
            state_cell(&server(ServerState::Backoff, Some(8_000)), 9_000),
            "retrying 0s"
        );
        assert_eq!(
            state_cell(&server(ServerState::Backoff, None), 0),
            "retrying"
        );
        assert_eq!(
            state_cell(&server(ServerState::Running, Some(10_000)), 0),
            "running"
        );
        assert_eq!(
            state_cell(&server(ServerState::NeedsSignIn, None), 0),
            "needs sign-in"
        );
    }
}
