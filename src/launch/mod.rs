//! Building the exact command a stdio server is spawned with (DESIGN §7, §8).
//!
//! The problem: the most common reason an MCP server "does not work" is that it never starts.
//! `npx` is a batch file on Windows that `CreateProcess` cannot run; an app launched from a
//! desktop session has a PATH without `npx` or `uvx`; a child that inherits the companion's whole
//! environment sees its secrets; a typo in `cwd` surfaces as a bare "No such file or directory".
//!
//! The strategy: [`plan`] is a pure function of the entry, the target OS, the companion's
//! environment and an injected [`Lookup`], so every rule is unit-tested for every OS on every
//! host; the spawn side ([`crate::process::child`]) only applies the result.
//!
//! | file | rule |
//! |---|---|
//! | [`env`](mod@env) | minimal child environment plus the entry's `env` |
//! | [`windows`] | which commands run under `cmd.exe /d /v:off /s /c`, and quoting that survives cmd.exe |
//! | [`shell_path`] | PATH from the login shell for GUI launches on macOS and Linux |
//! | [`inherited`] | [`ChildEnvironment`]: what a child gets from the companion's own process |
//!
//! PATH, for both the lookup and the child, is the entry's own `env.PATH` when set; else, in GUI
//! mode on macOS/Linux, the companion's PATH extended with the login shell's and the common tool
//! dirs; else the companion's PATH. The plan is always built, even when the program is missing,
//! so `doctor` can show the line it would run; [`Launch::into_result`] turns a problem into an
//! error.

pub mod env;
pub mod inherited;
pub mod shell_path;
pub mod windows;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::config::StdioConfig;
use shell_path::LoginPath;

pub use inherited::ChildEnvironment;

/// The operating system a launch is planned for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetOs {
    /// Linux (and other Unix-likes without special rules).
    Linux,
    /// macOS.
    Macos,
    /// Windows.
    Windows,
}

impl TargetOs {
    /// The OS this binary runs on.
    pub const fn host() -> TargetOs {
        if cfg!(windows) {
            TargetOs::Windows
        } else if cfg!(target_os = "macos") {
            TargetOs::Macos
        } else {
            TargetOs::Linux
        }
    }

    /// The separator of PATH-style lists.
    pub const fn path_separator(self) -> char {
        match self {
            TargetOs::Windows => ';',
            TargetOs::Linux | TargetOs::Macos => ':',
        }
    }

    /// `windows`, `macos` or `linux`.
    pub const fn name(self) -> &'static str {
        match self {
            TargetOs::Windows => "windows",
            TargetOs::Macos => "macos",
            TargetOs::Linux => "linux",
        }
    }
}

impl std::str::FromStr for TargetOs {
    type Err = LaunchError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "windows" => Ok(TargetOs::Windows),
            "macos" | "darwin" => Ok(TargetOs::Macos),
            "linux" => Ok(TargetOs::Linux),
            _ => Err(LaunchError::UnknownOs { os: s.to_owned() }),
        }
    }
}

/// How [`plan`] finds programs and checks directories; injected so plans are testable anywhere.
pub trait Lookup {
    /// Finds `command` as the OS would for a child with PATH `path` started in `cwd`: a bare
    /// name is searched on `path` (with `PATHEXT` on Windows), a path is taken relative to `cwd`.
    fn find(&self, command: &str, path: &str, cwd: &Path) -> Option<PathBuf>;
    /// Whether `dir` is an existing directory.
    fn is_dir(&self, dir: &Path) -> bool;
}

/// The real file system, searched with the `which` crate.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemLookup;

impl Lookup for SystemLookup {
    fn find(&self, command: &str, path: &str, cwd: &Path) -> Option<PathBuf> {
        which::which_in(command, Some(path), cwd).ok()
    }

    fn is_dir(&self, dir: &Path) -> bool {
        dir.is_dir()
    }
}

/// A lookup for previewing another OS's launch: finds no program, accepts every directory.
#[derive(Clone, Copy, Debug, Default)]
pub struct PreviewLookup;

