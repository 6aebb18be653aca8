//! Edits of `config.json` (window, CLI, import, connect) and of other clients' JSON config
//! files, saved so that **only what the edit concerns changes**: every other entry, key, key
//! order, blank line and indentation stays byte for byte as the user wrote it. Each edit reads the file, applies a change to the parsed document, rewrites only the
//! bytes of the members that differ ([`rewrite_text`]), saves atomically
//! ([`config::save_text_atomic`]: the previous file stays as `.bak`, an unparsable file is
//! never overwritten) and, for `config.json`, returns the reloaded [`Config`] for
//! `Hub::reload`, which restarts only what changed.
//!
//! How to use it (one call per user action):
//!
//! | want | call |
//! |---|---|
//! | add / replace one server of `config.json` | `update_file(path, \|d\| set_server(d, name, entry, replace))` |
//! | remove one server | `update_file(path, \|d\| remove_server(d, name))` |
//! | set one value inside an entry (e.g. an `env` value) | `update_file(path, \|d\| set_path(d, &["mcpServers", name, "env", "KEY"], v))` |
//! | remove one value | `update_file(path, \|d\| { remove_path(d, &[..]); Ok(()) })` |
//! | the same in another client's file (`connect`) | [`update_json_file`] with [`set_path`] / [`remove_path`] |
//! | only the text, no file | [`rewrite_text`] |
//!
//! A new server entry gets an explicit `type` ([`config::normalize_entry`]); entries the edit
//! does not concern are never normalised. Validation uses the same parser as loading, so the
//! window shows the error the CLI would.

mod spans;
mod splice;
#[cfg(test)]
mod tests;

