//! `outdated` and `update`: servers installed from a registry against its latest versions.
//! An update that moves a remote to another origin asks first (see
//! `mcp_companion::manage::registry::update`).

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use anyhow::bail;
use mcp_companion::manage::registry::{
    install, keychain,
    update::{self, Move, UpdatePlan},
};

use super::out::{inert, outln};
use super::registry::{finish, load, parse_values};

/// `update` arguments.
#[derive(Debug, clap::Args)]
pub struct UpdateArgs {
    /// The server (key in mcpServers) to update to the registry's latest version.
    pub server: String,
    /// Change an input value (others are kept).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Read an input from an environment variable of your choice (see `add --set-env`).
    #[arg(long = "set-env", value_name = "KEY=VAR")]
    pub set_env: Vec<String>,
    /// Print the new entry instead of saving it.
    #[arg(long)]
    pub dry_run: bool,
    /// Save even when the new version connects to another origin (scheme, host or port) or
    /// runs another package than the one the remembered inputs and secrets were given for.
    /// Without it a terminal asks.
    #[arg(long)]
    pub accept_new_origin: bool,
}

/// `outdated`.
pub async fn outdated(config_path: Option<&Path>, json: bool) -> anyhow::Result<ExitCode> {
    let (_, cfg) = load(config_path)?;
    let report = install::outdated(&cfg, &keychain::token_lookup).await;
    let bundles = super::bundle::outdated_report(&cfg.raw);
    if json {
        // One list: registry entries, then bundle entries (their `source.kind` is "mcpb").
        let mut all = serde_json::to_value(&report)?;
        if let serde_json::Value::Array(items) = &mut all {
            items.extend(
                bundles
                    .iter()
                    .map(serde_json::to_value)
                    .collect::<Result<Vec<_>, _>>()?,
            );
        }
        outln!("{}", serde_json::to_string_pretty(&all)?);
        return Ok(ExitCode::SUCCESS);
    }
    if report.is_empty() && bundles.is_empty() {
        outln!("no server was installed from a registry or a bundle");
    }
    for b in &bundles {
        outln!("{}", super::bundle::outdated_line(b));
    }
    for o in &report {
        let state = match (&o.latest, &o.error) {
            (_, Some(e)) => format!("cannot check: {e}"),
            (Some(l), None) if o.update_available => format!("update available: {l}"),
            _ => "up to date".into(),
        };
        outln!(
            "{:20}  {}@{}  {}",
            inert(&o.server),
            inert(&o.source.name),
            inert(&o.source.version),
            inert(&state)
        );
        for m in &o.moves {
            let consent = if m.needs_consent() {
                "  (update asks before sending its inputs there)"
            } else {
                ""
            };
            outln!("{:20}  moves: {}{consent}", "", inert(&m.to_string()));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `update`.
pub async fn update(config_path: Option<&Path>, args: UpdateArgs) -> anyhow::Result<ExitCode> {
    let (path, cfg) = load(config_path)?;
    let changes = parse_values(&args.set, &args.set_env)?;
    if let Some(old) = cfg.raw.get("mcpServers").and_then(|s| s.get(&args.server))
        && mcp_companion::manage::bundle::BundleSource::of_entry(old).is_some()
    {
        return super::bundle::update(&path, old, &args.server, changes, args.dry_run);
    }
    let (secrets, _) = keychain::machine_secrets();
    match update::plan_update(
        &cfg,
        &args.server,
        changes,
        secrets.as_ref(),
        &keychain::token_lookup,
    )
    .await?
    {
        UpdatePlan::UpToDate(source) => {
            outln!(
                "\"{}\" is up to date ({}@{})",
                inert(&args.server),
                inert(&source.name),
                inert(&source.version)
            );
            Ok(ExitCode::SUCCESS)
        }
        UpdatePlan::Planned(planned, moves) => {
            if !consented(&args, &moves)?
                && let Some(m) = moves.iter().find(|m| m.needs_consent())
            {
                bail!(
                    "not updated: \"{}\" moves ({m}) and would take the inputs and secrets given for the old one there; run `mcp-companion update {} --accept-new-origin` to accept",
                    args.server,
                    args.server
                );
            }
            finish(
                &path,
                &planned,
                true,
                args.dry_run,
                "updated",
                secrets.as_ref(),
            )
        }
    }
}

/// Whether the person accepts every move that needs consent: `--accept-new-origin`, else a
/// yes typed on a terminal (a dry run needs none: it writes nothing). Each move is printed.
fn consented(args: &UpdateArgs, moves: &[Move]) -> anyhow::Result<bool> {
    for m in moves {
        eprintln!(
            "\"{}\" moves: {}",
            inert(&args.server),
            inert(&m.to_string())
        );
    }
    if args.dry_run || args.accept_new_origin || !moves.iter().any(Move::needs_consent) {
        return Ok(true);
    }
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return Ok(false);
    }
    eprint!("Give its inputs and secrets to the new one? [y/N] ");
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes"))
}
