//! Connecting agents: writing our `bridge` command into another MCP client's own config file
//! (and removing it again). See [`clients`] for the clients, paths and entry shapes.
//!
//! Every write keeps the file's other bytes as they were (comments, formatting, unrelated
//! keys: JSONC is edited by byte spans, TOML with `toml_edit`, Goose's YAML by the lines of
//! our own entry, see [`goose`]), is atomic
//! ([`crate::io::atomic::write_atomic`]: temporary file + rename, the previous bytes kept as
//! `<file>.bak`, permissions kept) and idempotent; a file
//! that does not parse is never touched and the error says where it broke. `disconnect`
//! removes only our entry, so connect + disconnect gives back the original bytes. Refreshing
//! an entry that exists changes only its `command` and `args`: keys the person added stay. A
//! key written twice is edited where it appears last, the copy that `JSON.parse`-based
//! clients read (refusing would leave such a file unconnectable, and the first copy is dead
//! text to those clients anyway).
//!
//! Continue's file is ours alone ([`Client::own_file`]): `disconnect` deletes it once our
//! entry was all it held. The program an entry runs is chosen by [`stable`].
//!
//! An entry named [`ENTRY_NAME`] is ours when it runs `<program> bridge…` (its command's first
//! argument is `bridge`), wherever the program is: that is what we write, and a moved binary
//! still leaves an entry of ours. Any other entry of that name is the person's own: `connect`
//! refuses to overwrite it and `disconnect` to remove it ([`ConnectError::NotOurs`]), saying
//! what it runs.

pub mod clients;
pub mod codex;
pub mod goose;
pub mod json_edit;
pub mod jsonc;
pub mod location;
pub mod roots;
pub mod stable;
mod yaml_lines;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::io::atomic::{Backup, Mode, write_atomic};

pub use clients::{ALL, Client, Format};
pub use roots::{Os, Roots};

/// The key of our entry in every client's server list.
pub const ENTRY_NAME: &str = "mcp-companion";

/// What connect or disconnect did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    /// The file changed.
    Changed,
    /// Nothing to do (already connected / not connected).
    Unchanged,
}

/// Why a client's file could not be edited.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The file does not parse; nothing was written.
    #[error("{path}: does not parse ({reason}); it was not changed")]
    Parse {
        /// The file.
        path: PathBuf,
        /// Where it broke and why.
        reason: String,
    },
    /// The file has an entry named [`ENTRY_NAME`] that we did not write.
    #[error(
        "{path}: its entry \"{ENTRY_NAME}\" runs `{runs}`, which is not ours; it was left as it is (rename that entry, then connect again)"
    )]
    NotOurs {
        /// The file.
        path: PathBuf,
        /// What the entry runs (its command and arguments).
        runs: String,
    },
    /// Reading or writing failed.
    #[error("{path}: {reason}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        reason: String,
    },
}

/// One client as the window and `connect --list` show it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientStatus {
    /// `claude-desktop`, `cursor`…
    pub id: &'static str,
    /// Display name.
    pub label: &'static str,
    /// Its config file.
    pub path: PathBuf,
    /// Whether the client seems installed (its config dir or file exists).
    pub installed: bool,
    /// Whether our entry is in its file.
    pub connected: bool,
    /// Why the file could not be read, if so.
    pub error: Option<String>,
    /// The client's own permission setting the person needs ([`Client::note`]).
    pub note: Option<&'static str>,
}

fn read(path: &Path) -> Result<String, ConnectError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(ConnectError::Io {
            path: path.to_owned(),
            reason: e.to_string(),
        }),
    }
}

/// Splits off a UTF-8 byte order mark (Notepad writes one), to be put back on save.
fn split_bom(text: &str) -> (&str, &str) {
    match text.strip_prefix(crate::config::BOM) {
        Some(rest) => (crate::config::BOM, rest),
        None => ("", text),
    }
}

fn parse_error(path: &Path, reason: impl ToString) -> ConnectError {
    ConnectError::Parse {
        path: path.to_owned(),
        reason: reason.to_string(),
    }
}

/// Adds (or refreshes) our entry running `exe bridge` to `client`'s file at `path`.
///
/// # Errors
/// [`ConnectError`]; the file is unchanged then.
pub fn connect(client: Client, path: &Path, exe: &str) -> Result<Outcome, ConnectError> {
    connect_with(client, path, exe, &["bridge"])
}

