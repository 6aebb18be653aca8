//! `mcp-companion trust [SERVER] [--all] [--json]`: what a running companion withholds from
//! agents until the person approves it, shown as a readable diff; with a server name or
//! `--all`, approved (agents then hear `tools/list_changed`).

use std::path::Path;
use std::process::ExitCode;

use mcp_companion::control::{self, ControlRequest, ControlResponse};

use super::out::{self, outln};

/// Runs `trust`. Without `server` and `all`, only shows what waits.
pub async fn trust(
    socket: Option<&Path>,
    server: Option<String>,
    all: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let paths = mcp_companion::ipc::record::locate(socket).await;
    let approve = all || server.is_some();
    let req = ControlRequest::Trust { server, approve };
    let ControlResponse::Trust(report) = control::request(&paths.control, &req).await? else {
        anyhow::bail!("unexpected answer to trust");
    };
    if json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    if report.servers.is_empty() {
        outln!("Nothing waits for approval.");
        return Ok(ExitCode::SUCCESS);
    }
    for s in &report.servers {
        // Names and descriptions come from the servers and are what the person judges: every
        // control and reordering character is shown escaped (no colour or conceal sequence).
        outln!("server \"{}\":", out::inert(&s.server));
        for tool in &s.tools {
            for line in tool.describe() {
                outln!("  {}", out::inert(&line));
            }
        }
    }
    if report.approved {
        let n: usize = report.servers.iter().map(|s| s.tools.len()).sum();
        outln!("Approved {n} tool change(s); agents were told the tool list changed.");
    } else {
        outln!("Approve with `mcp-companion trust SERVER`, or `mcp-companion trust --all`.");
    }
    Ok(ExitCode::SUCCESS)
}
