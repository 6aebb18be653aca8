//! `doctor`: why a server will or will not start, without starting anything.
//!
//! For each stdio server: the resolved program, the exact launch line for the target OS, the PATH
//! and where it came from, and whether the program exists. For remote servers: the redacted URL,
//! the transport and the SSRF verdict (whitelist valid, every address the host resolves to
//! allowed; nothing is connected to). Exit 1 when any enabled
//! server cannot start on this machine.
//!
//! The environment a child gets (pass-through variables, PATH, the GUI login-shell PATH) is the
//! running companion's, asked over the control API, when one runs on the same config file; only
//! otherwise this shell's. That companion's state of each server is shown too (`state:`), and
//! a server it reports failed, retrying or waiting for a sign-in counts as one that cannot start.
//! The caller's environment often differs from the companion's (a terminal versus the desktop
//! session), and then a local plan would say "ok" for a server the companion cannot start.
//! Values from the entry's own `env` are shown as hidden: they are often keys.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use mcp_companion::config::{self, ServerConfig, TransportConfig};
use mcp_companion::control::{
    self, ChildEnvironment, ControlRequest, ControlResponse, StatusReport,
};
use mcp_companion::ipc::record;
use mcp_companion::launch::{self, LaunchError, TargetOs};
use mcp_companion::net;
use mcp_companion::supervisor::ServerState;

/// How long `doctor` waits for a running companion to describe its environment.
const ASK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

use super::out::outln;

/// [`outln!`] with control characters made visible: names, commands and errors come from the
/// config file and the servers, and are shown, not obeyed, by the terminal.
macro_rules! say {
    ($($arg:tt)*) => {
        outln!("{}", super::out::visible(&format!($($arg)*)))
    };
}