/// [`connect`] with the entry running `exe` with `args` (`["bridge"]`, or
/// `["bridge", "--profile", NAME]`); `args[0]` must be `bridge`, so the entry stays ours.
///
/// # Errors
/// [`ConnectError`]; the file is unchanged then.
pub fn connect_with(
    client: Client,
    path: &Path,
    exe: &str,
    args: &[&str],
) -> Result<Outcome, ConnectError> {
    let file = read(path)?;
    let (bom, text) = split_bom(&file);
    refuse_theirs(client, path, text)?;
    let changed = match client.format() {
        Format::Json(at) => set_json_entry(text, at, &client.entry_with(exe, args))
            .map_err(|e| parse_error(path, e))?,
        Format::CodexToml => {
            codex::set_server(text, ENTRY_NAME, exe, args).map_err(|e| parse_error(path, e))?
        }
        Format::GooseYaml => {
            goose::set_extension(text, ENTRY_NAME, exe, args).map_err(|e| parse_error(path, e))?
        }
    };
    write_if_changed(path, changed.map(|t| bom.to_owned() + &t))
}

/// Writes our entry at `at`: a new one whole; in an existing object only `command` and `args`
/// (whichever our entry has), so keys the person added (`env`, timeouts, `trust`) stay.
fn set_json_entry(
    text: &str,
    at: &[&str],
    entry: &serde_json::Value,
) -> Result<Option<String>, json_edit::JsonEditError> {
    let existing = jsonc::parse(text)?.and_then(|root| {
        let mut node = jsonc::to_value(text, &root);
        for seg in at.iter().copied().chain([ENTRY_NAME]) {
            node = node.get(seg)?.clone();
        }
        Some(node)
    });
    let Some(serde_json::Value::Object(_)) = existing else {
        return json_edit::set_member(text, at, ENTRY_NAME, entry);
    };
    let inner: Vec<&str> = at.iter().copied().chain([ENTRY_NAME]).collect();
    let mut out: Option<String> = None;
    for key in ["command", "args"] {
        if let Some(want) = entry.get(key) {
            let current = out.as_deref().unwrap_or(text);
            if let Some(next) = json_edit::set_member(current, &inner, key, want)? {
                out = Some(next);
            }
        }
    }
    Ok(out)
}

/// Removes every member named [`ENTRY_NAME`] at `at` (a file can hold it twice).
fn remove_json_entry(text: &str, at: &[&str]) -> Result<Option<String>, json_edit::JsonEditError> {
    let mut out: Option<String> = None;
    while let Some(next) = json_edit::remove_member(out.as_deref().unwrap_or(text), at, ENTRY_NAME)?
    {
        out = Some(next);
    }
    Ok(out)
}

/// Removes our entry from `client`'s file at `path`, and nothing else.
///
/// # Errors
/// [`ConnectError`]; the file is unchanged then.
pub fn disconnect(client: Client, path: &Path) -> Result<Outcome, ConnectError> {
    if !path.exists() {
        return Ok(Outcome::Unchanged);
    }
    let file = read(path)?;
    let (bom, text) = split_bom(&file);
    refuse_theirs(client, path, text)?;
    let changed = match client.format() {
        Format::Json(at) => remove_json_entry(text, at).map_err(|e| parse_error(path, e))?,
        Format::CodexToml => {
            codex::remove_server(text, ENTRY_NAME).map_err(|e| parse_error(path, e))?
        }
        Format::GooseYaml => {
            goose::remove_extension(text, ENTRY_NAME).map_err(|e| parse_error(path, e))?
        }
    };
    if client.own_file()
        && let Some(rest) = &changed
        && holds_nothing(rest)
    {
        // Our own file, and our entry was all it held: an empty file would be one more thing
        // the client reads (and may warn about).
        return std::fs::remove_file(path)
            .map(|()| Outcome::Changed)
            .map_err(|e| ConnectError::Io {
                path: path.to_owned(),
                reason: e.to_string(),
            });
    }
    write_if_changed(path, changed.map(|t| bom.to_owned() + &t))
}

