//! Where `config.json` lives (DESIGN §3): `--config`, then `$MCP_COMPANION_CONFIG`, then the OS
//! config dir.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::ConfigError;

/// The environment variable that overrides the default config path (below `--config`).
pub const CONFIG_ENV_VAR: &str = "MCP_COMPANION_CONFIG";

const APP_DIR: &str = "mcp-companion";
pub(crate) const FILE_NAME: &str = "config.json";

/// `<OS config dir>/mcp-companion/config.json`, e.g. `~/.config/mcp-companion/config.json` on
/// Linux.
///
/// # Errors
/// [`ConfigError::NoConfigDir`] when the OS reports no per-user config directory.
pub fn default_config_path() -> Result<PathBuf, ConfigError> {
    dirs::config_dir()
        .map(|d| d.join(APP_DIR).join(FILE_NAME))
        .ok_or(ConfigError::NoConfigDir)
}

/// Whether `path` is [`default_config_path`] (compared as absolute paths): the only config file
/// `serve` creates when it is missing ([`super::load_or_init`]).
pub fn is_default_config_path(path: &Path) -> bool {
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
    default_config_path().is_ok_and(|d| absolute(&d) == absolute(path))
}

/// The config path to use: `explicit` (CLI `--config`), else `$MCP_COMPANION_CONFIG` if set and
/// non-empty, else [`default_config_path`]; made absolute against the current directory.
///
/// # Errors
/// [`ConfigError::NoConfigDir`] when neither override is given and there is no config dir.
pub fn resolve_config_path(explicit: Option<&Path>) -> Result<PathBuf, ConfigError> {
    let path = resolve_config_path_from(
        explicit,
        std::env::var_os(CONFIG_ENV_VAR).as_deref(),
        dirs::config_dir(),
    )?;
    // Absolute from here on: the running companion reports it (`status`), and `reload` and
    // `doctor` run from other directories compare it with theirs.
    Ok(std::path::absolute(&path).unwrap_or(path))
}

/// [`resolve_config_path`] with the environment value and OS config dir passed in (testable
/// without touching the process environment).
///
/// # Errors
/// As [`resolve_config_path`].
pub fn resolve_config_path_from(
    explicit: Option<&Path>,
    env_value: Option<&OsStr>,
    config_dir: Option<PathBuf>,
) -> Result<PathBuf, ConfigError> {
    if let Some(p) = explicit {
        return Ok(p.to_owned());
    }
    if let Some(v) = env_value.filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(v));
    }
    config_dir
        .map(|d| d.join(APP_DIR).join(FILE_NAME))
        .ok_or(ConfigError::NoConfigDir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_path_precedence_is_explicit_then_env_then_default() {
        let default = "/cfg/mcp-companion/config.json";
        // (explicit, env value, OS has a config dir, expected path; None = NoConfigDir)
        let cases = [
            (Some("/x.json"), Some("/env.json"), true, Some("/x.json")),
            (Some("rel.json"), None, false, Some("rel.json")),
            (None, Some("/env.json"), true, Some("/env.json")),
            (None, Some(""), true, Some(default)),
            (None, None, true, Some(default)),
            (None, None, false, None),
        ];
        for (explicit, env, has_dir, want) in cases {
            let config_dir = has_dir.then(|| PathBuf::from("/cfg"));
            let got =
                resolve_config_path_from(explicit.map(Path::new), env.map(OsStr::new), config_dir);
            match want {
                Some(w) => assert_eq!(got, Ok(PathBuf::from(w)), "{explicit:?} {env:?}"),
                None => assert_eq!(got, Err(ConfigError::NoConfigDir)),
            }
        }
        if let Some(d) = dirs::config_dir() {
            assert_eq!(
                resolve_config_path(Some(Path::new("/x"))),
                Ok(PathBuf::from("/x"))
            );
            assert_eq!(
                default_config_path(),
                Ok(d.join("mcp-companion").join("config.json"))
            );
        }
    }
}
