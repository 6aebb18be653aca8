//! The CLI's subcommands: thin wrappers that call the library and print for people or `--json`.

pub mod activity;
mod agents;
pub mod args;
pub mod auth;
pub mod bridge;
pub mod bundle;
mod client;
pub mod connect;
pub mod doctor;
pub mod out;
pub mod policy;
mod profile;
pub mod registry;
mod registry_launch;
mod registry_update;
pub mod secret;
pub mod start_at_login;
mod status;
mod tokens;
mod trust;

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use mcp_companion::companion::Companion;
use mcp_companion::config;
use mcp_companion::control::{self, ControlRequest, ControlResponse};
use mcp_companion::ipc::paths::EndpointPaths;
use mcp_companion::supervisor::ServerState;
use out::outln;

/// Sends logs to stderr, filtered by `--log-level`, else `RUST_LOG`, else `default`. Every line
/// is scrubbed of URLs and secrets on its way out, whatever its target or level (rmcp, reqwest
/// and hyper log request URLs at debug and trace level), and outside text in it is written
/// inert ([`mcp_companion::logging::layer`]).
pub fn init_tracing(level: Option<&str>, default: &str) {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;

    let filter = level
        .map(tracing_subscriber::EnvFilter::new)
        .or_else(|| tracing_subscriber::EnvFilter::try_from_default_env().ok())
        .unwrap_or_else(|| tracing_subscriber::EnvFilter::new(format!("{default},rmcp=warn")));
    // rmcp's OAuth code logs authorization codes at debug.
    let filter = mcp_companion::auth::secret_safe(filter);
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(mcp_companion::logging::layer())
        .try_init();
}

/// Brings the stable copy that `connect` names in agents' entries up to this build, when one
/// exists and this binary is newer (`mcp_companion::manage::connect::stable`).
fn refresh_stable_copy() {
    use mcp_companion::manage::connect::stable;
    let (Ok(exe), Some(copy)) = (std::env::current_exe(), stable::current_copy_path()) else {
        return;
    };
    match stable::refresh(&exe, &copy) {
        Ok(Some(stable::Installed::Written)) => {
            tracing::info!(copy = %copy.display(), "the stable copy agents start is now this build");
        }
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "agents still start the older stable copy"),
    }
}

/// `serve`: run in the foreground until Ctrl-C / SIGTERM.
pub async fn serve(
    config_path: Option<&Path>,
    socket: Option<&Path>,
    watch: bool,
) -> anyhow::Result<ExitCode> {
    let path = config::resolve_config_path(config_path)?;
    let (cfg, created) = config::load_or_init(&path)
        .with_context(|| format!("cannot load config {}", path.display()))?;
    if created {
        tracing::info!(path = %path.display(), "no config found: wrote a default config with the built-in demo server");
    }
    let paths = EndpointPaths::resolve(socket);
    // Before any server starts, so every process group is registered with it.
    if let Err(e) = mcp_companion::process::reaper::start() {
        tracing::warn!(error = %e, "cannot start the reaper: servers may outlive a killed companion");
    }
    let mut companion = Companion::start(&cfg, paths, Some(path.clone())).await?;
    // Only now: a second `serve`, refused above, must not say it loaded anything.
    if !created {
        tracing::info!(path = %path.display(), "config loaded");
    }
    if watch {
        companion.watch_config(Duration::from_secs(1));
        tracing::info!(path = %path.display(), "watching the config file for changes");
    }
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "mcp-companion".into());
    tracing::info!(
        socket = %companion.paths().mcp.display(),
        "listening; agents connect with: {exe} bridge"
    );
    // Off the start path: copying a binary takes a moment.
    tokio::task::spawn_blocking(refresh_stable_copy);
    let hub = companion.hub().clone();
    let total = cfg.servers.len();
    tokio::spawn(async move {
        hub.settle(Duration::from_secs(120)).await;
        let statuses = hub.statuses();
        let running = statuses
            .iter()
            .filter(|s| s.state == ServerState::Running)
            .count();
        tracing::info!(
            running,
            total,
            tools = hub.catalog().len(),
            "servers settled"
        );
        for s in statuses.iter().filter(|s| s.state == ServerState::Failed) {
            tracing::warn!(server = %s.name, error = s.last_error.as_deref().unwrap_or(""), "server failed");
        }
    });
    wait_for_shutdown_signal().await;
    tracing::info!("shutting down");
    companion.shutdown().await;
    tracing::info!("stopped");
    Ok(ExitCode::SUCCESS)
}

