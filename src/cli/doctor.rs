//! `doctor`: why a server will or will not start, without starting anything.
//!
//! For each stdio server: the resolved program, the exact launch line for the target OS, the PATH
//! and where it came from, and whether the program exists. For remote servers: the redacted URL,
//! the transport and the SSRF verdict (whitelist valid, every address the host resolves to
//! allowed; nothing is connected to). Exit 1 when any enabled
//! server cannot start on this machine.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use mcp_companion::config::{self, ServerConfig, TransportConfig};
use mcp_companion::launch::{LaunchError, TargetOs};
use mcp_companion::{net, upstream};

/// Runs `doctor` for every server, or only `only`, planning for `os` (default: this OS).
pub async fn run(
    config_path: Option<&Path>,
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
    println!("config {}", path.display());
    if preview {
        println!(
            "preview for {}: commands are not looked up on this machine",
            os.name()
        );
    }
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
                println!("{}: cannot start: {e}", spec.name);
                failed += 1;
                continue;
            }
        };
        // Secrets are checked for presence but never printed: `<secret:NAME>` stands in.
        let keychain = mcp_companion::secret::os_keychain();
        let masked = mcp_companion::secret::Masked::new(&keychain);
        let ok = match entry.expand(&config::default_lookup, &masked) {
            Ok(expanded) => report(&expanded, os, preview, &cfg.ssrf_whitelist).await,
            Err(e) => {
                println!("{}: cannot start: {e}", spec.name);
                false
            }
        };
        if entry.disabled {
            println!("  disabled: yes (not started by serve)");
        } else if !ok {
            failed += 1;
        }
    }
    if let Some(name) = only
        && shown == 0
    {
        anyhow::bail!("no server named \"{name}\" in {}", path.display());
    }
    Ok(if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Prints one server's diagnosis; true when it can start (or, in a preview, when nothing but
/// the lookup is in doubt).
async fn report(
    server: &ServerConfig,
    os: TargetOs,
    preview: bool,
    whitelist: &config::SsrfWhitelist,
) -> bool {
    let name = &server.name;
    match &server.transport {
        TransportConfig::Stdio(stdio) => {
            let launch = upstream::plan_for(stdio, os).await;
            let spec = &launch.spec;
            let blocking = match &launch.error {
                Some(LaunchError::NotFound { .. } | LaunchError::Missing { .. }) if preview => None,
                other => other.as_ref(),
            };
            match blocking {
                None => println!("{name} (stdio): ok"),
                Some(e) => println!("{name} (stdio): cannot start: {e}"),
            }
            let program = match &spec.resolved {
                Some(p) => p.display().to_string(),
                None if preview => format!("{} (not looked up)", stdio.command),
                None => format!("{} (not found)", stdio.command),
            };
            println!("  program: {program}");
            println!(
                "  exists:  {}",
                if spec.resolved.is_some() { "yes" } else { "no" }
            );
            println!("  launch:  {}", spec.display_line());
            println!("  PATH:    {}", spec.path(os));
            println!("  from:    {}", spec.path_source);
            if let Some(cwd) = &spec.cwd {
                println!("  cwd:     {}", cwd.display());
            }
            blocking.is_none()
        }
        TransportConfig::Sse(http) | TransportConfig::StreamableHttp(http) => {
            let transport = server.transport_name();
            let verdict = ssrf_verdict(&http.url, whitelist).await;
            match &verdict {
                Ok(()) => println!("{name} ({transport}): ok"),
                Err(why) => println!("{name} ({transport}): cannot start: {why}"),
            }
            println!("  url:     {}", net::redact(&http.url));
            println!(
                "  SSRF:    {}",
                match &verdict {
                    Ok(()) => "allowed".to_owned(),
                    Err(_) => "refused (see above)".to_owned(),
                }
            );
            verdict.is_ok()
        }
    }
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
