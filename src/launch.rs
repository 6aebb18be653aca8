//! Building the exact command a stdio server is spawned with (DESIGN §7, §8).
//!
//! The problem: a child that inherits the companion's whole environment sees its secrets, and a
//! child started from a desktop session may not find `npx` or `uvx` at all. So the child gets a
//! minimal environment (the variables in [`BASE_ENV`]) plus its entry's `env`, the program is
//! resolved against the PATH the child will see, and `cwd` is checked before spawning so that a
//! typo gives a clear error rather than "No such file or directory".
//!
//! [`plan`] is pure apart from file-system lookups, so it is unit-tested on every host.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::config::StdioConfig;

/// Variables copied from the companion's environment into every child, when set.
#[cfg(not(windows))]
pub const BASE_ENV: &[&str] = &["PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG"];
/// Variables copied from the companion's environment into every child, when set.
#[cfg(windows)]
pub const BASE_ENV: &[&str] = &[
    "APPDATA",
    "COMSPEC",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PATHEXT",
    "PROCESSOR_ARCHITECTURE",
    "ProgramData",
    "ProgramFiles",
    "ProgramFiles(x86)",
    "SystemDrive",
    "SystemRoot",
    "TEMP",
    "TMP",
    "USERNAME",
    "USERPROFILE",
    "windir",
];

/// Everything needed to spawn one stdio server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchSpec {
    /// The program to execute: an absolute path after PATH resolution.
    pub program: PathBuf,
    /// Arguments, passed through unchanged.
    pub args: Vec<String>,
    /// The child's complete environment (the child inherits nothing else).
    pub env: BTreeMap<String, String>,
    /// Working directory, checked to exist.
    pub cwd: Option<PathBuf>,
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
}

/// Plans the launch of `cfg` (already `${VAR}`-expanded) given the companion's environment.
///
/// PATH for the lookup is the entry's own `env.PATH` when set, else the companion's.
///
/// # Errors
/// [`LaunchError`] when the command is empty or not found, or `cwd` is missing.
pub fn plan(
    cfg: &StdioConfig,
    parent_env: &dyn Fn(&str) -> Option<String>,
) -> Result<LaunchSpec, LaunchError> {
    if cfg.command.trim().is_empty() {
        return Err(LaunchError::EmptyCommand);
    }
    let mut env: BTreeMap<String, String> = BASE_ENV
        .iter()
        .filter_map(|k| parent_env(k).map(|v| ((*k).to_owned(), v)))
        .collect();
    env.extend(cfg.env.iter().map(|(k, v)| (k.clone(), v.clone())));

    let cwd = match &cfg.cwd {
        Some(dir) if !dir.as_os_str().is_empty() => {
            if !dir.is_dir() {
                return Err(LaunchError::Cwd { cwd: dir.clone() });
            }
            Some(dir.clone())
        }
        _ => None,
    };

    let program = resolve_program(
        &cfg.command,
        env.get("PATH").map(String::as_str),
        cwd.as_deref(),
    )?;
    Ok(LaunchSpec {
        program,
        args: cfg.args.clone(),
        env,
        cwd,
    })
}

/// Resolves `command` the way the OS would for the child: a path (with a separator) is taken
/// relative to `cwd`; a bare name is searched on `path_var`.
fn resolve_program(
    command: &str,
    path_var: Option<&str>,
    cwd: Option<&Path>,
) -> Result<PathBuf, LaunchError> {
    let as_path = Path::new(command);
    if as_path.components().count() > 1 || as_path.is_absolute() {
        let full = match cwd {
            Some(dir) if as_path.is_relative() => dir.join(as_path),
            _ => as_path.to_path_buf(),
        };
        return if full.exists() {
            Ok(full)
        } else {
            Err(LaunchError::Missing {
                command: command.to_owned(),
            })
        };
    }
    let search = path_var.unwrap_or_default();
    let base = cwd
        .map(Path::to_path_buf)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("/"));
    which::which_in(command, Some(search), base).map_err(|_| LaunchError::NotFound {
        command: command.to_owned(),
        path: search.to_owned(),
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn stdio(command: &str) -> StdioConfig {
        StdioConfig {
            command: command.to_owned(),
            args: vec!["a b".into(), "--x".into()],
            env: BTreeMap::from([("FOO".to_owned(), "bar".to_owned())]),
            cwd: None,
        }
    }

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn child_gets_only_base_variables_plus_entry_env() {
        let parent = env_of(&[
            ("PATH", "/usr/bin:/bin"),
            ("HOME", "/home/u"),
            ("AWS_SECRET_ACCESS_KEY", "s3cr3t"),
        ]);
        let spec = plan(&stdio("sh"), &parent).expect("plan");
        assert_eq!(spec.env.get("HOME").map(String::as_str), Some("/home/u"));
        assert_eq!(spec.env.get("FOO").map(String::as_str), Some("bar"));
        assert!(!spec.env.contains_key("AWS_SECRET_ACCESS_KEY"));
        assert!(spec.program.is_absolute(), "{:?}", spec.program);
        assert_eq!(spec.args, vec!["a b", "--x"]);
    }

    #[test]
    fn entry_path_is_used_for_lookup() {
        let mut cfg = stdio("definitely-not-a-real-program-xyz");
        cfg.env.insert("PATH".into(), "/nonexistent-dir".into());
        let err = plan(&cfg, &env_of(&[("PATH", "/usr/bin:/bin")])).expect_err("not found");
        assert_eq!(
            err,
            LaunchError::NotFound {
                command: "definitely-not-a-real-program-xyz".into(),
                path: "/nonexistent-dir".into()
            }
        );
    }

    #[test]
    fn missing_cwd_is_a_clear_error() {
        let mut cfg = stdio("sh");
        cfg.cwd = Some("/no/such/dir".into());
        let err = plan(&cfg, &env_of(&[("PATH", "/usr/bin:/bin")])).expect_err("cwd");
        assert_eq!(
            err.to_string(),
            "field \"cwd\": directory /no/such/dir does not exist"
        );
    }

    #[test]
    fn explicit_paths_are_checked_not_searched() {
        let err = plan(&stdio("/no/such/program"), &env_of(&[("PATH", "/usr/bin")]))
            .expect_err("missing");
        assert!(matches!(err, LaunchError::Missing { .. }));
        let ok = plan(&stdio("/bin/sh"), &env_of(&[])).expect("absolute");
        assert_eq!(ok.program, PathBuf::from("/bin/sh"));
    }

    #[test]
    fn empty_command_is_rejected() {
        assert_eq!(
            plan(&stdio("  "), &env_of(&[])),
            Err(LaunchError::EmptyCommand)
        );
    }
}
