//! Where `config.json` lives, reading it, creating it on first run, and saving it atomically
//! (DESIGN §3).
//!
//! Save strategy: the file may hold secrets and may be edited by hand, so a save must never leave
//! it half-written, world-readable, or replace the user's unparsable edits. Steps: create the
//! directory (mode 0700 on unix) if missing; refuse if the existing file is not JSON (unless
//! [`Overwrite::Force`]); write a temp file in the same directory (mode 0600 on unix) and fsync
//! it; hard-link the current file to `config.json.bak` (copy if linking fails); rename the temp
//! file over `config.json`; fsync the directory on unix. A crash leaves either the old or the
//! new file, plus possibly a stray `.config.json.tmp-*`. Rejected: writing in place (torn file
//! on crash) and `tempfile::persist` (a dependency for ten lines).

use std::ffi::OsStr;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::{Value, json};

use super::error::json_type;
use super::normalize::normalize_document;
use super::parse::{parse, syntax_error};
use super::{Config, ConfigError};

/// The environment variable that overrides the default config path (below `--config`).
pub const CONFIG_ENV_VAR: &str = "MCP_COMPANION_CONFIG";

const APP_DIR: &str = "mcp-companion";
const FILE_NAME: &str = "config.json";

/// Whether [`save_atomic_with`] may replace an existing file that is not valid JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overwrite {
    /// Refuse with [`ConfigError::RefuseOverwrite`]: the file holds edits we could not read.
    IfValid,
    /// Replace it anyway (it is still kept as `config.json.bak`). For an explicit user choice.
    Force,
}

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

/// The config path to use: `explicit` (CLI `--config`), else `$MCP_COMPANION_CONFIG` if set and
/// non-empty, else [`default_config_path`].
///
/// # Errors
/// [`ConfigError::NoConfigDir`] when neither override is given and there is no config dir.
pub fn resolve_config_path(explicit: Option<&Path>) -> Result<PathBuf, ConfigError> {
    resolve_config_path_from(
        explicit,
        std::env::var_os(CONFIG_ENV_VAR).as_deref(),
        dirs::config_dir(),
    )
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

/// Loads `path`, first writing [`default_document`] there if no file exists; the flag is true
/// when the file was created.
///
/// An existing file is never replaced, even if it does not parse (that is an error).
///
/// # Errors
/// As [`load`] and [`save_atomic`].
pub fn load_or_init(path: &Path) -> Result<(Config, bool), ConfigError> {
    match load(path) {
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

/// [`save_atomic_with`] with [`Overwrite::IfValid`]: never replaces a file that is not JSON.
///
/// # Errors
/// As [`save_atomic_with`].
pub fn save_atomic(path: &Path, doc: &Value) -> Result<(), ConfigError> {
    save_atomic_with(path, doc, Overwrite::IfValid)
}

/// Writes `doc` (normalised by [`normalize_document`], pretty-printed, key order kept) to
/// `path` atomically, keeping the previous file as `<name>.bak`, by the steps in the module doc.
///
/// `doc` must be the raw document ([`Config::raw`] or an edit of it), never an expanded config.
/// If `path` is a symlink, its target is replaced, so the link survives.
///
/// # Errors
/// [`ConfigError::Shape`] if `doc` is not an object; [`ConfigError::RefuseOverwrite`] if the
/// existing file is not JSON and `overwrite` is [`Overwrite::IfValid`]; [`ConfigError::Io`]
/// naming the failed step. On error the original file is untouched.
pub fn save_atomic_with(path: &Path, doc: &Value, overwrite: Overwrite) -> Result<(), ConfigError> {
    if !doc.is_object() {
        return Err(ConfigError::Shape {
            path: path.to_owned(),
            what: "the top level",
            expected: "a JSON object",
            found: json_type(doc),
        });
    }
    let path = &resolve_symlink(path)?;
    let mut text = serde_json::to_string_pretty(&normalize_document(doc)).map_err(|e| {
        ConfigError::io(
            path,
            "encode JSON for",
            &io::Error::new(io::ErrorKind::InvalidData, e),
        )
    })?;
    text.push('\n');

    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    create_private_dir(dir)?;

    let existed = match fs::read(path) {
        Ok(bytes) => {
            if overwrite == Overwrite::IfValid
                && let Err(e) = serde_json::from_slice::<Value>(&bytes)
            {
                let e = syntax_error(&e, path);
                if let ConfigError::Syntax { line, column, .. } = e {
                    return Err(ConfigError::RefuseOverwrite {
                        path: path.to_owned(),
                        line,
                        column,
                    });
                }
            }
            true
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => false,
        Err(e) => return Err(ConfigError::io(path, "read", &e)),
    };

    let temp = write_temp(dir, path, text.as_bytes())?;
    let result = (|| {
        if existed {
            backup(path)?;
        }
        fs::rename(&temp, path).map_err(|e| ConfigError::io(path, "rename temp file onto", &e))
    })();
    if result.is_err() {
        // Best effort: the error already names the failed step.
        let _ = fs::remove_file(&temp);
    }
    result?;
    sync_dir(dir)
}

fn resolve_symlink(path: &Path) -> Result<PathBuf, ConfigError> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            fs::canonicalize(path).map_err(|e| ConfigError::io(path, "resolve symlink", &e))
        }
        _ => Ok(path.to_owned()),
    }
}

fn create_private_dir(dir: &Path) -> Result<(), ConfigError> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(|e| ConfigError::io(dir, "create directory", &e))
}

