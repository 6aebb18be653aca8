//! `mcp-companion secret …`: the OS keychain behind `${secret:NAME}` references.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Read};
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use mcp_companion::config::{self, Config};
use mcp_companion::manage::{edit, secrets};
use mcp_companion::secret::{self, KEYCHAIN_KIND, SecretStore};
use serde::Serialize;

use super::out::outln;

/// The `secret` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum SecretCommand {
    /// Store a secret in the OS keychain; the config refers to it as ${secret:NAME}. The value
    /// is read from a no-echo prompt, or from standard input when that is not a terminal.
    Set {
        /// The secret's name (printable ASCII, no spaces, `$`, `{`, `}`, quotes or backslashes).
        name: String,
    },
    /// List the names of the stored secrets and the servers that use each (never values).
    List {
        /// Print JSON: [{"name", "stored", "usedBy": [{"server", "field"}]}]; `stored` is null
        /// when no keychain answers (then only the config's references are listed, exit 1).
        #[arg(long)]
        json: bool,
    },
    /// Remove a secret from the OS keychain.
    Rm {
        /// The secret's name.
        name: String,
    },
    /// Move plain-text values of secret-looking env and header keys (*TOKEN*, *KEY*, *SECRET*,
    /// *PASSWORD*, Authorization) from the config into the keychain. Shows what would move;
    /// --yes moves it.
    Migrate {
        /// Apply the shown moves.
        #[arg(long)]
        yes: bool,
    },
}

/// Runs one `secret` subcommand against the OS keychain and the config at `config_path`.
pub fn run(config_path: Option<&Path>, cmd: SecretCommand) -> anyhow::Result<ExitCode> {
    let store = secret::os_keychain();
    match cmd {
        SecretCommand::Set { name } => set(config_path, &store, &name),
        SecretCommand::List { json } => list(config_path, &store, json),
        SecretCommand::Rm { name } => rm(config_path, &store, &name),
        SecretCommand::Migrate { yes } => migrate(config_path, &store, yes),
    }
}

fn set(
    config_path: Option<&Path>,
    store: &dyn SecretStore,
    name: &str,
) -> anyhow::Result<ExitCode> {
    secret::validate_name(name)?;
    let value = if std::io::stdin().is_terminal() {
        rpassword::prompt_password(format!("Value for secret {name} (not shown): "))
            .context("cannot read the value from the terminal")?
    } else {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the value from standard input (it must be UTF-8 text)")?;
        // One trailing line break is the end of the input, not part of the value.
        let trimmed = text
            .strip_suffix("\r\n")
            .or_else(|| text.strip_suffix('\n'))
            .unwrap_or(&text);
        trimmed.to_owned()
    };
    if value.is_empty() {
        anyhow::bail!("the value is empty: nothing stored");
    }
    store.set(name, &value)?;
    outln!("stored secret {name} in {KEYCHAIN_KIND}; refer to it as ${{secret:{name}}}");
    let users = users_of(config_path).remove(name).unwrap_or_default();
    if !users.is_empty() {
        let servers: Vec<&str> = users.iter().map(|u| u.server.as_str()).collect();
        outln!(
            "used by: {} (a running companion reads it when each starts: mcp-companion restart SERVER)",
            dedup(servers).join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Where a secret is referenced.
#[derive(Serialize, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Use {
    server: String,
    field: String,
}

/// One row of `secret list`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Row {
    name: String,
    /// `None` when the keychain could not be asked.
    stored: Option<bool>,
    used_by: Vec<Use>,
}

/// Lists the secrets the keychain holds and those the config refers to. Without a keychain it
/// says so on stderr, still lists the config's references (with `stored` unknown), and exits 1.
fn list(
    config_path: Option<&Path>,
    store: &dyn SecretStore,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let (stored, unavailable) = match store.names() {
        Ok(names) => (names, None),
        Err(e) => (Vec::new(), Some(e)),
    };
    let mut users = users_of(config_path);
    let mut rows: Vec<Row> = stored
        .iter()
        .map(|name| Row {
            name: name.clone(),
            stored: Some(true),
            used_by: users.remove(name).unwrap_or_default(),
        })
        .collect();
    // Referenced but not stored: those servers cannot start until `secret set`.
    for (name, used_by) in users {
        let stored = match unavailable {
            Some(_) => None,
            None => Some(store.get(&name).ok().flatten().is_some()),
        };
        rows.push(Row {
            name,
            stored,
            used_by,
        });
    }
    rows.sort_by(|a, b| a.name.cmp(&b.name));
    if let Some(e) = &unavailable {
        eprintln!(
            "error: {e}\nlisting only the secrets the config refers to; whether each is stored is unknown"
        );
    }
    let done = if unavailable.is_some() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    };
    if json {
        outln!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(done);
    }
    if rows.is_empty() {
        match unavailable {
            Some(_) => outln!("the config refers to no secrets"),
            None => {
                outln!("no secrets stored in {KEYCHAIN_KIND} and none referenced by the config")
            }
        }
        return Ok(done);
    }
    let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(4).max(4);
    outln!("{:width$}  USED BY", "NAME");
    for r in &rows {
        let mut used: Vec<String> = r
            .used_by
            .iter()
            .map(|u| format!("{} ({})", u.server, u.field))
            .collect();
        if used.is_empty() {
            used.push("-".into());
        }
        let note = match r.stored {
            Some(true) => String::new(),
            Some(false) => format!("  [not stored: mcp-companion secret set {}]", r.name),
            None => "  [keychain unavailable]".to_owned(),
        };
        outln!("{:width$}  {}{note}", r.name, used.join(", "));
    }
    Ok(done)
}

