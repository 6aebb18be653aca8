//! Edits of `config.json` made by the desktop window: add or replace a server entry, remove
//! one, replace the SSRF whitelist, import. Each edit reads the raw document, validates the
//! change, saves atomically ([`config::save_atomic`], so the previous file stays as `.bak` and
//! an unparsable file is never overwritten) and returns the reloaded [`Config`] for
//! `Hub::reload`, which restarts only what changed.
//!
//! Validation uses the same parser as loading, so the window shows the error the CLI would.

use std::path::Path;

use serde_json::{Map, Value};

use crate::config::{self, Config, ConfigError, SsrfWhitelist};

/// Why an edit was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EditError {
    /// The server name is empty or has characters the config cannot take.
    #[error("server name \"{name}\": {message}")]
    Name {
        /// The name given.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// The entry does not validate; the error names the field.
    #[error(transparent)]
    Invalid(ConfigError),
    /// Some whitelist entries are not CIDRs; one error per bad entry, in order.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Whitelist(Vec<ConfigError>),
    /// No server has that name.
    #[error("no server named \"{name}\"")]
    UnknownServer {
        /// The name asked for.
        name: String,
    },
    /// A server with that name exists and replacing was not asked for.
    #[error("a server named \"{name}\" already exists")]
    Exists {
        /// The name.
        name: String,
    },
    /// Loading or saving the file failed.
    #[error(transparent)]
    File(ConfigError),
}

/// Checks that `entry` is a valid server entry under `name`, exactly as loading would.
///
/// # Errors
/// [`EditError::Name`] for a blank name or one with control characters; [`EditError::Invalid`]
/// naming the field otherwise.
pub fn validate_entry(name: &str, entry: &Value) -> Result<(), EditError> {
    let trimmed = name.trim();
    if trimmed.is_empty() || trimmed != name || name.chars().any(char::is_control) {
        return Err(EditError::Name {
            name: name.to_owned(),
            message: "must be non-empty, without surrounding spaces or control characters".into(),
        });
    }
    let mut servers = Map::new();
    servers.insert(name.to_owned(), entry.clone());
    let doc = Value::Object(Map::from_iter([(
        "mcpServers".to_owned(),
        Value::Object(servers),
    )]));
    let cfg = config::parse(&doc.to_string(), Path::new("entry")).map_err(EditError::Invalid)?;
    match cfg.servers.into_iter().next().map(|s| s.entry) {
        Some(Err(e)) => Err(EditError::Invalid(e)),
        _ => Ok(()),
    }
}

/// Applies `change` to the raw document at `path`, saves it atomically and returns the
/// reloaded config. A missing file starts from `{}`.
///
/// # Errors
/// The error of `change` (nothing is written), or [`EditError::File`].
pub fn update_file(
    path: &Path,
    change: impl FnOnce(&mut Value) -> Result<(), EditError>,
) -> Result<Config, EditError> {
    let mut doc = match config::load(path) {
        Ok(cfg) => cfg.raw,
        Err(ConfigError::Io {
            kind: std::io::ErrorKind::NotFound,
            ..
        }) => Value::Object(Map::new()),
        Err(e) => return Err(EditError::File(e)),
    };
    change(&mut doc)?;
    config::save_atomic(path, &doc).map_err(EditError::File)?;
    config::load(path).map_err(EditError::File)
}

fn servers_mut(doc: &mut Value) -> &mut Map<String, Value> {
    if !doc.is_object() {
        *doc = Value::Object(Map::new());
    }
    let top = match doc {
        Value::Object(top) => top,
        _ => unreachable!("made an object above"),
    };
    let servers = top
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()));
    if !servers.is_object() {
        *servers = Value::Object(Map::new());
    }
    match servers {
        Value::Object(m) => m,
        _ => unreachable!("made an object above"),
    }
}

/// Adds server `name` with `entry` (replacing an existing one only when `replace`).
///
/// # Errors
/// As [`validate_entry`], and [`EditError::Exists`].
pub fn set_server(
    doc: &mut Value,
    name: &str,
    entry: Value,
    replace: bool,
) -> Result<(), EditError> {
    validate_entry(name, &entry)?;
    let servers = servers_mut(doc);
    if !replace && servers.contains_key(name) {
        return Err(EditError::Exists {
            name: name.to_owned(),
        });
    }
    servers.insert(name.to_owned(), entry);
    Ok(())
}

