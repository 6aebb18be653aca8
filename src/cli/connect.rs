//! `connect` / `disconnect`: our `bridge` entry in another MCP client's config file (see
//! `mcp_companion::manage::connect`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use mcp_companion::config;
use mcp_companion::manage::connect::{self, Client, Os, Outcome, Roots, location, stable};
use mcp_companion::manage::{edit, import};

use super::out::outln;

/// `connect` / `disconnect` arguments.
#[derive(Debug, clap::Args)]
pub struct ConnectArgs {
    /// claude-desktop, claude-code, cursor, vscode, windsurf, codex, zed, nanobot, gemini,
    /// opencode, goose, lmstudio, cline, continue, junie or jetbrains (prints the entry to
    /// paste); omit to list every client with its path and state.
    pub client: Option<String>,
    /// Only print where the file is on this OS (linux, macos, windows); change nothing.
    #[arg(long, value_parser = ["windows", "macos", "linux"], conflicts_with_all = ["file", "import"])]
    pub os: Option<String>,
    /// Use this file instead of the client's standard path.
    #[arg(long, value_name = "PATH", requires = "client")]
    pub file: Option<PathBuf>,
    /// connect: also import the client's own servers into the companion's config.
    #[arg(long)]
    pub import: bool,
    /// connect: the client's agent gets this profile of the config (`bridge --profile NAME`).
    #[arg(long, value_name = "NAME", requires = "client")]
    pub profile: Option<String>,
    /// connect: print the file and the entry that would be written (with the program it would
    /// run); change nothing.
    #[arg(long, requires = "client", conflicts_with_all = ["os", "import"])]
    pub print: bool,
}

fn pick(id: &str) -> anyhow::Result<Client> {
    Client::from_id(id).with_context(|| {
        format!(
            "unknown client \"{id}\" (one of {})",
            connect::ALL.map(Client::id).join(", ")
        )
    })
}

/// What the entry runs: this binary, or its stable copy when this one lies in a build or
/// temporary directory ([`stable`]).
fn bridge_program() -> anyhow::Result<(stable::Program, String)> {
    let exe = std::env::current_exe().context("cannot tell where this binary is")?;
    let exe = exe.canonicalize().unwrap_or(exe);
    let copy = stable::current_copy_path();
    let program = stable::choose(&exe, &location::temp_dirs(), copy.as_deref());
    let text = program
        .path()
        .to_str()
        .map(str::to_owned)
        .context("the binary's path is not valid UTF-8")?;
    Ok((program, text))
}

