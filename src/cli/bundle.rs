//! `install FILE.mcpb` and `remove SERVER` (see `mcp_companion::manage::bundle`); bundle
//! entries in `outdated` and `update` go through [`outdated_report`], [`outdated_line`] and [`update`].

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use mcp_companion::manage::bundle::install::{self, DirOutcome, Setup};
use mcp_companion::manage::bundle::signature;
use mcp_companion::manage::bundle::update::{self, BundleUpdate};
use mcp_companion::manage::registry::{Values, keychain};

use super::out::{inert, outln};
use super::registry::{load, parse_values};

/// `install` arguments.
#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// The bundle file, e.g. hello-1.0.0.mcpb.
    pub file: PathBuf,
    /// A user_config value, e.g. --set api_key=… (repeat). On a terminal, options not given
    /// are asked for (sensitive ones without echo).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Read a user_config value from an environment variable of your choice: the entry gets
    /// `${VAR}` (repeat). The only way a bundle's entry reads the companion's environment.
    #[arg(long = "set-env", value_name = "KEY=VAR")]
    pub set_env: Vec<String>,
    /// Name of the entry in mcpServers (default: the manifest's name).
    #[arg(long = "as", value_name = "SERVER")]
    pub server: Option<String>,
    /// Replace an existing entry of the same name (its old bundle directory is removed).
    #[arg(long)]
    pub replace: bool,
    /// Check the bundle and print the entry; write nothing (no file, keychain or directory).
    #[arg(long)]
    pub dry_run: bool,
}

/// `install`.
pub fn install(config_path: Option<&Path>, args: InstallArgs) -> anyhow::Result<ExitCode> {
    let (path, _) = load(config_path)?;
    let mut values = parse_values(&args.set, &args.set_env)?;
    let setup = Setup::here()?;
    if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        ask(&args.file, &setup, &mut values)?;
    }
    let (secrets, _) = keychain::machine_secrets();
    let plan = install::plan(
        &args.file,
        args.server.as_deref(),
        &values,
        secrets.as_ref(),
        &setup,
    )?;
    finish(
        &path,
        &plan,
        args.replace,
        args.dry_run,
        &setup,
        "installed",
        secrets.as_ref(),
    )
}

/// Asks on the terminal for every option not given with `--set`/`--set-env`; an empty answer
/// keeps the default (or leaves an optional one unset).
fn ask(file: &Path, setup: &Setup<'_>, values: &mut Values) -> anyhow::Result<()> {
    for field in install::fields(file, setup)? {
        if values.plain.contains_key(&field.key) || values.env.contains_key(&field.key) {
            continue;
        }
        let default = field
            .default
            .as_deref()
            .map(|d| format!(" [{}]", inert(d)))
            .unwrap_or_default();
        let need = if field.required { " (required)" } else { "" };
        let prompt = format!(
            "{}{need}{default}: ",
            inert(field.description.as_deref().unwrap_or(&field.key))
        );
        let answer = if field.secret {
            rpassword::prompt_password(prompt)?
        } else {
            eprint!("{prompt}");
            let mut line = String::new();
            std::io::stdin().read_line(&mut line)?;
            line.trim_end_matches(['\r', '\n']).to_owned()
        };
        if !answer.is_empty() {
            values.plain.insert(field.key.clone(), answer);
        }
    }
    Ok(())
}

fn finish(
    path: &Path,
    plan: &install::BundlePlan,
    replace: bool,
    dry_run: bool,
    setup: &Setup<'_>,
    verb: &str,
    secrets: &dyn mcp_companion::manage::registry::SecretSink,
) -> anyhow::Result<ExitCode> {
    let planned = &plan.planned;
    eprintln!(
        "signature: {}",
        inert(&signature::describe(plan.archive.signature.as_ref()))
    );
    for w in &planned.warnings {
        eprintln!("warning: {}", inert(w));
    }
    let what = format!(
        "{}@{}",
        inert(&plan.manifest.name),
        inert(&plan.manifest.version)
    );
    if dry_run {
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ &planned.server: planned.entry }))?
        );
        eprintln!(
            "dry run: {what} checked ({} files, {} bytes unpacked); nothing written",
            plan.archive.files.len(),
            plan.archive.total_bytes
        );
        return Ok(ExitCode::SUCCESS);
    }
    install::save(path, plan, replace, secrets, &setup.root)?;
    let server = inert(&planned.server);
    outln!(
        "{verb} bundle {what} as server \"{server}\" in {} (unpacked in {})",
        path.display(),
        plan.dir.display()
    );
    for var in &planned.built.exports {
        outln!("reads ${{{var}}}: export {var}=… in the environment the companion starts from");
    }
    outln!("apply with: mcp-companion reload   (check with: mcp-companion doctor {server})");
    Ok(ExitCode::SUCCESS)
}

/// `remove`.
pub fn remove(config_path: Option<&Path>, server: &str) -> anyhow::Result<ExitCode> {
    let (path, _) = load(config_path)?;
    let setup = Setup::here()?;
    let dir = install::remove(&path, server, &setup.root)?;
    outln!(
        "removed server \"{}\" from {}",
        inert(server),
        path.display()
    );
    match dir {
        Some(DirOutcome::Deleted(d)) => outln!("deleted its bundle directory {}", d.display()),
        Some(DirOutcome::InUse { dir, by }) => outln!(
            "kept its bundle directory {}: server \"{}\" uses it too",
            dir.display(),
            inert(&by)
        ),
        Some(DirOutcome::Failed(e)) => {
            eprintln!("warning: its bundle directory stays: {e}; delete it by hand")
        }
        None => {}
    }
    outln!("apply with: mcp-companion reload");
    Ok(ExitCode::SUCCESS)
}

/// The bundle entries of `doc` against their files, as `outdated` prints them (text lines,
/// or JSON values for `--json`).
pub fn outdated_report(doc: &serde_json::Value) -> Vec<update::BundleOutdated> {
    match Setup::here() {
        Ok(setup) => update::outdated(doc, &setup),
        Err(_) => Vec::new(),
    }
}

/// One `outdated` line for a bundle entry.
pub fn outdated_line(o: &update::BundleOutdated) -> String {
    let state = match (&o.error, &o.latest) {
        (Some(e), _) => format!("cannot read {}: {e}", o.source.bundle),
        (None, Some(l)) if o.update_available && *l == o.source.version => {
            format!("the file changed: {}", o.source.bundle)
        }
        (None, Some(l)) if o.update_available => format!("update available: {l}"),
        _ => "up to date".into(),
    };
    format!(
        "{:20}  {}@{} (bundle)  {}",
        inert(&o.server),
        inert(&o.source.name),
        inert(&o.source.version),
        inert(&state)
    )
}

/// `update` of a server installed from a bundle (`old` is its raw entry).
pub fn update(
    path: &Path,
    old: &serde_json::Value,
    server: &str,
    changes: Values,
    dry_run: bool,
) -> anyhow::Result<ExitCode> {
    let setup = Setup::here()?;
    let (secrets, _) = keychain::machine_secrets();
    match update::plan_update(old, server, changes, secrets.as_ref(), &setup)? {
        BundleUpdate::UpToDate(source) => {
            outln!(
                "\"{}\" is up to date ({}@{}, {})",
                inert(server),
                inert(&source.name),
                inert(&source.version),
                source.bundle
            );
            Ok(ExitCode::SUCCESS)
        }
        BundleUpdate::Planned(plan) => finish(
            path,
            &plan,
            true,
            dry_run,
            &setup,
            "updated",
            secrets.as_ref(),
        ),
    }
}