impl Lookup for PreviewLookup {
    fn find(&self, _command: &str, _path: &str, _cwd: &Path) -> Option<PathBuf> {
        None
    }

    fn is_dir(&self, _dir: &Path) -> bool {
        true
    }
}

/// What [`plan`] needs to know about the machine it plans for.
pub struct Host<'a> {
    /// The OS the child will run on.
    pub os: TargetOs,
    /// The companion's environment (a function so tests need not touch the real one).
    pub vars: &'a dyn Fn(&str) -> Option<String>,
    /// Login-shell PATH and tool dirs; `Some` only in GUI mode on macOS/Linux.
    pub gui_path: Option<&'a LoginPath>,
    /// How programs and directories are found.
    pub lookup: &'a dyn Lookup,
    /// Where a relative command is resolved when the entry has no `cwd` (the companion's).
    pub base_dir: &'a Path,
}

/// Where the PATH a child sees came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathSource {
    /// The entry's own `env.PATH`.
    Entry,
    /// The companion's PATH, as inherited.
    Process,
    /// GUI mode: the companion's PATH, then the login shell's, then existing tool dirs.
    Gui {
        /// The login shell asked.
        shell: Option<String>,
        /// Why the login shell's PATH is missing, when it is.
        fallback: Option<String>,
    },
}

impl fmt::Display for PathSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathSource::Entry => f.write_str("the entry's env.PATH"),
            PathSource::Process => f.write_str("the companion's PATH"),
            PathSource::Gui {
                shell,
                fallback: None,
            } => write!(
                f,
                "GUI mode: the companion's PATH + login shell {} + tool dirs",
                shell.as_deref().unwrap_or("?")
            ),
            PathSource::Gui {
                fallback: Some(reason),
                ..
            } => write!(
                f,
                "GUI mode: the companion's PATH + tool dirs (login shell unavailable: {reason})"
            ),
        }
    }
}

/// Everything needed to spawn one stdio server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchSpec {
    /// The program to execute: an absolute path after PATH resolution (`COMSPEC` when wrapped);
    /// the command as written when it was not found.
    pub program: PathBuf,
    /// The arguments as the program receives them (for display when `raw_args` is set).
    pub args: Vec<String>,
    /// Windows only: the exact command-line tail to pass with `raw_arg` instead of `args`.
    pub raw_args: Option<String>,
    /// The child's complete environment (the child inherits nothing else).
    pub env: BTreeMap<String, String>,
    /// Working directory, checked to exist.
    pub cwd: Option<PathBuf>,
    /// Where the PATH in `env` came from.
    pub path_source: PathSource,
    /// Where the configured command was found, when it was (`npx.cmd` when wrapped).
    pub resolved: Option<PathBuf>,
}

impl LaunchSpec {
    /// The PATH the child gets and the lookup used.
    pub fn path(&self, os: TargetOs) -> &str {
        env::get(&self.env, os, "PATH").unwrap_or_default()
    }

    /// The command line for people: the program, then `raw_args` verbatim, or each argument
    /// quoted with `"` when it holds a space or a quote. On Windows the spawned line quotes the
    /// program too, which changes nothing for cmd.exe.
    pub fn display_line(&self) -> String {
        let show = |s: &str| {
            if s.is_empty() || s.contains([' ', '"', '\t']) {
                format!("\"{}\"", s.replace('"', "\\\""))
            } else {
                s.to_owned()
            }
        };
        let mut line = show(&self.program.display().to_string());
        match &self.raw_args {
            Some(raw) => {
                line.push(' ');
                line.push_str(raw);
            }
            None => {
                for a in &self.args {
                    line.push(' ');
                    line.push_str(&show(a));
                }
            }
        }
        line
    }
}

/// A planned launch and, when it cannot start, why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// The command that would run.
    pub spec: LaunchSpec,
    /// The first problem that stops it from starting.
    pub error: Option<LaunchError>,
}

impl Launch {
    /// The spec, or the problem that stops it from starting.
    ///
    /// # Errors
    /// The [`LaunchError`] found while planning.
    pub fn into_result(self) -> Result<LaunchSpec, LaunchError> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.spec),
        }
    }
}

