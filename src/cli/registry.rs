//! `registry search|show|list`, `add`: installing servers from an MCP registry (see
//! `mcp_companion::manage::registry`); `outdated` and `update` are in `registry_update.rs`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use mcp_companion::config::{self, ConfigError};
use mcp_companion::manage::registry::{
    self, Choice, NoKeychainSink, RegistryClient, SecretSink, Values, install, keychain, sources,
};

use super::out::{inert, outln};
pub use super::registry_update::{UpdateArgs, outdated, update};

/// `registry …` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum RegistryCommand {
    /// Search a registry by server name (substring), one page at a time.
    Search {
        /// Text the server name contains (empty: everything).
        #[arg(default_value = "")]
        term: String,
        /// Registry name or URL from `registries` (default: the first configured, else the official one).
        #[arg(long)]
        registry: Option<String>,
        /// Results per page.
        #[arg(long, default_value_t = 30)]
        limit: u32,
        /// Cursor of the page to show (printed under the previous page).
        #[arg(long)]
        cursor: Option<String>,
        /// Print the registry's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show one server: versions, ways to install, and the inputs `add` asks for.
    Show {
        /// Registry name, optionally with @VERSION (default: latest).
        name: String,
        /// Registry name or URL.
        #[arg(long)]
        registry: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the configured registries.
    List,
}

/// `add` arguments.
#[derive(Debug, clap::Args)]
pub struct AddArgs {
    /// Registry name of the server, optionally with @VERSION (default: latest), e.g.
    /// io.github.user/weather@1.2.0.
    pub name: String,
    /// An input value, e.g. --set API_KEY=… (repeat; `registry show` lists them).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Read an input from an environment variable of your choice, e.g. --set-env
    /// API_KEY=MY_API_KEY: the entry gets `${MY_API_KEY}` (repeat). The only way an installed
    /// entry reads the companion's environment.
    #[arg(long = "set-env", value_name = "KEY=VAR")]
    pub set_env: Vec<String>,
    /// Name of the entry in mcpServers (default: the part after the `/`).
    #[arg(long = "as", value_name = "SERVER")]
    pub server: Option<String>,
    /// Registry name or URL.
    #[arg(long)]
    pub registry: Option<String>,
    /// Install the first remote (hosted endpoint) instead of a package.
    #[arg(long, conflicts_with = "package")]
    pub remote: bool,
    /// Install packages[N] (0-based, see `registry show`).
    #[arg(long)]
    pub package: Option<usize>,
    /// Replace an existing entry of the same name.
    #[arg(long)]
    pub replace: bool,
    /// Print the entry instead of saving it.
    #[arg(long)]
    pub dry_run: bool,
    /// Write the entry without asking, also when the registry's arguments add flags to its
    /// launch line (for scripts; without a terminal, `add` otherwise refuses such an entry).
    #[arg(long)]
    pub yes: bool,
}

/// The config file and its raw document (`{}` when it does not exist yet).
pub(super) fn load(config_path: Option<&Path>) -> anyhow::Result<(PathBuf, config::Config)> {
    let path = config::resolve_config_path(config_path)?;
    let cfg = match config::load(&path) {
        Ok(cfg) => cfg,
        Err(ConfigError::Io {
            kind: std::io::ErrorKind::NotFound,
            ..
        }) => config::parse("{}", &path)?,
        Err(e) => return Err(e).with_context(|| format!("cannot load config {}", path.display())),
    };
    Ok((path, cfg))
}

fn client(cfg: &config::Config, wanted: Option<&str>) -> anyhow::Result<(String, RegistryClient)> {
    let list = sources::registries(&cfg.raw)?;
    let chosen = sources::pick(&list, wanted)?;
    let client = chosen.client(&cfg.ssrf_whitelist, &keychain::token_lookup)?;
    Ok((chosen.url.clone(), client))
}

fn split_version(name: &str) -> (&str, &str) {
    match name.rsplit_once('@') {
        Some((n, v)) if !n.is_empty() && !v.is_empty() => (n, v),
        _ => (name, "latest"),
    }
}

fn parse_sets(flag: &str, sets: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
    sets.iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
            _ => bail!("{flag} expects KEY=VALUE, got \"{s}\""),
        })
        .collect()
}

/// The values of `--set` and `--set-env`; one key given both ways is refused.
pub(super) fn parse_values(set: &[String], set_env: &[String]) -> anyhow::Result<Values> {
    let plain = parse_sets("--set", set)?;
    let env = parse_sets("--set-env", set_env)?;
    if let Some(key) = plain.keys().find(|k| env.contains_key(*k)) {
        bail!("input \"{key}\" is given with both --set and --set-env; keep one");
    }
    Ok(Values {
        plain,
        env,
        stored: BTreeMap::new(),
    })
}

