//! `bridge`: stdio ⇄ the companion's socket, starting a companion first when none runs
//! ([`mcp_companion::ipc::autostart`]); when none can be reached, one line on stderr and the
//! agent's `initialize` answered with the same reason ([`answer_first_request`]), exit 1.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use mcp_companion::config::{self, ConfigError};
use mcp_companion::ipc::autostart::{self, StartCommand};
use mcp_companion::ipc::bridge::{self, BridgeError, FIRST_REQUEST_WAIT, answer_first_request};
use mcp_companion::ipc::paths::{self, EndpointPaths};
use mcp_companion::ipc::record;

/// How long the bridge waits for a companion it started (or another bridge started) to listen.
const START_DEADLINE: Duration = Duration::from_secs(30);

/// `bridge`; `profile` with `--profile NAME` (that profile's socket beside each main one);
/// `autostart` is false with `--no-autostart`.
pub async fn run(
    config_path: Option<&Path>,
    socket: Option<&Path>,
    profile: Option<&str>,
    autostart: bool,
) -> anyhow::Result<ExitCode> {
    let records = record::candidates(socket);
    let main: Vec<PathBuf> = records.iter().map(|p| p.mcp.clone()).collect();
    let served: Vec<PathBuf> = match profile {
        Some(name) => main
            .iter()
            .map(|p| paths::profile_socket(p, name))
            .collect(),
        None => main.clone(),
    };
    let not_running = match bridge::run_stdio(&served).await {
        Ok(()) => return Ok(ExitCode::SUCCESS),
        Err(BridgeError::OfferUnanswered(why)) => return refuse(&why).await,
        Err(e @ BridgeError::NotRunning { .. }) => {
            if let Some(name) = profile
                && let Some(why) = profile_not_served(&records, name).await
            {
                return refuse(&why).await;
            }
            not_running_text(&e, socket)
        }
        Err(e) => return Err(e.into()),
    };
    let start = match start_command(config_path, socket, profile, autostart) {
        Ok(start) => start,
        Err(why) => return refuse(&format!("{not_running}; {why}")).await,
    };
    if let Err(e) = autostart::ensure_running(&main, &start).await {
        return refuse(&e.to_string()).await;
    }
    let deadline = tokio::time::Instant::now() + START_DEADLINE;
    loop {
        match bridge::run_stdio(&served).await {
            Ok(()) => return Ok(ExitCode::SUCCESS),
            Err(BridgeError::OfferUnanswered(why)) => return refuse(&why).await,
            Err(e @ BridgeError::NotRunning { .. }) => {
                let Some(name) = profile else {
                    return refuse(&not_running_text(&e, socket)).await;
                };
                // A profile's socket is opened just after the main one: wait while the
                // companion says the profile is served.
                match profile_not_served(&records, name).await {
                    Some(why) => return refuse(&why).await,
                    None if tokio::time::Instant::now() >= deadline => {
                        return refuse(&not_running_text(&e, socket)).await;
                    }
                    None => tokio::time::sleep(Duration::from_millis(50)).await,
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Why profile `name` has no socket, as the running companion's status says; `None` when no
/// companion answers, or when it lists the profile as served (its socket is about to open).
async fn profile_not_served(records: &[EndpointPaths], name: &str) -> Option<String> {
    for p in records {
        if let Ok(report) = mcp_companion::control::status(&p.control).await {
            let served = report
                .profiles
                .iter()
                .any(|s| s.name == name && s.is_served());
            return (!served).then(|| super::profile::not_served(name, &report.profiles));
        }
    }
    None
}

/// The "nothing listens" error, saying the record was looked at too when it added no place.
fn not_running_text(e: &BridgeError, socket: Option<&Path>) -> String {
    if socket.is_none() && record::read().is_none() {
        let at = record::record_path().map_or_else(
            || "no home directory".to_owned(),
            |p| p.display().to_string(),
        );
        format!("{e}; no running companion has recorded its socket in {at} either")
    } else {
        e.to_string()
    }
}

/// What to start, or why nothing is started: autostart is off (flag or config), the config
/// does not load (a missing default file is fine: `serve` writes it), or it has no valid
/// `profile`.
fn start_command(
    config_path: Option<&Path>,
    socket: Option<&Path>,
    profile: Option<&str>,
    autostart: bool,
) -> Result<StartCommand, String> {
    if !autostart {
        return Err("not started: --no-autostart (or MCP_COMPANION_NO_AUTOSTART) is set".into());
    }
    let path = config::resolve_config_path(config_path)
        .map_err(|e| format!("cannot start a companion: {e}"))?;
    match config::load(&path) {
        Ok(cfg) if !cfg.bridge_autostart => {
            return Err(format!(
                "not started: \"bridgeAutostart\" is false in {}",
                path.display()
            ));
        }
        // A companion started for a profile it would not serve helps nobody.
        Ok(cfg) if let Some(name) = profile => {
            super::profile::check(&cfg, &path, name)
                .map_err(|why| format!("not started: {why}"))?;
        }
        Ok(_) => {}
        // `serve` writes the default config on first run, and refuses any other missing one.
        Err(ConfigError::Io {
            kind: std::io::ErrorKind::NotFound,
            ..
        }) if config::is_default_config_path(&path) => {}
        Err(e) => {
            return Err(format!(
                "cannot start a companion: its config does not load: {e}"
            ));
        }
    }
    let program = std::env::current_exe()
        .map_err(|e| format!("cannot start a companion: cannot tell where this binary is: {e}"))?;
    let mut args: Vec<OsString> = vec!["serve".into(), "--config".into(), path.into()];
    if let Some(socket) = socket {
        // The companion runs from the home directory, not the agent's project.
        let socket = std::path::absolute(socket).unwrap_or_else(|_| socket.to_owned());
        args.extend(["--socket".into(), socket.into_os_string()]);
    }
    Ok(StartCommand {
        program,
        args,
        deadline: START_DEADLINE,
    })
}

/// One line on stderr, the agent's first request answered with `why`, exit 1.
async fn refuse(why: &str) -> anyhow::Result<ExitCode> {
    eprintln!("error: {why}");
    let answered = answer_first_request(
        tokio::io::stdin(),
        tokio::io::stdout(),
        why,
        FIRST_REQUEST_WAIT,
    )
    .await;
    if let Err(e) = answered {
        tracing::debug!(error = %e, "could not answer the agent");
    }
    Ok(ExitCode::FAILURE)
}