/// Writes `bytes` to a new `.NAME.tmp-PID-N` in `dir` (mode 0600 on unix) and fsyncs it.
fn write_temp(dir: &Path, path: &Path, bytes: &[u8]) -> Result<PathBuf, ConfigError> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let name = path
        .file_name()
        .map_or_else(|| FILE_NAME.into(), |n| n.to_string_lossy());
    let temp = dir.join(format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options
        .open(&temp)
        .map_err(|e| ConfigError::io(&temp, "create temp file", &e))?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    if let Err(e) = written {
        drop(file);
        let _ = fs::remove_file(&temp);
        return Err(ConfigError::io(&temp, "write temp file", &e));
    }
    Ok(temp)
}

/// The backup path: `config.json` → `config.json.bak`.
fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or(OsStr::new(FILE_NAME)).to_owned();
    name.push(".bak");
    path.with_file_name(name)
}

fn backup(path: &Path) -> Result<(), ConfigError> {
    let bak = backup_path(path);
    match fs::remove_file(&bak) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            return Err(ConfigError::io(&bak, "remove old backup", &e));
        }
        _ => {}
    }
    if fs::hard_link(path, &bak).is_ok() {
        return Ok(());
    }
    fs::copy(path, &bak)
        .map(|_| ())
        .map_err(|e| ConfigError::io(&bak, "write backup", &e))
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> Result<(), ConfigError> {
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| ConfigError::io(dir, "sync directory", &e))
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> Result<(), ConfigError> {
    // Windows cannot open a directory as a file; MoveFileEx with replace is durable enough.
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &Path) -> String {
        fs::read_to_string(path).unwrap()
    }

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

    #[test]
    fn save_creates_private_dir_and_file_then_keeps_a_backup() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("new").join("mcp-companion");
        let path = dir.join("config.json");
        save_atomic(&path, &json!({"mcpServers": {}, "v": 1})).unwrap();
        assert!(
            !backup_path(&path).exists(),
            "nothing to back up on first save"
        );
        save_atomic(&path, &json!({"mcpServers": {}, "v": 2})).unwrap();
        assert!(read(&backup_path(&path)).contains("\"v\": 1"));
        assert!(read(&path).contains("\"v\": 2"));
        assert!(read(&path).ends_with("}\n"));
        let names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "no temp file left: {names:?}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o600);
            assert_eq!(mode(&dir), 0o700);
        }
    }

    #[test]
    fn save_refuses_to_overwrite_an_unparsable_file_unless_forced() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("config.json");
        fs::write(&path, "{\n  \"mcpServers\": {,\n}").unwrap();
        let err = save_atomic(&path, &default_document()).unwrap_err();
        assert_eq!(
            err,
            ConfigError::RefuseOverwrite {
                path: path.clone(),
                line: 2,
                column: 18
            }
        );
        assert_eq!(read(&path), "{\n  \"mcpServers\": {,\n}", "file untouched");
        save_atomic_with(&path, &default_document(), Overwrite::Force).unwrap();
        assert_eq!(
            read(&backup_path(&path)),
            "{\n  \"mcpServers\": {,\n}",
            "broken file kept as .bak"
        );
        assert!(load(&path).is_ok());
    }

    #[test]
    fn save_rejects_a_non_object_document() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("config.json");
        let err = save_atomic(&path, &json!([])).unwrap_err();
        assert!(
            matches!(err, ConfigError::Shape { found: "array", .. }),
            "{err:?}"
        );
        assert!(!path.exists());
    }

    #[test]
    fn round_trip_keeps_unknown_keys_order_and_references_and_writes_type() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("config.json");
        let text = r#"{"zeta": 1, "mcpServers": {"b": {"url": "https://h/sse", "headers": {"A": "${TOKEN}"}, "x-note": "keep"}, "a": {"type": "http", "url": "https://h/mcp"}, "c": {"command": "${HOME}/bin/s", "args": []}}, "ssrfWhitelist": ["10.1.2.3/8"], "alpha": {"nested": [1, 2]}}"#;
        fs::write(&path, text).unwrap();
        let cfg = load(&path).unwrap();
        assert_eq!(cfg.warnings.len(), 3);
        save_atomic(&path, &cfg.raw).unwrap();
        let saved: Value = serde_json::from_str(&read(&path)).unwrap();
        let want: Value = serde_json::from_str(r#"{"zeta": 1, "mcpServers": {"b": {"type": "sse", "url": "https://h/sse", "headers": {"A": "${TOKEN}"}, "x-note": "keep"}, "a": {"type": "streamableHttp", "url": "https://h/mcp"}, "c": {"type": "stdio", "command": "${HOME}/bin/s", "args": []}}, "ssrfWhitelist": ["10.1.2.3/8"], "alpha": {"nested": [1, 2]}}"#).unwrap();
        assert_eq!(saved.to_string(), want.to_string());
        let again = load(&path).unwrap();
        assert_eq!(
            again.valid_servers().collect::<Vec<_>>(),
            cfg.valid_servers().collect::<Vec<_>>()
        );
    }

    #[cfg(unix)]
    #[test]
    fn saving_through_a_symlink_replaces_the_target() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("real.json");
        let link = tmp.path().join("config.json");
        fs::write(&target, "{}").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        save_atomic(&link, &json!({"v": 1})).unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(read(&target).contains("\"v\": 1"));
    }

    #[test]
    fn load_or_init_creates_the_default_config_once() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("sub").join("config.json");
        let (cfg, created) = load_or_init(&path).unwrap();
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
        let (_, created) = load_or_init(&path).unwrap();
        assert!(!created);
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
