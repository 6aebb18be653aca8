//! Saving `config.json` atomically (DESIGN §3).
//!
//! Save strategy: the file may hold secrets and may be edited by hand, so a save must never leave
//! it half-written, world-readable, or replace the user's unparsable edits. A save refuses when
//! the existing file is not JSON (unless [`Overwrite::Force`]); the write itself is
//! [`crate::io::atomic::write_atomic`] with [`Mode::Private`] (a temp file in the same
//! directory, 0600, fsynced; the previous file kept as `config.json.bak`; a rename; the
//! directory fsynced; a missing directory created 0700). A crash leaves either the old or the
//! new file. Rejected: writing in place (torn file on crash).

use std::fs;
use std::io;
use std::path::Path;

use serde_json::Value;

use super::ConfigError;
use super::error::json_type;
use super::normalize::normalize_document;
use super::parse::syntax_error;
use crate::io::atomic::{Backup, Mode, write_atomic};

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
/// Unless `overwrite` is [`Overwrite::Force`], refuses if the existing file is not JSON; then
/// writes with [`crate::io::atomic::write_atomic`] ([`Mode::Private`]: 0600, its steps are
/// listed there).
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
    match fs::read(path) {
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
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(ConfigError::io(path, "read", &e)),
    }
    write_atomic(path, text.as_bytes(), Mode::Private, Backup::Keep)
        .map_err(|e| ConfigError::io(&e.path, e.step, &e.source))
}

#[cfg(all(test, unix))]
mod crash;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{default_document, load};
    use crate::io::atomic::backup_path;
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