/// `registry …`.
pub async fn registry(
    config_path: Option<&Path>,
    cmd: RegistryCommand,
) -> anyhow::Result<ExitCode> {
    let (_, cfg) = load(config_path)?;
    match cmd {
        RegistryCommand::List => {
            for r in sources::registries(&cfg.raw)? {
                let token = if r.token.is_some() { "  (token)" } else { "" };
                // A registry URL can carry a password or an API key (`user:pw@`, `?key=`).
                outln!(
                    "{:12}  {}{token}",
                    inert(&r.name),
                    mcp_companion::net::redact(&r.url)
                );
            }
        }
        RegistryCommand::Search {
            term,
            registry,
            limit,
            cursor,
            json,
        } => {
            let (_, client) = client(&cfg, registry.as_deref())?;
            let page = client
                .list(Some(&term), cursor.as_deref(), Some(limit))
                .await?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&page)?);
                return Ok(ExitCode::SUCCESS);
            }
            if page.servers.is_empty() {
                outln!("no servers match \"{term}\"");
            }
            for r in &page.servers {
                let s = &r.server;
                let mut kinds: Vec<String> = s
                    .packages
                    .iter()
                    .map(|p| inert(&p.registry_type).into_owned())
                    .collect();
                kinds.extend(s.remotes.iter().map(|t| inert(&t.kind).into_owned()));
                let status = r
                    .status()
                    .filter(|s| *s != "active")
                    .map(|s| format!(" [{}]", inert(s)));
                outln!(
                    "{}@{}{}  ({})\n    {}",
                    inert(&s.name),
                    inert(&s.version),
                    status.unwrap_or_default(),
                    kinds.join(", "),
                    registry::client::quote(&s.description)
                );
            }
            if let Some(next) = page.metadata.next_cursor.filter(|c| !c.is_empty()) {
                outln!(
                    "more: mcp-companion registry search \"{}\" --cursor {}",
                    inert(&term),
                    inert(&next)
                );
            }
        }
        RegistryCommand::Show {
            name,
            registry,
            json,
        } => {
            let (_, client) = client(&cfg, registry.as_deref())?;
            let (name, version) = split_version(&name);
            let found = client.version(name, version).await?;
            let versions = client.versions(name).await?;
            let d = &found.server;
            let options = registry::options(d);
            let fields = match registry::default_choice(d) {
                Ok(choice) => {
                    registry::build(
                        d,
                        choice,
                        "server",
                        &Values::default(),
                        &NoKeychainSink,
                        true,
                    )?
                    .fields
                }
                Err(_) => Vec::new(),
            };
            if json {
                let v = serde_json::json!({"server": d, "versions": versions.servers.iter().map(|r| &r.server.version).collect::<Vec<_>>(), "options": options, "fields": fields});
                outln!("{}", serde_json::to_string_pretty(&v)?);
                return Ok(ExitCode::SUCCESS);
            }
            outln!(
                "{}@{}  {}",
                inert(&d.name),
                inert(&d.version),
                registry::client::quote(&d.description)
            );
            let list: Vec<_> = versions
                .servers
                .iter()
                .map(|r| inert(&r.server.version))
                .collect();
            outln!("versions: {}", list.join(", "));
            for (i, o) in options.iter().enumerate() {
                let why = o
                    .unsupported
                    .as_deref()
                    .map(|u| format!("  (unsupported: {u})"));
                outln!(
                    "option {i}: {}{}",
                    inert(&o.label),
                    inert(&why.unwrap_or_default())
                );
            }
            for f in &fields {
                let mut notes = Vec::new();
                if f.required {
                    notes.push("required".to_owned());
                }
                if f.secret {
                    notes.push("secret".to_owned());
                }
                if let Some(d) = &f.default {
                    notes.push(format!("default {d}"));
                }
                if !f.choices.is_empty() {
                    notes.push(format!("one of {}", f.choices.join("|")));
                }
                outln!(
                    "--set {}=…  ({}; {})  {}",
                    inert(&f.key),
                    inert(&f.target),
                    inert(&notes.join(", ")),
                    inert(f.description.as_deref().unwrap_or(""))
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `add`.
pub async fn add(config_path: Option<&Path>, args: AddArgs) -> anyhow::Result<ExitCode> {
    let (path, cfg) = load(config_path)?;
    let (registry_url, client) = client(&cfg, args.registry.as_deref())?;
    let (name, version) = split_version(&args.name);
    let found = client.version(name, version).await?;
    let detail = &found.server;
    let choice = if args.remote {
        registry::options(detail)
            .into_iter()
            .find(|o| matches!(o.choice, Choice::Remote(_)) && o.unsupported.is_none())
            .map(|o| o.choice)
            .with_context(|| format!("{name} has no supported remote"))?
    } else if let Some(i) = args.package {
        Choice::Package(i)
    } else {
        registry::default_choice(detail)?
    };
    let server = args
        .server
        .clone()
        .unwrap_or_else(|| install::default_server_name(&detail.name));
    let values = parse_values(&args.set, &args.set_env)?;
    let (secrets, _) = keychain::machine_secrets();
    let planned = install::plan(
        &registry_url,
        detail,
        choice,
        &server,
        &values,
        secrets.as_ref(),
        &cfg.ssrf_whitelist,
        &install::on_path,
    )
    .await?;
    super::registry_launch::confirm(&planned, args.yes, args.dry_run)?;
    finish(
        &path,
        &planned,
        args.replace,
        args.dry_run,
        "added",
        secrets.as_ref(),
    )
}

/// Prints (`dry_run`: writes nothing, keychain included) or saves `planned`.
pub(super) fn finish(
    path: &Path,
    planned: &install::Planned,
    replace: bool,
    dry_run: bool,
    verb: &str,
    secrets: &dyn SecretSink,
) -> anyhow::Result<ExitCode> {
    for w in &planned.warnings {
        eprintln!("warning: {}", inert(w));
    }
    if dry_run {
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ &planned.server: planned.entry }))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    install::save(path, planned, replace, secrets)?;
    let source = planned.entry.get("source");
    let what = source
        .and_then(|s| {
            Some(format!(
                "{}@{}",
                s.get("name")?.as_str()?,
                s.get("version")?.as_str()?
            ))
        })
        .unwrap_or_default();
    let server = inert(&planned.server);
    outln!(
        "{verb} server \"{server}\" ({}) to {}",
        inert(&what),
        path.display()
    );
    for var in &planned.built.exports {
        outln!("reads ${{{var}}}: export {var}=… in the environment the companion starts from");
    }
    outln!("apply with: mcp-companion reload   (check with: mcp-companion doctor {server})");
    Ok(ExitCode::SUCCESS)
}
