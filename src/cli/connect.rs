//! `connect` / `disconnect`: our `bridge` entry in another MCP client's config file (see
//! `mcp_companion::manage::connect`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use mcp_companion::config;
use mcp_companion::manage::connect::{self, Client, Os, Outcome, Roots, location};
use mcp_companion::manage::{edit, import};

use super::out::outln;

/// `connect` / `disconnect` arguments.
#[derive(Debug, clap::Args)]
pub struct ConnectArgs {
    /// claude-desktop, claude-code, cursor, vscode, windsurf, codex, zed, nanobot, gemini or
    /// opencode; omit to list every client with its path and state.
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
}

fn pick(id: &str) -> anyhow::Result<Client> {
    Client::from_id(id).with_context(|| {
        format!(
            "unknown client \"{id}\" (one of {})",
            connect::ALL.map(Client::id).join(", ")
        )
    })
}

fn bridge_exe() -> anyhow::Result<String> {
    let exe = std::env::current_exe().context("cannot tell where this binary is")?;
    let exe = exe.canonicalize().unwrap_or(exe);
    exe.to_str()
        .map(str::to_owned)
        .context("the binary's path is not valid UTF-8")
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
        return Ok(ExitCode::SUCCESS);
    };
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
        let outcome = connect::disconnect(client, &path)?;
        match outcome {
            Outcome::Changed => outln!("disconnected {} ({})", client.label(), path.display()),
            Outcome::Unchanged => {
                outln!("{} was not connected ({})", client.label(), path.display())
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.import {
        import_from(config_path, client, &path)?;
    }
    let mut bridge = vec!["bridge"];
    if let Some(name) = args.profile.as_deref() {
        check_profile(config_path, name)?;
        bridge.extend(["--profile", name]);
    }
    let exe = bridge_exe()?;
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
    if let Some(why) = location::fragile(Path::new(&exe), &location::temp_dirs()) {
        eprintln!(
            "warning: the entry runs {exe}, {why}: it breaks when that file is moved, rebuilt \
             or cleaned away; install the binary (`cargo install --locked --path .` puts it in \
             ~/.cargo/bin, or a package) and run `connect` again from the installed one"
        );
    }
    if let Some(note) = client.note() {
        outln!("note: {note}");
    }
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
    let kind = match client {
        Client::Vscode => import::ClientKind::VsCode,
        Client::Nanobot => import::ClientKind::Nanobot,
        Client::Cursor => import::ClientKind::Cursor,
        Client::ClaudeDesktop | Client::ClaudeCode | Client::Windsurf => {
            import::ClientKind::ClaudeDesktop
        }
        Client::Codex | Client::Zed | Client::Gemini | Client::Opencode => {
            bail!("--import does not read {} files yet", client.label())
        }
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
