//! Saving `config.json` atomically (DESIGN §3).
//!
//! Save strategy: the file may hold secrets and may be edited by hand, so a save must never leave
//! it half-written, world-readable, or replace the user's unparsable edits. Steps: create the
//! directory (mode 0700 on unix) if missing; refuse if the existing file is not JSON (unless
//! [`Overwrite::Force`]); write a temp file in the same directory (mode 0600 on unix) and fsync
//! it; hard-link the current file to `config.json.bak` (copy if linking fails); rename the temp
//! file over `config.json`; fsync the directory on unix. A crash leaves either the old or the
//! new file, plus possibly a stray `.config.json.tmp-*`, which the next save removes once the
//! process that wrote it is gone (unix; the temp name carries its pid). Rejected: writing in
//! place (torn file on crash) and `tempfile::persist` (a dependency for ten lines).

use std::ffi::OsStr;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::Value;

use super::ConfigError;
use super::error::json_type;
use super::normalize::normalize_document;
use super::parse::syntax_error;
use super::path::FILE_NAME;

/// Whether [`save_atomic_with`] may replace an existing file that is not valid JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overwrite {
    /// Refuse with [`ConfigError::RefuseOverwrite`]: the file holds edits we could not read.
    IfValid,
    /// Replace it anyway (it is still kept as `config.json.bak`). For an explicit user choice.
    Force,
}

/// [`save_atomic_with`] with [`Overwrite::IfValid`]: never replaces a file that is not JSON.
///
/// # Errors
/// As [`save_atomic_with`].
pub fn save_atomic(path: &Path, doc: &Value) -> Result<(), ConfigError> {
    save_atomic_with(path, doc, Overwrite::IfValid)
}

/// Writes `doc` (normalised by [`normalize_document`], pretty-printed, key order kept) to
/// `path` atomically, keeping the previous file as `<name>.bak`.
///
/// Steps: create the parent directory (0700 on unix) if missing; unless `overwrite` is
/// [`Overwrite::Force`], refuse if the existing file is not JSON; write and fsync a temp file
/// `.<name>.tmp-*` in the same directory (0600 on unix); hard-link (or copy) the existing file
/// to `<name>.bak`; rename the temp file over `path`; fsync the directory on unix.
///
/// `doc` must be the raw document ([`super::Config::raw`] or an edit of it), never an expanded config.
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
    let mut text = serde_json::to_string_pretty(&normalize_document(doc)).map_err(|e| {
        ConfigError::io(
            path,
            "encode JSON for",
            &io::Error::new(io::ErrorKind::InvalidData, e),
        )
    })?;
    text.push('\n');
    save_text_atomic(path, &text, overwrite)
}

/// Writes `text` to `path` with the steps of [`save_atomic_with`], byte for byte (no
/// normalisation). For edits that keep the user's formatting (`crate::manage::edit`).
///
/// # Errors
/// As [`save_atomic_with`]; the caller vouches that `text` is the JSON it means to save.
pub fn save_text_atomic(path: &Path, text: &str, overwrite: Overwrite) -> Result<(), ConfigError> {
    let path = &resolve_symlink(path)?;

    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    create_private_dir(dir)?;

    let existed = match fs::read(path) {
        Ok(bytes) => {
            if overwrite == Overwrite::IfValid
                && let Err(e) = serde_json::from_slice::<Value>(
                    bytes
                        .strip_prefix(super::parse::BOM.as_bytes())
                        .unwrap_or(&bytes),
                )
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

    sweep_stale_temps(dir, path);
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

/// Removes `.NAME.tmp-PID-N` files left by saves that were killed: those whose process is gone.
/// Best effort; a temp file of a save still running elsewhere is never touched.
fn sweep_stale_temps(dir: &Path, path: &Path) {
    let Some(name) = path.file_name() else { return };
    let prefix = format!(".{}.tmp-", name.to_string_lossy());
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !process_alive(pid) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    // SAFETY: kill(2) with signal 0 only checks whether the process exists.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    alive || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn process_alive(_pid: u32) -> bool {
    // No cheap check without more Windows APIs: keep every temp file.
    true
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

#[cfg(all(test, unix))]
mod crash;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{default_document, load};
    use serde_json::json;

    fn read(path: &Path) -> String {
        fs::read_to_string(path).unwrap()
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
}
