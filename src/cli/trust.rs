//! `mcp-companion trust [SERVER] [--all] [--json]`: what a running companion withholds from
//! agents until the person approves it, shown as a readable diff; with a server name or
//! `--all`, approved (agents then hear `tools/list_changed`).

use std::path::Path;
use std::process::ExitCode;

use mcp_companion::control::{self, ControlRequest, ControlResponse, TrustServer};

use super::out::{self, outln};

/// The code of a listing: the first 12 hex digits of SHA-256 over its definitions'
/// fingerprints, sorted. `trust --shown CODE` approves only while it still matches.
fn code(servers: &[TrustServer]) -> String {
    let mut fingerprints = fingerprints(servers);
    fingerprints.sort();
    let digest = <sha2::Sha256 as sha2::Digest>::digest(fingerprints.join(",").as_bytes());
    digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

fn fingerprints(servers: &[TrustServer]) -> Vec<String> {
    servers
        .iter()
        .flat_map(|s| s.tools.iter().map(|w| w.listed.fingerprint.clone()))
        .collect()
}

/// Runs `trust`. Without `server` and `all`, only shows what waits. With `shown`, approves
/// only if what waits still has that listing code, and then only those definitions.
pub async fn trust(
    socket: Option<&Path>,
    server: Option<String>,
    all: bool,
    shown: Option<&str>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let paths = mcp_companion::ipc::record::locate(socket).await;
    let approve = all || server.is_some();
    let expect = match shown {
        Some(wanted) if approve => {
            let look = ControlRequest::Trust {
                server: server.clone(),
                approve: false,
                expect: None,
            };
            let ControlResponse::Trust(now) = control::request(&paths.control, &look).await? else {
                anyhow::bail!("unexpected answer to trust");
            };
            if now.servers.is_empty() {
                anyhow::bail!(
                    "nothing waits for approval any more (approved meanwhile, or the server \
                     changed back): there is nothing to approve"
                );
            }
            if code(&now.servers) != wanted {
                anyhow::bail!(
                    "what waits for approval changed since it was shown (its code is now {}): \
                     run `mcp-companion trust` again and read it",
                    code(&now.servers)
                );
            }
            Some(fingerprints(&now.servers))
        }
        Some(_) => anyhow::bail!("--shown goes with a server name or --all"),
        None => None,
    };
    let req = ControlRequest::Trust {
        server,
        approve,
        expect,
    };
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
        if !report.approved {
            outln!(
                "  approve exactly this: mcp-companion trust {} --shown {}",
                out::inert(&s.server),
                code(std::slice::from_ref(s))
            );
        }
    }
    if report.approved {
        let n: usize = report.servers.iter().map(|s| s.tools.len()).sum();
        outln!("Approved {n} tool change(s); agents were told the tool list changed.");
    } else {
        outln!(
            "Approve all of it with `mcp-companion trust --all --shown {}`. Without --shown, \
             whatever waits when you run it is approved.",
            code(&report.servers)
        );
    }
    Ok(ExitCode::SUCCESS)
}