/// Removes server `name`, keeping the order of the others.
///
/// # Errors
/// [`EditError::UnknownServer`].
pub fn remove_server(doc: &mut Value, name: &str) -> Result<(), EditError> {
    servers_mut(doc)
        .shift_remove(name)
        .map(|_| ())
        .ok_or_else(|| EditError::UnknownServer {
            name: name.to_owned(),
        })
}

/// Replaces `ssrfWhitelist` with `entries` (trimmed, blank ones dropped).
///
/// # Errors
/// [`EditError::Whitelist`] listing every invalid entry; nothing changes then.
pub fn set_whitelist(doc: &mut Value, entries: &[String]) -> Result<(), EditError> {
    let list: Vec<Value> = entries
        .iter()
        .map(|e| e.trim())
        .filter(|e| !e.is_empty())
        .map(|e| Value::String(e.to_owned()))
        .collect();
    let value = Value::Array(list);
    let parsed = SsrfWhitelist::from_value(Some(&value));
    if !parsed.errors.is_empty() {
        return Err(EditError::Whitelist(parsed.errors));
    }
    if !doc.is_object() {
        *doc = Value::Object(Map::new());
    }
    if let Value::Object(top) = doc {
        top.insert("ssrfWhitelist".into(), value);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn entries_are_validated_like_loading_does() {
        let cases = [
            ("ok", json!({"command": "x"}), None),
            ("", json!({"command": "x"}), Some("server name")),
            (" a", json!({"command": "x"}), Some("server name")),
            ("a", json!({"args": ["x"]}), Some("server \"a\"")),
            (
                "a",
                json!({"type": "stdio", "command": 3}),
                Some("\"command\""),
            ),
            ("a", json!({"url": "ftp://x"}), Some("\"url\"")),
        ];
        for (name, entry, want) in cases {
            let got = validate_entry(name, &entry);
            match want {
                None => assert_eq!(got, Ok(()), "{name} {entry}"),
                Some(w) => {
                    let msg = got.unwrap_err().to_string();
                    assert!(msg.contains(w), "{name} {entry}: {msg}");
                }
            }
        }
    }

    #[test]
    fn set_remove_and_whitelist_edit_the_document_in_place() {
        let mut doc = json!({"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}, "x": 1});
        set_server(&mut doc, "c", json!({"command": "c"}), false).unwrap();
        assert!(matches!(
            set_server(&mut doc, "a", json!({"command": "z"}), false),
            Err(EditError::Exists { .. })
        ));
        set_server(&mut doc, "a", json!({"command": "z"}), true).unwrap();
        remove_server(&mut doc, "b").unwrap();
        assert!(remove_server(&mut doc, "b").is_err());
        let names: Vec<_> = doc["mcpServers"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(names, ["a", "c"]);
        assert_eq!(doc["mcpServers"]["a"]["command"], "z");
        assert_eq!(doc["x"], 1);

        let bad = set_whitelist(
            &mut doc,
            &["10.0.0.0/8".into(), "nope".into(), "1.2.3.4/99".into()],
        );
        match bad {
            Err(EditError::Whitelist(errors)) => assert_eq!(errors.len(), 2),
            other => panic!("{other:?}"),
        }
        assert!(doc.get("ssrfWhitelist").is_none());
        set_whitelist(&mut doc, &[" 127.0.0.1 ".into(), String::new()]).unwrap();
        assert_eq!(doc["ssrfWhitelist"], json!(["127.0.0.1"]));
    }

    #[test]
    fn update_file_saves_atomically_with_a_backup_and_returns_the_new_config() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        let cfg = update_file(&path, |d| {
            set_server(d, "t", json!({"command": "x"}), false)
        })
        .unwrap();
        assert_eq!(cfg.servers.len(), 1);
        let cfg = update_file(&path, |d| {
            set_server(d, "u", json!({"command": "y"}), false)
        })
        .unwrap();
        assert_eq!(cfg.servers.len(), 2);
        assert!(dir.path().join("config.json.bak").exists());
        let refused = update_file(&path, |d| set_server(d, "", json!({}), false));
        assert!(refused.is_err());
        assert_eq!(config::load(&path).unwrap().servers.len(), 2);
        std::fs::write(&path, "{ broken").unwrap();
        assert!(matches!(
            update_file(&path, |_| Ok(())),
            Err(EditError::File(_))
        ));
    }
}