/// Runs `doctor` for every server, or only `only`, planning for `os` (default: this OS).
pub async fn run(
    config_path: Option<&Path>,
    socket: Option<&Path>,
    only: Option<&str>,
    os: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let os = match os {
        Some(name) => name.parse::<TargetOs>()?,
        None => TargetOs::host(),
    };
    let preview = os != TargetOs::host();
    let path = config::resolve_config_path(config_path)?;
    let cfg =
        config::load(&path).with_context(|| format!("cannot load config {}", path.display()))?;
    say!("config {}", path.display());
    if preview {
        say!(
            "preview for {}: commands are not looked up on this machine",
            os.name()
        );
    }
    let running = running_companion(socket).await;
    let (child_env, seen_by_companion) = match running {
        Some((env, report)) if serves(&report, &path) => {
            say!("environment: the running companion's (pid {})", env.pid);
            (env, Some(report))
        }
        Some((env, report)) => {
            let theirs = report
                .config
                .as_deref()
                .map_or_else(|| "no config file".to_owned(), |p| p.display().to_string());
            say!(
                "environment: this shell's (the running companion, pid {}, serves {theirs})",
                env.pid
            );
            (ChildEnvironment::of_this_process().await, None)
        }
        None => {
            say!("environment: this shell's (no companion is running)");
            (ChildEnvironment::of_this_process().await, None)
        }
    };
    let mut failed = 0usize;
    let mut shown = 0usize;
    for spec in &cfg.servers {
        if only.is_some_and(|n| n != spec.name) {
            continue;
        }
        shown += 1;
        let entry = match &spec.entry {
            Ok(entry) => entry,
            Err(e) => {
                say!("{}: cannot start: {e}", spec.name);
                failed += 1;
                continue;
            }
        };
        // Secrets are checked for presence but never printed: `<secret:NAME>` stands in.
        let keychain = mcp_companion::secret::os_keychain();
        let masked = mcp_companion::secret::Masked::new(&keychain);
        // `${VAR}` of a secret-looking name (`${API_TOKEN}`) is checked, not printed.
        let lookup = |name: &str| {
            config::default_lookup(name).map(|value| {
                if net::is_secret_name(name) {
                    format!("<${{{name}}}>")
                } else {
                    value
                }
            })
        };
        // The plan can be fine and the server still fail when run (it exits at start, its
        // sign-in expired): the running companion knows.
        let seen = seen_by_companion
            .as_ref()
            .and_then(|r| r.servers.iter().find(|s| s.name == spec.name));
        let failing = seen.is_some_and(|s| {
            matches!(
                s.state,
                ServerState::Failed | ServerState::Backoff | ServerState::NeedsSignIn
            )
        });
        let fails_as = seen.filter(|_| failing).map(|s| s.state.label());
        let ok = match entry.expand(&lookup, &masked) {
            Ok(expanded) => {
                let plan = Plan {
                    os,
                    preview,
                    whitelist: &cfg.ssrf_whitelist,
                    child_env: &child_env,
                };
                report(&expanded, &plan, fails_as).await?
            }
            Err(e) => {
                say!("{}: cannot start: {e}", spec.name);
                false
            }
        };
        if let Some(seen) = seen {
            let why = seen
                .last_error
                .as_deref()
                .filter(|_| seen.error_is_current())
                .map(|e| format!(": {e}"))
                .unwrap_or_default();
            say!(
                "  state:   {}{}",
                seen.state.label(),
                super::out::inert(&why)
            );
        }
        if entry.disabled {
            say!("  disabled: yes (not started by serve)");
        } else if !ok || failing {
            failed += 1;
        }
    }
    if let Some(name) = only
        && shown == 0
    {
        anyhow::bail!(
            "{} in {}",
            mcp_companion::config::UnknownServer::new(name),
            path.display()
        );
    }
    Ok(if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// What a diagnosis is made for.
struct Plan<'a> {
    os: TargetOs,
    preview: bool,
    whitelist: &'a config::SsrfWhitelist,
    child_env: &'a ChildEnvironment,
}

/// Prints one server's diagnosis; true when it can start (or, in a preview, when nothing but
/// the lookup is in doubt). `fails_as`: the state the running companion reports for a server
/// that launches but then fails (`retrying`), said in the headline instead of "ok".
///
/// # Errors
/// Only when stdout cannot be written (see [`super::out`]).
async fn report(
    server: &ServerConfig,
    plan_for: &Plan<'_>,
    fails_as: Option<&str>,
) -> anyhow::Result<bool> {
    let Plan {
        os,
        preview,
        whitelist,
        child_env,
    } = *plan_for;
    let ok_line = |transport: &str| match fails_as {
        None => format!("{} ({transport}): ok", server.name),
        Some(state) => format!(
            "{} ({transport}): launches, but the running companion reports it {state} (see state)",
            server.name
        ),
    };
    let name = &server.name;
    match &server.transport {
        TransportConfig::Stdio(stdio) => {
            let launch = plan(stdio, os, child_env);
            let spec = &launch.spec;
            let blocking = match &launch.error {
                Some(LaunchError::NotFound { .. } | LaunchError::Missing { .. }) if preview => None,
                other => other.as_ref(),
            };
            match blocking {
                None => say!("{}", ok_line("stdio")),
                Some(e) => say!("{name} (stdio): cannot start: {e}"),
            }
            let program = match &spec.resolved {
                Some(p) => p.display().to_string(),
                None if preview => format!("{} (not looked up)", stdio.command),
                None => format!("{} (not found)", stdio.command),
            };
            say!("  program: {program}");
            say!(
                "  exists:  {}",
                if spec.resolved.is_some() { "yes" } else { "no" }
            );
            say!("  launch:  {}", spec.display_line());
            say!("  PATH:    {}", spec.path(os));
            say!("  from:    {}", spec.path_source);
            if let Some(cwd) = &spec.cwd {
                say!("  cwd:     {}", cwd.display());
            }
            for (i, (k, v)) in spec.env.iter().enumerate() {
                let label = if i == 0 { "  env:     " } else { "           " };
                say!("{label}{k}={}", shown_value(k, v, &stdio.env));
            }
            Ok(blocking.is_none())
        }
        TransportConfig::Sse(http) | TransportConfig::StreamableHttp(http) => {
            let transport = server.transport_name();
            let verdict = ssrf_verdict(&http.url, whitelist).await;
            match &verdict {
                Ok(()) => say!("{}", ok_line(transport)),
                Err(why) => say!("{name} ({transport}): cannot start: {why}"),
            }
            say!("  url:     {}", net::redact(&http.url));
            say!(
                "  SSRF:    {}",
                match &verdict {
                    Ok(()) => "allowed".to_owned(),
                    Err(_) => "refused (see above)".to_owned(),
                }
            );
            Ok(verdict.is_ok())
        }
    }
}

/// The environment and status of the companion listening where a bridge would look, if one
/// answers.
async fn running_companion(socket: Option<&Path>) -> Option<(ChildEnvironment, StatusReport)> {
    for paths in record::candidates(socket) {
        let ask = async {
            let env = control::request(&paths.control, &ControlRequest::Environment).await;
            let status = control::request(&paths.control, &ControlRequest::Status).await;
            (env, status)
        };
        if let Ok((Ok(ControlResponse::Environment(env)), Ok(ControlResponse::Status(report)))) =
            tokio::time::timeout(ASK_TIMEOUT, ask).await
        {
            return Some((env, report));
        }
    }
    None
}

/// Whether the companion that sent `report` serves the config file at `path`.
fn serves(report: &StatusReport, path: &Path) -> bool {
    let same = |theirs: &Path| {
        theirs == path
            || matches!(
                (theirs.canonicalize(), path.canonicalize()),
                (Ok(a), Ok(b)) if a == b
            )
    };
    report.config.as_deref().is_some_and(same)
}

/// Plans `stdio` for `os` with the companion's environment `child_env`. For another OS than
/// this one nothing is looked up ([`launch::PreviewLookup`]).
fn plan(stdio: &config::StdioConfig, os: TargetOs, child_env: &ChildEnvironment) -> launch::Launch {
    let base_dir = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("/"));
    let vars = |k: &str| launch::env::get(&child_env.vars, os, k).map(str::to_owned);
    let host = os == TargetOs::host();
    launch::plan(
        stdio,
        &launch::Host {
            os,
            vars: &vars,
            gui_path: child_env.gui.as_ref().filter(|_| os != TargetOs::Windows),
            lookup: if host {
                &launch::SystemLookup
            } else {
                &launch::PreviewLookup
            },
            base_dir: &base_dir,
        },
    )
}

/// A child variable as `doctor` prints it: the entry's own values hidden (they are often
/// keys), credentials in proxy URLs dropped, everything else as is.
fn shown_value(
    key: &str,
    value: &str,
    entry: &std::collections::BTreeMap<String, String>,
) -> String {
    if entry.contains_key(key) {
        return "(set by the entry's env, hidden)".to_owned();
    }
    if key.to_ascii_lowercase().ends_with("_proxy") && value.contains('@') {
        return net::redact(value);
    }
    value.to_owned()
}

/// The SSRF guard's verdict on `url`, resolving its host but connecting to nothing.
async fn ssrf_verdict(url: &str, whitelist: &config::SsrfWhitelist) -> Result<(), String> {
    let nets = whitelist.check().map_err(|e| e.to_string())?;
    let parsed = url::Url::parse(url).map_err(|e| format!("invalid url: {e}"))?;
    net::Guard::new(nets)
        .check_url(&parsed)
        .await
        .map_err(|e| e.to_string())
}
