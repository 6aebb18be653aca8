//! Starting the headless companion (`mcp-companion serve`) when the person logs in, the
//! way each OS starts a user's background programs (the desktop app has its own switch in
//! Settings):
//!
//! | OS | what is written | enabled by |
//! |---|---|---|
//! | Linux | a systemd user unit `$XDG_CONFIG_HOME/systemd/user/mcp-companion.service` (`Restart=on-failure`) | the `default.target.wants/` link `systemctl --user enable` makes, made here directly so no user bus is needed; `systemctl --user daemon-reload` is asked when a user manager answers |
//! | Windows | the value `MCP Companion` under `HKCU\Software\Microsoft\Windows\CurrentVersion\Run` (through `reg.exe`) | the value itself |
//! | macOS | a LaunchAgent `~/Library/LaunchAgents/io.github.mcp-companion.serve.plist` (`RunAtLoad`, `KeepAlive` on failure) | launchd reads it at the next login |
//!
//! The command started is this binary's absolute path with `serve`, `--config PATH` (the
//! config file in use when it is turned on) and `--socket PATH` when one was given (flag or
//! `MCP_COMPANION_SOCKET`), quoted for the OS: the companion started at login is the one the
//! person runs now, found by the same CLI commands and agents. Turning it on again rewrites the entry; turning it off
//! removes everything this module wrote.
//!
//! This file owns the entry's command, its text for each OS and the refusal to touch an entry
//! it did not write; `linux.rs`, `macos.rs` and `windows.rs` write, remove and read it on
//! their OS.

use std::path::{Path, PathBuf};

/// The name of the login entry (systemd unit stem, Run value, LaunchAgent label).
pub const ENTRY: &str = "mcp-companion";

/// Errors of turning start-at-login on or off.
#[derive(Debug, thiserror::Error)]
pub enum LoginStartError {
    /// No home / config directory to write into.
    #[error("no home directory to write the login entry into")]
    NoHome,
    /// Writing or removing a file failed.
    #[error("{what} {path}: {source}")]
    File {
        /// What was being done (`write`, `remove`, `link`).
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The atomic write failed.
    #[error(transparent)]
    Write(#[from] crate::io::atomic::WriteError),
    /// A path or argument holds a control character (a newline), which the login entry's
    /// one-line command cannot hold without changing its meaning.
    #[error(
        "{what} holds a control character, which a login entry's command line cannot hold: {shown}"
    )]
    ControlCharacter {
        /// `the program path`, `the config path` or `the socket path`.
        what: &'static str,
        /// The value, escaped.
        shown: String,
    },
    /// Something not written by `start-at-login` is where the entry goes.
    #[error(
        "{path} exists and was not written by `mcp-companion start-at-login`: it is left as it is; move it away first"
    )]
    Foreign {
        /// The file.
        path: PathBuf,
    },
    /// `reg.exe` refused (Windows).
    #[error("reg.exe {action} failed: {said}")]
    Registry {
        /// `add`, `delete` or `query`.
        action: &'static str,
        /// What it printed.
        said: String,
    },
}

/// Where the login entry lives and whether it is on.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LoginStart {
    /// Whether the companion starts at login.
    pub enabled: bool,
    /// The file (or registry value) holding the entry.
    pub location: String,
    /// The command it starts, when on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// What the person should know (e.g. the user manager was not reachable, so the unit
    /// starts at the next login rather than now).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The arguments `serve` is started with: `serve`, plus `--config PATH` and `--socket PATH`
/// when given.
fn serve_args(config: Option<&Path>, socket: Option<&Path>) -> Vec<String> {
    let mut args = vec!["serve".to_owned()];
    for (flag, path) in [("--config", config), ("--socket", socket)] {
        if let Some(p) = path {
            args.push(flag.to_owned());
            args.push(p.display().to_string());
        }
    }
    args
}

/// Turns start-at-login on for `exe` (absolute) with `config` and `socket` (absolute).
///
/// # Errors
/// [`LoginStartError`] when the entry cannot be written.
pub fn enable(
    exe: &Path,
    config: Option<&Path>,
    socket: Option<&Path>,
) -> Result<LoginStart, LoginStartError> {
    let plain = |what: &'static str, path: &Path| {
        let text = path.display().to_string();
        if text.chars().any(char::is_control) {
            Err(LoginStartError::ControlCharacter {
                what,
                shown: crate::io::text::inert(&text).into_owned(),
            })
        } else {
            Ok(())
        }
    };
    plain("the program path", exe)?;
    if let Some(c) = config {
        plain("the config path", c)?;
    }
    if let Some(s) = socket {
        plain("the socket path", s)?;
    }
    platform::enable(exe, &serve_args(config, socket))
}

/// The first line of every file this module writes: how `off` and `on` tell ours from a
/// person's own file at the same place.
const HEADER: &str = "Written by `mcp-companion start-at-login on`";

