//! `mcp-companion agents [--json]`: the agent sessions connected to a running companion — who
//! (`clientInfo`), which process, which profile and how it got it, calls so far; with
//! `--set ID`, moves one session to another profile (`--profile NAME`, or everything without
//! it) for as long as it stays connected.

use std::path::Path;
use std::process::ExitCode;

use mcp_companion::control::{self, ControlRequest, ControlResponse};
use mcp_companion::hub::{AgentStatus, ProfileSource};

use super::out::{self, outln};

/// Runs `agents`: lists the sessions, or with `set` changes one's profile.
pub async fn agents(
    socket: Option<&Path>,
    json: bool,
    set: Option<u64>,
    profile: Option<String>,
) -> anyhow::Result<ExitCode> {
    let paths = mcp_companion::ipc::record::locate(socket).await;
    if let Some(id) = set {
        let req = ControlRequest::AgentProfile {
            id,
            profile: profile.clone(),
        };
        control::request(&paths.control, &req).await?;
        let to = profile.map_or_else(|| "everything".to_owned(), |p| format!("profile \"{p}\""));
        outln!("Agent {id} now sees {to}; it was told its tool list changed.");
        return Ok(ExitCode::SUCCESS);
    }
    let ControlResponse::Agents(report) =
        control::request(&paths.control, &ControlRequest::Agents).await?
    else {
        anyhow::bail!("unexpected answer to agents");
    };
    if json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    if report.agents.is_empty() {
        outln!("No agent is connected.");
        return Ok(ExitCode::SUCCESS);
    }
    outln!("ID  CLIENT  PID  EXECUTABLE  PROFILE  CALLS  SINCE");
    for a in &report.agents {
        outln!("{}", row(a));
    }
    Ok(ExitCode::SUCCESS)
}

/// One session as a line; the client's name and version come from the agent and are shown,
/// not obeyed, by the terminal.
fn row(a: &AgentStatus) -> String {
    let client = match (&a.client, &a.client_version) {
        (Some(n), Some(v)) => format!("{n} {v}"),
        (Some(n), None) => n.clone(),
        _ => "(not initialized)".to_owned(),
    };
    let (pid, exe) = a.process.as_ref().map_or_else(
        || ("?".to_owned(), "?".to_owned()),
        |p| {
            let exe = p
                .exe
                .as_ref()
                .map_or_else(|| "?".to_owned(), |e| e.display().to_string());
            (p.pid.to_string(), exe)
        },
    );
    let via = a
        .bridge
        .as_ref()
        .map_or_else(String::new, |b| format!(" (via bridge {})", b.pid));
    let profile = match (&a.profile, a.profile_source) {
        (None, _) => "everything".to_owned(),
        (Some(p), ProfileSource::Socket) => format!("{p} (socket)"),
        (Some(p), ProfileSource::Client) => format!("{p} (clientInfo rule)"),
        (Some(p), ProfileSource::Person) => format!("{p} (set by you)"),
        (Some(p), ProfileSource::Default) => p.clone(),
    };
    format!(
        "{}  {}  {pid}{via}  {}  {}  {}  {}",
        a.id,
        out::inert(&client),
        out::inert(&exe),
        profile,
        a.calls,
        mcp_companion::activity::format_ms(a.connected_ms)
    )
}
