//! Reading `config.json`, and creating it with a default on first run (DESIGN §3).

use std::fs;
use std::io;
use std::path::Path;

use serde_json::{Value, json};

use super::parse::parse;
use super::save::save_atomic;
use super::{Config, ConfigError};

/// The config written on first run: one stdio server `demo` running our own `demo-server`
/// subcommand through the built-in `${MCP_COMPANION_EXE}`.
pub fn default_document() -> Value {
    json!({
        "mcpServers": {
            "demo": {
                "type": "stdio",
                "command": "${MCP_COMPANION_EXE}",
                "args": ["demo-server"]
            }
        }
    })
}

/// Reads and [`parse`]s the file at `path`.
///
/// # Errors
/// [`ConfigError::Io`] (kind `NotFound` when absent) and the file-level errors of [`parse`].
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let text = fs::read_to_string(path).map_err(|e| ConfigError::io(path, "read", &e))?;
    parse(&text, path)
}

/// Loads `path`, first writing [`default_document`] there if no file exists and `path` is the
/// default config path ([`super::is_default_config_path`]); the flag is true when the file was
/// created. A missing file elsewhere is an error: a mistyped `--config` must not create one.
///
/// An existing file is never replaced, even if it does not parse (that is an error).
///
/// # Errors
/// [`ConfigError::NotCreated`] for a missing file at another path; as [`load`] and
/// [`save_atomic`].
pub fn load_or_init(path: &Path) -> Result<(Config, bool), ConfigError> {
    load_or_init_at(path, super::is_default_config_path(path))
}

/// [`load_or_init`] with whether `path` may be created passed in (testable without the OS
/// config dir).
fn load_or_init_at(path: &Path, may_create: bool) -> Result<(Config, bool), ConfigError> {
    match load(path) {
        Err(ConfigError::Io {
            kind: io::ErrorKind::NotFound,
            ..
        }) if !may_create => Err(ConfigError::NotCreated {
            path: path.to_owned(),
            default: super::default_config_path().map_or_else(
                |_| "(none on this system)".to_owned(),
                |p| p.display().to_string(),
            ),
        }),
        Err(ConfigError::Io {
            kind: io::ErrorKind::NotFound,
            ..
        }) => {
            save_atomic(path, &default_document())?;
            tracing::info!(path = %path.display(), "created default config");
            Ok((load(path)?, true))
        }
        other => other.map(|c| (c, false)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &Path) -> String {
        fs::read_to_string(path).unwrap()
    }

    #[test]
    fn load_or_init_creates_the_default_config_once() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("sub").join("config.json");
        let (cfg, created) = load_or_init_at(&path, true).unwrap();
        assert!(created);
        assert_eq!(cfg.raw, default_document());
        let demo = cfg.server("demo").unwrap().entry.clone().unwrap();
        assert_eq!(demo.transport_name(), "stdio");
        let expanded = demo.expand_from_env().unwrap();
        let exe = std::env::current_exe().unwrap();
        assert_eq!(
            expanded.transport,
            crate::config::TransportConfig::Stdio(crate::config::StdioConfig {
                command: exe.to_str().unwrap().to_owned(),
                args: vec!["demo-server".into()],
                env: Default::default(),
                cwd: None,
            })
        );
        assert!(
            read(&path).contains("${MCP_COMPANION_EXE}"),
            "saved unexpanded"
        );
        let (_, created) = load_or_init_at(&path, true).unwrap();
        assert!(!created);
    }

    #[test]
    fn a_missing_file_that_is_not_the_default_path_is_not_created() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("typo.json");
        assert!(!crate::config::is_default_config_path(&path));
        let err = load_or_init(&path).unwrap_err();
        assert!(
            matches!(&err, ConfigError::NotCreated { path: p, .. } if *p == path),
            "{err}"
        );
        assert!(err.to_string().contains("does not exist"), "{err}");
        assert!(!path.exists());
    }

    #[test]
    fn load_or_init_never_replaces_a_broken_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("config.json");
        fs::write(&path, "{oops").unwrap();
        assert!(matches!(
            load_or_init(&path),
            Err(ConfigError::Syntax {
                line: 1,
                column: 2,
                ..
            })
        ));
        assert_eq!(read(&path), "{oops");
    }

    #[test]
    fn loading_a_missing_file_is_an_io_not_found_error() {
        let tmp = tempfile::tempdir().unwrap();
        let err = load(&tmp.path().join("none.json")).unwrap_err();
        assert!(matches!(
            err,
            ConfigError::Io {
                kind: io::ErrorKind::NotFound,
                operation: "read",
                ..
            }
        ));
        assert!(err.to_string().starts_with("could not read "), "{err}");
    }
}