fn rm(config_path: Option<&Path>, store: &dyn SecretStore, name: &str) -> anyhow::Result<ExitCode> {
    if !store.delete(name)? {
        anyhow::bail!("no secret named \"{name}\" in {KEYCHAIN_KIND}");
    }
    outln!("removed secret {name}");
    let users = users_of(config_path).remove(name).unwrap_or_default();
    if !users.is_empty() {
        let servers: Vec<&str> = users.iter().map(|u| u.server.as_str()).collect();
        eprintln!(
            "warning: still referenced by {}; those servers will not start until it is set again",
            dedup(servers).join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn migrate(
    config_path: Option<&Path>,
    store: &dyn SecretStore,
    yes: bool,
) -> anyhow::Result<ExitCode> {
    let path = config::resolve_config_path(config_path)?;
    let cfg =
        config::load(&path).with_context(|| format!("cannot load config {}", path.display()))?;
    let moves = secrets::plan(&cfg.raw, None, store)?;
    if moves.is_empty() {
        outln!(
            "nothing to migrate in {}: no plain-text value under a secret-looking env or header key",
            path.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "{} {} value(s) of {} into the keychain ({KEYCHAIN_KIND}):",
        if yes { "moving" } else { "would move" },
        moves.len(),
        path.display(),
    );
    for m in &moves {
        let note = if m.already_stored {
            " (already stored)"
        } else {
            ""
        };
        outln!("  {} {}  ->  {}{note}", m.server, m.field, m.reference);
    }
    if !yes {
        outln!("run `mcp-companion secret migrate --yes` to move them");
        return Ok(ExitCode::SUCCESS);
    }
    let stored = secrets::store_values(&moves, store)?;
    edit::update_file(&path, |doc| {
        secrets::rewrite(doc, &moves);
        Ok(())
    })
    .with_context(|| {
        format!(
            "the values are stored in the keychain, but {} could not be rewritten",
            path.display()
        )
    })?;
    outln!(
        "stored {stored} secret(s); {} now refers to them with ${{secret:…}} (a running companion applies it on reload)",
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Secret name → where the config references it. A config that cannot be loaded gives none
/// (the keychain commands still work without one).
fn users_of(config_path: Option<&Path>) -> BTreeMap<String, Vec<Use>> {
    let mut out: BTreeMap<String, Vec<Use>> = BTreeMap::new();
    let Some(cfg) = config::resolve_config_path(config_path)
        .ok()
        .and_then(|p| config::load(&p).ok())
    else {
        return out;
    };
    for entry in valid_entries(&cfg) {
        for (field, name) in entry.secret_references() {
            out.entry(name).or_default().push(Use {
                server: entry.name.clone(),
                field,
            });
        }
    }
    out
}

fn valid_entries(cfg: &Config) -> impl Iterator<Item = &config::ServerConfig> {
    cfg.servers.iter().filter_map(|s| s.entry.as_ref().ok())
}

fn dedup(mut v: Vec<&str>) -> Vec<&str> {
    v.sort_unstable();
    v.dedup();
    v
}