/// `connect` (`on == true`) or `disconnect`.
pub fn run(config_path: Option<&Path>, args: ConnectArgs, on: bool) -> anyhow::Result<ExitCode> {
    let os = args.os.as_deref().and_then(Os::parse);
    let Some(id) = args.client.as_deref() else {
        if let Some(os) = os {
            for client in connect::ALL {
                outln!("{:15} {}", client.id(), symbolic_path(client, os));
            }
            return Ok(ExitCode::SUCCESS);
        }
        let roots = Roots::current().context("cannot tell the home directory")?;
        for s in connect::statuses(&roots) {
            let state = match (&s.error, s.connected, s.installed) {
                (Some(e), _, _) => format!("error: {e}"),
                (None, true, _) => "connected".into(),
                (None, false, true) => "installed, not connected".into(),
                (None, false, false) => "not installed".into(),
            };
            outln!("{:15} {:26} {}", s.id, state, s.path.display());
        }
        for (id, _, _) in connect::clients::PASTE_ONLY {
            outln!(
                "{id:15} {:26} `connect {id}` prints the entry to paste",
                "no file"
            );
        }
        return Ok(ExitCode::SUCCESS);
    };
    if let Some((_, label, place)) = connect::clients::PASTE_ONLY
        .iter()
        .find(|(paste_id, _, _)| *paste_id == id)
    {
        return paste_only(label, place, on);
    }
    let client = pick(id)?;
    if let Some(os) = os {
        outln!(
            "{} on {os:?}: {}",
            client.label(),
            symbolic_path(client, os)
        );
        let exe = if os == Os::Windows {
            "C:\\path\\to\\mcp-companion.exe"
        } else {
            "/path/to/mcp-companion"
        };
        outln!("entry \"{}\": {}", connect::ENTRY_NAME, client.entry(exe));
        return Ok(ExitCode::SUCCESS);
    }
    let roots = Roots::current().context("cannot tell the home directory")?;
    let path = args
        .file
        .clone()
        .unwrap_or_else(|| client.path(Os::current(), &roots));
    if !on {
        if args.print {
            bail!("--print shows what connect would write; disconnect has nothing to show");
        }
        let outcome = connect::disconnect(client, &path)?;
        match outcome {
            Outcome::Changed => outln!("disconnected {} ({})", client.label(), path.display()),
            Outcome::Unchanged => {
                outln!("{} was not connected ({})", client.label(), path.display())
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut bridge = vec!["bridge"];
    if let Some(name) = args.profile.as_deref() {
        check_profile(config_path, name)?;
        bridge.extend(["--profile", name]);
    }
    let (program, exe) = bridge_program()?;
    if args.print {
        outln!("{} ({})", client.label(), path.display());
        outln!(
            "entry \"{}\": {}",
            connect::ENTRY_NAME,
            client.entry_with(&exe, &bridge)
        );
        if let stable::Program::Copy { from, to, why } = &program {
            outln!(
                "note: {} is {why}; connect would copy it to {} and name the copy",
                from.display(),
                to.display()
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.import {
        import_from(config_path, client, &path)?;
    }
    let installed = stable::ensure(&program)?;
    let outcome = connect::connect_with(client, &path, &exe, &bridge)?;
    match outcome {
        Outcome::Changed => outln!(
            "connected {} ({}); restart it to pick up \"{}\"",
            client.label(),
            path.display(),
            connect::ENTRY_NAME
        ),
        Outcome::Unchanged => outln!(
            "{} is already connected ({})",
            client.label(),
            path.display()
        ),
    }
    match (&program, installed) {
        (stable::Program::Copy { from, to, why }, Some(installed)) => {
            let state = match installed {
                stable::Installed::Written => "copied there now",
                stable::Installed::Fresh => "already this build",
                stable::Installed::Newer => "kept: it is newer than this binary",
            };
            outln!(
                "the entry runs {} ({state}), a copy of {}, which is {why}; running `connect` \
                 or `serve` from a newer build refreshes the copy",
                to.display(),
                from.display()
            );
        }
        (
            stable::Program::AsIs {
                fragile: Some(why), ..
            },
            _,
        ) => eprintln!(
            "warning: the entry runs {exe}, {why}, and there is no data directory to copy it \
             into: it breaks when that file is moved, rebuilt or cleaned away; install the \
             binary (`cargo install --locked --path .` puts it in ~/.cargo/bin, or a package) \
             and run `connect` again from the installed one"
        ),
        _ => {}
    }
    if let Some(note) = client.note() {
        outln!("note: {note}");
    }
    Ok(ExitCode::SUCCESS)
}

/// A client without a file we can edit: print the entry (Claude Desktop's shape, which its
/// JSON import reads) and where it goes.
fn paste_only(label: &str, place: &str, on: bool) -> anyhow::Result<ExitCode> {
    if !on {
        outln!(
            "{label} keeps its servers in its settings: remove \"{}\" there",
            connect::ENTRY_NAME
        );
        return Ok(ExitCode::SUCCESS);
    }
    let (program, exe) = bridge_program()?;
    stable::ensure(&program)?;
    let entry = serde_json::json!({
        "mcpServers": { connect::ENTRY_NAME: { "command": exe, "args": ["bridge"] } }
    });
    outln!("{label} keeps its servers in its settings, not in a file connect can edit.");
    outln!("Paste this in {place}:");
    outln!("{}", serde_json::to_string_pretty(&entry)?);
    Ok(ExitCode::SUCCESS)
}

/// Refuses a profile the config does not have or cannot serve, with why.
fn check_profile(config_path: Option<&Path>, name: &str) -> anyhow::Result<()> {
    let path = mcp_companion::config::resolve_config_path(config_path)?;
    let config = mcp_companion::config::load(&path)?;
    super::profile::check(&config, &path, name).map_err(anyhow::Error::msg)
}

/// Where `client`'s file is on `os`, spelled with that OS's placeholders and separators.
fn symbolic_path(client: Client, os: Os) -> String {
    let path = client.path(os, &Roots::symbolic(os)).display().to_string();
    if os == Os::Windows {
        path.replace('/', "\\")
    } else {
        path
    }
}

/// Imports the client's servers (before our entry is added, so it is not among them).
fn import_from(config_path: Option<&Path>, client: Client, path: &Path) -> anyhow::Result<()> {
    let Some(kind) = import::ClientKind::of(client) else {
        bail!("--import does not read {} files yet", client.label())
    };
    if !path.exists() {
        return Ok(());
    }
    let source = import::Source::read(path, Some(kind))?;
    let target = config::resolve_config_path(config_path)?;
    let mut added = 0;
    let mut notes = Vec::new();
    edit::update_file(&target, |doc| {
        let plan = import::plan(doc, std::slice::from_ref(&source));
        added = plan.added();
        import::apply(doc, &plan);
        for item in &plan.items {
            if let Some(name) = item.target_name() {
                notes.extend(item.notes.iter().map(|n| format!("{name}: {n}")));
            }
        }
        if !plan.whitelist.is_empty() {
            notes.push(format!(
                "not copied: its ssrfWhitelist ranges {}; each opens the SSRF guard for every \
                 remote server, so add one to ssrfWhitelist yourself only if you trust it",
                plan.whitelist.join(", ")
            ));
        }
        Ok(())
    })?;
    outln!(
        "imported {added} server(s) from {} into {}",
        client.label(),
        target.display()
    );
    for note in notes {
        outln!("  {note}");
    }
    Ok(())
}