pub use splice::rewrite as rewrite_text;

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
    #[error(transparent)]
    UnknownServer(#[from] crate::config::UnknownServer),
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

/// Applies `change` to the raw document of `config.json` at `path`, saves only the bytes that
/// changed and returns the reloaded config. Holds the config's edit lock
/// (`<path>.lock`, [`crate::io::atomic::lock_beside`]) from the read through the save, so
/// concurrent edits in any process are applied one after the other, none lost. A missing file starts from `{}` and is written
/// pretty-printed.
///
/// # Errors
/// The error of `change` (nothing is written), or [`EditError::File`] when the file cannot be
/// read, is not a valid config document, or cannot be saved.
pub fn update_file(
    path: &Path,
    change: impl FnOnce(&mut Value) -> Result<(), EditError>,
) -> Result<Config, EditError> {
    // Held from the read to the rename: concurrent editors (two `policy` commands, the window
    // and an `always`, in any process) each apply their change to the other's result.
    let _locked = crate::io::atomic::lock_beside(path, crate::io::atomic::Mode::Private)
        .map_err(|e| EditError::File(ConfigError::io(&e.path, e.step, &e.source)))?;
    edit_file(
        path,
        |text| config::parse(text, path).map(|c| c.raw),
        change,
    )?;
    config::load(path).map_err(EditError::File)
}

/// [`update_file`] for any JSON file whose top level is an object (another client's config,
/// for `connect`): the same byte-preserving, atomic save; returns the document as saved.
///
/// # Errors
/// The error of `change` (nothing is written), or [`EditError::File`].
pub fn update_json_file(
    path: &Path,
    change: impl FnOnce(&mut Value) -> Result<(), EditError>,
) -> Result<Value, EditError> {
    edit_file(
        path,
        |text| serde_json::from_str(text).map_err(|e| config::syntax_error(&e, path)),
        change,
    )
}

fn edit_file(
    path: &Path,
    parse: impl FnOnce(&str) -> Result<Value, ConfigError>,
    change: impl FnOnce(&mut Value) -> Result<(), EditError>,
) -> Result<Value, EditError> {
    let mut bom = "";
    let text = match std::fs::read_to_string(path) {
        Ok(text) => match text.strip_prefix(config::BOM) {
            // Kept on save: the file stays as the editor that wrote it wants it.
            Some(rest) => {
                bom = config::BOM;
                Some(rest.to_owned())
            }
            None => Some(text),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(EditError::File(ConfigError::io(path, "read", &e))),
    };
    let mut doc = match &text {
        Some(text) => parse(text).map_err(EditError::File)?,
        None => Value::Object(Map::new()),
    };
    let before = doc.clone();
    change(&mut doc)?;
    if !doc.is_object() {
        return Err(EditError::File(ConfigError::Shape {
            path: path.to_owned(),
            what: "the top level",
            expected: "a JSON object",
            found: "something else",
        }));
    }
    let new_text = match &text {
        Some(_) if doc == before => return Ok(doc),
        Some(text) => rewrite_text(text, &doc),
        None => None,
    };
    let new_text = new_text.unwrap_or_else(|| {
        // A new file, or one the splicer could not vouch for: write the whole document.
        let mut pretty = serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "{}".into());
        pretty.push('\n');
        pretty
    });
    config::save_text_atomic(
        path,
        &(bom.to_owned() + &new_text),
        config::Overwrite::IfValid,
    )
    .map_err(EditError::File)?;
    Ok(doc)
}

/// Sets the value at `path` (object keys from the top) to `value`, creating missing objects on
/// the way and replacing non-objects in the way.
///
/// # Errors
/// Never today; `Result` so it composes with the other edits inside [`update_file`].
pub fn set_path(doc: &mut Value, path: &[&str], value: Value) -> Result<(), EditError> {
    let Some((last, parents)) = path.split_last() else {
        *doc = value;
        return Ok(());
    };
    let mut here = doc;
    for key in parents {
        here = object_mut(here)
            .entry((*key).to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    object_mut(here).insert((*last).to_owned(), value);
    Ok(())
}

/// Removes the value at `path`, keeping the order of its siblings; returns it, or `None` when
/// nothing is there.
pub fn remove_path(doc: &mut Value, path: &[&str]) -> Option<Value> {
    let (last, parents) = path.split_last()?;
    let mut here = doc;
    for key in parents {
        here = here.get_mut(*key)?;
    }
    here.as_object_mut()?.shift_remove(*last)
}

/// `value` as an object, replacing it with `{}` if it is anything else.
fn object_mut(value: &mut Value) -> &mut Map<String, Value> {
    if !value.is_object() {
        *value = Value::Object(Map::new());
    }
    match value {
        Value::Object(m) => m,
        _ => unreachable!("made an object above"),
    }
}

fn servers_mut(doc: &mut Value) -> &mut Map<String, Value> {
    let top = object_mut(doc);
    object_mut(
        top.entry("mcpServers")
            .or_insert_with(|| Value::Object(Map::new())),
    )
}

/// Adds server `name` with `entry` (replacing an existing one only when `replace`). The entry
/// gets an explicit `type` ([`config::normalize_entry`]).
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
    let mut entry = entry;
    if let Some(map) = entry.as_object_mut() {
        config::normalize_entry(map);
    }
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
        .ok_or_else(|| crate::config::UnknownServer::new(name).into())
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
    object_mut(doc).insert("ssrfWhitelist".into(), value);
    Ok(())
}

/// Sets the `toolPolicy` of `tool` (a name or glob) of server `server` to `policy`, or removes
/// that key for `None` (the tool then takes its default); the entry must exist.
///
/// # Errors
/// [`EditError::UnknownServer`]; [`EditError::Invalid`] when the key is not a valid glob.
pub fn set_tool_policy(
    doc: &mut Value,
    server: &str,
    tool: &str,
    policy: Option<config::Policy>,
) -> Result<(), EditError> {
    let entry = servers_mut(doc)
        .get_mut(server)
        .ok_or_else(|| crate::config::UnknownServer::new(server))?;
    match policy {
        Some(policy) => {
            set_path(
                entry,
                &["toolPolicy", tool],
                Value::String(policy.as_str().to_owned()),
            )?;
            if let Err(e) = config::parse_tool_policy(server, entry.get("toolPolicy")) {
                return Err(EditError::Invalid(e));
            }
        }
        None => {
            remove_path(entry, &["toolPolicy", tool]);
            if entry["toolPolicy"].as_object().is_some_and(Map::is_empty) {
                remove_path(entry, &["toolPolicy"]);
            }
        }
    }
    Ok(())
}