async fn wait_for_shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "cannot watch SIGTERM; Ctrl-C still works");
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(windows)]
    {
        // Closing the console window must stop the servers too.
        match tokio::signal::windows::ctrl_close() {
            Ok(mut close) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = close.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
}

/// `tools`: list the wrapped tools (a profile's with `profile`), then the profiles.
pub async fn tools(
    socket: Option<&Path>,
    json: bool,
    profile: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let paths = mcp_companion::ipc::record::locate(socket).await;
    let target = profile::endpoint(&paths, profile).await?;
    let tools = client::list_tools(&target).await?;
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "tools": tools }))?
        );
    } else if tools.is_empty() && profile.is_some() {
        outln!("no tools in this profile (its servers stopped, or its globs match nothing?)");
    } else if tools.is_empty() {
        outln!("no tools (is every server stopped or failed? see `mcp-companion status`)");
    } else {
        let width = tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
        for t in &tools {
            let desc = t
                .description
                .as_deref()
                .unwrap_or("")
                .lines()
                .next()
                .unwrap_or("");
            outln!("{:width$}  {}", t.name, out::visible(desc));
        }
    }
    if !json
        && profile.is_none()
        && let Ok(report) = mcp_companion::control::status(&paths.control).await
        && !report.profiles.is_empty()
    {
        outln!("");
        status::print_profiles(&report.profiles)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `call`: call one wrapped tool.
pub async fn call(
    socket: Option<&Path>,
    name: &str,
    arguments: &str,
    profile: Option<&str>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let args: serde_json::Value =
        serde_json::from_str(arguments).context("arguments must be a JSON object")?;
    let serde_json::Value::Object(args) = args else {
        anyhow::bail!("arguments must be a JSON object, e.g. '{{\"message\":\"hi\"}}'");
    };
    let paths = mcp_companion::ipc::record::locate(socket).await;
    let target = profile::endpoint(&paths, profile).await?;
    let result = client::call_tool(&target, name, args).await?;
    let failed = result.is_error == Some(true);
    if json {
        outln!("{}", serde_json::to_string_pretty(&result)?);
    } else if failed {
        // The tool's error text goes where the CLI's own errors go, said the same way: to a
        // person, so shown, never obeyed, wherever stdout goes.
        let text: Vec<String> = result
            .content
            .iter()
            .map(|block| match block {
                rmcp::model::ContentBlock::Text(t) => out::visible(&t.text).into_owned(),
                other => serde_json::to_string(other).unwrap_or_default(),
            })
            .collect();
        let text = if text.is_empty() {
            "the tool reported an error without saying what".to_owned()
        } else {
            text.join("\n")
        };
        eprintln!("error: {text}");
    } else {
        for block in &result.content {
            match block {
                rmcp::model::ContentBlock::Text(t) => {
                    outln!("{}", out::visible_on_terminal(&t.text))
                }
                rmcp::model::ContentBlock::Image(i) => {
                    outln!("[image {}, {} bytes base64]", i.mime_type, i.data.len())
                }
                other => outln!("{}", serde_json::to_string(other)?),
            }
        }
        if let Some(structured) = &result.structured_content {
            outln!("structuredContent: {structured}");
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

pub use agents::agents;
pub use status::status;
pub use tokens::tokens;
pub use trust::trust;

/// `logs`: a server's captured stderr; with `follow`, keeps printing new lines.
pub async fn logs(
    socket: Option<&Path>,
    server: &str,
    lines: usize,
    follow: bool,
) -> anyhow::Result<ExitCode> {
    let paths = mcp_companion::ipc::record::locate(socket).await;
    let mut client = control::ControlClient::connect(&paths.control).await?;
    client
        .send(&ControlRequest::Logs {
            server: server.to_owned(),
            lines,
            follow,
        })
        .await?;
    while let Some(batch) = client.next().await? {
        if let ControlResponse::Logs(batch) = batch {
            for line in batch.lines {
                outln!("{}", out::inert_lines(&line));
            }
        }
        if !follow {
            break;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `start`, `stop`, `restart`, `reload`: one control request, its answer printed.
pub async fn control(
    socket: Option<&Path>,
    req: ControlRequest,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let paths = mcp_companion::ipc::record::locate(socket).await;
    let answer = control::request(&paths.control, &req).await?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&answer)?);
        let failed = matches!(&answer, ControlResponse::Reloaded(r) if !r.failed.is_empty());
        return Ok(if failed {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        });
    }
    match (req, answer) {
        (_, ControlResponse::Reloaded(report)) => {
            let list = |names: &[String]| {
                if names.is_empty() {
                    "-".to_owned()
                } else {
                    // Names come from the config file: shown, not obeyed, by the terminal.
                    out::visible(&names.join(", ")).into_owned()
                }
            };
            outln!("added:     {}", list(&report.added));
            outln!("removed:   {}", list(&report.removed));
            outln!("changed:   {}", list(&report.changed));
            outln!("unchanged: {}", list(&report.unchanged));
            for warning in &report.warnings {
                outln!("warning:   {}", out::visible(warning));
            }
            for failed in &report.failed {
                eprintln!("failed:    {}", out::inert(failed));
            }
            if !report.failed.is_empty() {
                return Ok(ExitCode::FAILURE);
            }
        }
        (ControlRequest::Start { server }, _) => outln!("started {server}"),
        (ControlRequest::Stop { server }, _) => outln!("stopped {server}"),
        (ControlRequest::Restart { server }, _) => outln!("restarted {server}"),
        _ => {}
    }
    Ok(ExitCode::SUCCESS)
}

/// `reload`: the running companion re-reads its own config file. A `--config` naming another
/// file is refused (it would be ignored: the companion reads the file it started with).
pub async fn reload(
    config: Option<&Path>,
    socket: Option<&Path>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    if let Some(asked) = config {
        let paths = mcp_companion::ipc::record::locate(socket).await;
        let running = control::status(&paths.control).await?.config;
        let same = |a: &Path, b: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            (Ok(a), Ok(b)) => a == b,
            _ => std::path::absolute(a).ok() == std::path::absolute(b).ok(),
        };
        match running {
            Some(running) if !same(asked, &running) => anyhow::bail!(
                "the running companion reads {} and `reload` re-reads that file; --config names {} \
                 (edit the running config, or restart the companion with --config {})",
                running.display(),
                asked.display(),
                asked.display()
            ),
            None => anyhow::bail!(
                "the running companion has no config file to re-read (--config names {})",
                asked.display()
            ),
            Some(_) => {}
        }
    }
    control(socket, ControlRequest::Reload, json).await
}

/// `demo-server`: the built-in MCP server on stdio.
pub async fn demo_server(opts: mcp_companion::demo::DemoOptions) -> anyhow::Result<ExitCode> {
    mcp_companion::demo::run_stdio(opts).await?;
    Ok(ExitCode::SUCCESS)
}