/// Why a stdio server cannot be launched.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum LaunchError {
    /// The command is empty.
    #[error("field \"command\" is empty")]
    EmptyCommand,
    /// The program was not found on the PATH the child would see.
    #[error("command \"{command}\" not found on PATH ({path})")]
    NotFound {
        /// The command as configured.
        command: String,
        /// The PATH searched.
        path: String,
    },
    /// The program path does not exist.
    #[error("command \"{command}\" does not exist")]
    Missing {
        /// The command as configured.
        command: String,
    },
    /// `cwd` does not exist or is not a directory.
    #[error("field \"cwd\": directory {cwd} does not exist")]
    Cwd {
        /// The configured directory.
        cwd: PathBuf,
    },
    /// An OS name that is not `windows`, `macos` or `linux`.
    #[error("unknown OS \"{os}\" (expected windows, macos or linux)")]
    UnknownOs {
        /// What was given.
        os: String,
    },
}

/// Plans the launch of `cfg` (already `${VAR}`-expanded) on `host`. Pure: it only asks
/// `host.lookup`.
///
/// The plan is complete even when the program is missing (`program` is then the command as
/// written), so it can be shown; `error` holds the first problem: empty command, missing `cwd`,
/// command not found.
pub fn plan(cfg: &StdioConfig, host: &Host<'_>) -> Launch {
    let os = host.os;
    let mut env = env::minimal(os, host.vars, &cfg.env);
    let path_source = if env::get(&cfg.env, os, "PATH").is_some() {
        PathSource::Entry
    } else if let (Some(gui), false) = (host.gui_path, os == TargetOs::Windows) {
        let mut parts = env::split_path(os, env::get(&env, os, "PATH").unwrap_or_default());
        parts.extend(gui.entries.iter().cloned());
        parts.extend(gui.tool_dirs.iter().cloned());
        env::set(&mut env, os, "PATH", env::join_path(os, parts));
        PathSource::Gui {
            shell: gui.shell.clone(),
            fallback: gui.fallback.clone(),
        }
    } else {
        PathSource::Process
    };
    let path = env::get(&env, os, "PATH").unwrap_or_default().to_owned();

    let mut error = None;
    let cwd = cfg.cwd.clone().filter(|dir| !dir.as_os_str().is_empty());
    if let Some(dir) = &cwd
        && !host.lookup.is_dir(dir)
    {
        error = Some(LaunchError::Cwd { cwd: dir.clone() });
    }

    let command = cfg.command.trim();
    let resolved = if command.is_empty() {
        error.get_or_insert(LaunchError::EmptyCommand);
        None
    } else {
        let base = cwd.as_deref().unwrap_or(host.base_dir);
        let found = host.lookup.find(command, &path, base);
        if found.is_none() && error.is_none() {
            error = Some(if has_separator(os, command) {
                LaunchError::Missing {
                    command: command.to_owned(),
                }
            } else {
                LaunchError::NotFound {
                    command: command.to_owned(),
                    path: path.clone(),
                }
            });
        }
        found
    };

    let wrapped = (os == TargetOs::Windows && !command.is_empty())
        .then(|| windows::wrap(command, &cfg.args, resolved.as_deref(), &cfg.env, host.vars))
        .flatten();
    let (program, args, raw_args) = match wrapped {
        Some(w) => (PathBuf::from(w.comspec), w.args, Some(w.raw)),
        None => (
            resolved.clone().unwrap_or_else(|| PathBuf::from(command)),
            cfg.args.clone(),
            None,
        ),
    };
    Launch {
        spec: LaunchSpec {
            program,
            args,
            raw_args,
            env,
            cwd,
            path_source,
            resolved,
        },
        error,
    }
}

/// Whether `command` names a path rather than a program to search for.
fn has_separator(os: TargetOs, command: &str) -> bool {
    match os {
        TargetOs::Windows => command.contains(['\\', '/']),
        TargetOs::Linux | TargetOs::Macos => command.contains('/'),
    }
}

#[cfg(test)]
mod tests;