/// Whether the entry file at `path` may be replaced or removed: absent, or a regular file
/// (not a symlink) that this module wrote.
#[cfg_attr(windows, allow(dead_code))]
fn ours_or_absent(path: &Path) -> Result<(), LoginStartError> {
    match std::fs::symlink_metadata(path) {
        Err(_) => Ok(()),
        Ok(m) if m.file_type().is_file() => {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            if text.contains(HEADER) {
                Ok(())
            } else {
                Err(LoginStartError::Foreign {
                    path: path.to_owned(),
                })
            }
        }
        Ok(_) => Err(LoginStartError::Foreign {
            path: path.to_owned(),
        }),
    }
}

/// Turns start-at-login off (nothing to do when it was off).
///
/// # Errors
/// [`LoginStartError`] when the entry cannot be removed.
pub fn disable() -> Result<LoginStart, LoginStartError> {
    platform::disable()
}

/// Whether start-at-login is on, and what it starts.
///
/// # Errors
/// [`LoginStartError`] when the entry cannot be read.
pub fn state() -> Result<LoginStart, LoginStartError> {
    platform::state()
}

/// `arg` quoted for a systemd `ExecStart=` line: double quotes when it holds a space, a quote,
/// a backslash or `%`/`$` (which systemd would expand); `%` doubled, `$` doubled.
fn systemd_quote(arg: &str) -> String {
    let escaped = arg
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('%', "%%")
        .replace('$', "$$");
    if escaped != arg || arg.contains(char::is_whitespace) || arg.is_empty() {
        format!("\"{escaped}\"")
    } else {
        escaped
    }
}

/// The systemd user unit for `exe` `args`.
pub fn unit_text(exe: &Path, args: &[String]) -> String {
    let mut exec = systemd_quote(&exe.display().to_string());
    for a in args {
        exec.push(' ');
        exec.push_str(&systemd_quote(a));
    }
    format!(
        "# {HEADER}; `mcp-companion start-at-login off` removes it.\n\
         [Unit]\n\
         Description=MCP Companion (headless): one MCP server for every local agent\n\
         \n\
         [Service]\n\
         ExecStart={exec}\n\
         Restart=on-failure\n\
         RestartSec=5\n\
         \n\
         [Install]\n\
         WantedBy=default.target\n"
    )
}

/// `text` escaped for XML character data.
fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The LaunchAgent property list for `exe` `args`.
pub fn plist_text(exe: &Path, args: &[String]) -> String {
    let mut program = format!("    <string>{}</string>\n", xml(&exe.display().to_string()));
    for a in args {
        program.push_str(&format!("    <string>{}</string>\n", xml(a)));
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
         <!-- {HEADER}; `mcp-companion start-at-login off` removes it. -->\n\
         <plist version=\"1.0\">\n\
         <dict>\n\
         \x20 <key>Label</key>\n\
         \x20 <string>io.github.{ENTRY}.serve</string>\n\
         \x20 <key>ProgramArguments</key>\n\
         \x20 <array>\n\
         {program}\
         \x20 </array>\n\
         \x20 <key>RunAtLoad</key>\n\
         \x20 <true/>\n\
         \x20 <key>KeepAlive</key>\n\
         \x20 <dict><key>SuccessfulExit</key><false/></dict>\n\
         </dict>\n\
         </plist>\n"
    )
}

/// `exe` `args` as one Windows command line (each argument quoted when it needs it).
pub fn windows_command(exe: &Path, args: &[String]) -> String {
    let quote = |s: &str| {
        if s.is_empty() || s.contains([' ', '\t', '"']) {
            format!("\"{}\"", s.replace('"', "\\\""))
        } else {
            s.to_owned()
        }
    };
    let mut line = format!("\"{}\"", exe.display());
    for a in args {
        line.push(' ');
        line.push_str(&quote(a));
    }
    line
}

#[cfg(target_os = "linux")]
#[path = "linux.rs"]
mod platform;

#[cfg(target_os = "macos")]
#[path = "macos.rs"]
mod platform;

#[cfg(windows)]
#[path = "windows.rs"]
mod platform;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unit_quotes_what_systemd_would_split_or_expand() {
        let args = serve_args(Some(Path::new("/home/a b/100%/$x.json")), None);
        let unit = unit_text(Path::new("/opt/mcp companion/mcp-companion"), &args);
        assert!(
            unit.contains(
                "ExecStart=\"/opt/mcp companion/mcp-companion\" serve --config \"/home/a b/100%%/$$x.json\"\n"
            ),
            "{unit}"
        );
        assert!(unit.contains("WantedBy=default.target"));
    }

    #[test]
    fn the_launch_agent_escapes_xml_and_lists_each_argument() {
        let plist = plist_text(
            Path::new("/Apps/A&B/mcp-companion"),
            &serve_args(None, None),
        );
        assert!(
            plist.contains(
                "<string>/Apps/A&amp;B/mcp-companion</string>\n    <string>serve</string>\n"
            ),
            "{plist}"
        );
        assert!(plist.contains("<key>RunAtLoad</key>"));
    }

    #[test]
    fn the_run_value_quotes_the_program_and_spaced_arguments() {
        let line = windows_command(
            Path::new(r"C:\Users\a b\mcp-companion.exe"),
            &serve_args(Some(Path::new(r"C:\cfg dir\c.json")), None),
        );
        assert_eq!(
            line,
            r#""C:\Users\a b\mcp-companion.exe" serve --config "C:\cfg dir\c.json""#
        );
    }
}
