//! `start-at-login [on|off]`: start the headless companion when the person logs in
//! ([`mcp_companion::manage::login_start`]).

use std::path::Path;
use std::process::ExitCode;

use mcp_companion::manage::connect::{location, stable};
use mcp_companion::manage::login_start::{self, LoginStart};

use super::out::{self, outln};

/// What `start-at-login` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Switch {
    /// Start `serve` at every login from now on.
    On,
    /// Stop doing so (removes what `on` wrote).
    Off,
}

/// Turns start-at-login `switch`ed (or shows it), starting this binary with the config file in
/// use (`config`, else `MCP_COMPANION_CONFIG`, else the default) and `socket` when given.
pub fn run(
    switch: Option<Switch>,
    config: Option<&Path>,
    socket: Option<&Path>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let shown = match switch {
        Some(Switch::On) => {
            let exe = std::env::current_exe()?;
            let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
            let config = mcp_companion::config::resolve_config_path(config)?;
            let socket = socket.map(std::path::absolute).transpose()?;
            // As `connect`: a build or temporary directory is named by its stable copy.
            let copy = stable::current_copy_path();
            let program = stable::choose(&exe, &location::temp_dirs(), copy.as_deref());
            stable::ensure(&program)?;
            if let stable::Program::AsIs {
                fragile: Some(why), ..
            } = &program
            {
                eprintln!(
                    "warning: the login entry runs {}, {why}, and there is no data directory \
                     to copy it into: it breaks when that file is moved, rebuilt or cleaned \
                     away; install the binary and turn this on again from the installed one",
                    exe.display()
                );
            }
            login_start::enable(program.path(), Some(&config), socket.as_deref())?
        }
        Some(Switch::Off) => login_start::disable()?,
        None => login_start::state()?,
    };
    if json {
        outln!("{}", serde_json::to_string_pretty(&shown)?);
    } else {
        print(&shown)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn print(s: &LoginStart) -> anyhow::Result<()> {
    if s.enabled {
        outln!(
            "on: the companion starts at login ({})",
            out::visible(&s.location)
        );
        if let Some(command) = &s.command {
            outln!("  runs {}", out::visible(command));
        }
    } else {
        outln!("off: nothing starts the companion at login");
    }
    if let Some(note) = &s.note {
        outln!("note: {}", out::visible(note));
    }
    Ok(())
}