/// Whether a JSON text holds nothing: only whitespace and comments, or an empty object.
fn holds_nothing(text: &str) -> bool {
    match jsonc::parse(text) {
        Ok(None) => true,
        Ok(Some(root)) => matches!(&root.kind, jsonc::Kind::Object(m) if m.is_empty()),
        Err(_) => false,
    }
}

/// What the entry named [`ENTRY_NAME`] in `text` runs: `None` without one, else its command
/// and arguments, flattened (a command array counts as command plus arguments).
fn entry_invocation(
    client: Client,
    path: &Path,
    text: &str,
) -> Result<Option<Vec<String>>, ConnectError> {
    match client.format() {
        Format::Json(at) => {
            let Some(root) = jsonc::parse(text).map_err(|e| parse_error(path, e))? else {
                return Ok(None);
            };
            let doc = jsonc::to_value(text, &root);
            let mut node = &doc;
            for seg in at.iter().copied().chain([ENTRY_NAME]) {
                match node.get(seg) {
                    Some(n) => node = n,
                    None => return Ok(None),
                }
            }
            let strings = |v: Option<&serde_json::Value>| -> Vec<String> {
                match v {
                    Some(serde_json::Value::String(s)) => vec![s.clone()],
                    Some(serde_json::Value::Array(items)) => items
                        .iter()
                        .filter_map(|i| i.as_str().map(str::to_owned))
                        .collect(),
                    _ => Vec::new(),
                }
            };
            let mut runs = strings(node.get("command"));
            runs.extend(strings(node.get("args")));
            Ok(Some(runs))
        }
        Format::CodexToml => {
            codex::server_invocation(text, ENTRY_NAME).map_err(|e| parse_error(path, e))
        }
        Format::GooseYaml => {
            goose::extension_invocation(text, ENTRY_NAME).map_err(|e| parse_error(path, e))
        }
    }
}

/// Whether an entry running `runs` is one we wrote: `<program> bridge…`.
fn is_ours(runs: &[String]) -> bool {
    runs.get(1).is_some_and(|arg| arg == "bridge")
}

/// [`ConnectError::NotOurs`] when the file has an entry of our name that is not ours.
fn refuse_theirs(client: Client, path: &Path, text: &str) -> Result<(), ConnectError> {
    match entry_invocation(client, path, text)? {
        Some(runs) if !is_ours(&runs) => Err(ConnectError::NotOurs {
            path: path.to_owned(),
            runs: if runs.is_empty() {
                "no command".to_owned()
            } else {
                runs.join(" ")
            },
        }),
        _ => Ok(()),
    }
}

/// Whether our entry is in the file (`Ok(false)` for a missing file, and for an entry of our
/// name that is not ours).
///
/// # Errors
/// [`ConnectError`] for a file that cannot be read or parsed.
pub fn is_connected(client: Client, path: &Path) -> Result<bool, ConnectError> {
    let file = read(path)?;
    let (_, text) = split_bom(&file);
    Ok(entry_invocation(client, path, text)?.is_some_and(|runs| is_ours(&runs)))
}

/// Every client's status on this machine (paths from `roots`).
pub fn statuses(roots: &Roots) -> Vec<ClientStatus> {
    ALL.into_iter()
        .map(|client| {
            let path = client.path(Os::current(), roots);
            let (connected, error) = match is_connected(client, &path) {
                Ok(c) => (c, None),
                Err(e) => (false, Some(e.to_string())),
            };
            ClientStatus {
                id: client.id(),
                label: client.label(),
                installed: path.exists() || client.marker(&path, roots).is_dir(),
                path,
                connected,
                error,
                note: client.note(),
            }
        })
        .collect()
}

fn write_if_changed(path: &Path, changed: Option<String>) -> Result<Outcome, ConnectError> {
    match changed {
        None => Ok(Outcome::Unchanged),
        Some(text) => {
            // Another program's file: its permissions are its user's choice.
            write_atomic(path, text.as_bytes(), Mode::KeepTarget, Backup::Keep).map_err(|e| {
                ConnectError::Io {
                    path: path.to_owned(),
                    reason: e.to_string(),
                }
            })?;
            Ok(Outcome::Changed)
        }
    }
}

#[cfg(test)]
mod golden;
#[cfg(test)]
mod hostile_tests;
