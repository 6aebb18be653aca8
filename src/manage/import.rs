//! Importing servers from other MCP clients' config files (DESIGN §3 "Import").
//!
//! | client | file (standard path) | where the servers are |
//! |---|---|---|
//! | Claude Desktop | `<config dir>/Claude/claude_desktop_config.json` | `mcpServers` |
//! | Cursor | `~/.cursor/mcp.json` | `mcpServers` |
//! | VS Code | `<config dir>/Code/User/mcp.json`, `.../settings.json` | `servers` / `mcp.servers`, `type: stdio\|http\|sse` |
//! | nanobot | `~/.nanobot/config.json` | `tools.mcpServers` (its `tools.ssrfWhitelist` is reported, not copied) |
//!
//! `<config dir>` is `~/.config` on Linux, `~/Library/Application Support` on macOS and
//! `%APPDATA%` on Windows. Importing is two steps: [`plan`] decides, per source entry, whether it
//! is added (under its own name or renamed `name-2`, `name-3`… when the name is taken by a
//! different entry) or skipped (same server already present, our own `bridge`, not a server);
//! [`apply`] writes the plan into a raw config document. Only the fields our config knows are
//! copied; VS Code's `http` becomes `streamableHttp`. `${…}` in the source is translated to
//! what it meant there, never to a wider read (`values.rs`; each item's `notes` say how).

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::config;
use crate::manage::connect::jsonc;

/// An MCP client whose config we can read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ClientKind {
    /// Claude Desktop (`mcpServers`).
    ClaudeDesktop,
    /// Cursor (`mcpServers`).
    Cursor,
    /// VS Code (`servers`, or `mcp.servers` in `settings.json`).
    VsCode,
    /// nanobot (`tools.mcpServers`).
    Nanobot,
}

impl ClientKind {
    /// How `import` reads the config file of `client` (what `connect --import` imports), or
    /// `None` for a client whose file it does not read yet.
    pub fn of(client: crate::manage::connect::Client) -> Option<ClientKind> {
        use crate::manage::connect::Client;
        match client {
            Client::Vscode => Some(ClientKind::VsCode),
            Client::Nanobot => Some(ClientKind::Nanobot),
            Client::Cursor => Some(ClientKind::Cursor),
            Client::ClaudeDesktop | Client::ClaudeCode | Client::Windsurf => {
                Some(ClientKind::ClaudeDesktop)
            }
            Client::Codex
            | Client::Zed
            | Client::Gemini
            | Client::Opencode
            | Client::Goose
            | Client::LmStudio
            | Client::Cline
            | Client::Continue
            | Client::Junie => None,
        }
    }

    /// Display name.
    pub fn label(self) -> &'static str {
        match self {
            ClientKind::ClaudeDesktop => "Claude Desktop",
            ClientKind::Cursor => "Cursor",
            ClientKind::VsCode => "VS Code",
            ClientKind::Nanobot => "nanobot",
        }
    }
}

/// A config file of another client at its standard path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceFile {
    /// Whose file.
    pub client: ClientKind,
    /// Where.
    pub path: PathBuf,
    /// Whether it exists now.
    pub exists: bool,
}

/// The standard config paths of every supported client on this OS, each marked as existing or
/// not.
pub fn standard_sources() -> Vec<SourceFile> {
    standard_paths(dirs::home_dir().as_deref(), dirs::config_dir().as_deref())
        .into_iter()
        .map(|(client, path)| SourceFile {
            client,
            exists: path.is_file(),
            path,
        })
        .collect()
}

/// The standard paths given the home and OS config directories (pure, for tests).
pub fn standard_paths(
    home: Option<&Path>,
    config_dir: Option<&Path>,
) -> Vec<(ClientKind, PathBuf)> {
    let mut out = Vec::new();
    if let Some(c) = config_dir {
        out.push((
            ClientKind::ClaudeDesktop,
            c.join("Claude").join("claude_desktop_config.json"),
        ));
    }
    if let Some(h) = home {
        out.push((ClientKind::Cursor, h.join(".cursor").join("mcp.json")));
    }
    if let Some(c) = config_dir {
        let user = c.join("Code").join("User");
        out.push((ClientKind::VsCode, user.join("mcp.json")));
        out.push((ClientKind::VsCode, user.join("settings.json")));
    }
    if let Some(h) = home {
        out.push((ClientKind::Nanobot, h.join(".nanobot").join("config.json")));
    }
    out
}

/// Guesses the client from a file's name and content: `tools.mcpServers` → nanobot,
/// `servers`/`mcp.servers` → VS Code, a path under `.cursor` → Cursor, else Claude Desktop.
pub fn detect_client(path: &Path, doc: &Value) -> ClientKind {
    if doc.pointer("/tools/mcpServers").is_some() {
        ClientKind::Nanobot
    } else if doc.get("servers").is_some() || doc.pointer("/mcp/servers").is_some() {
        ClientKind::VsCode
    } else if path.components().any(|c| c.as_os_str() == ".cursor") {
        ClientKind::Cursor
    } else {
        ClientKind::ClaudeDesktop
    }
}

/// One source document to import from.
#[derive(Clone, Debug)]
pub struct Source {
    /// Whose format it is.
    pub client: ClientKind,
    /// Where it was read (for the report).
    pub path: PathBuf,
    /// Its parsed JSON.
    pub doc: Value,
}

/// Why a file could not be read as a source.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// Reading failed.
    #[error("cannot read {path}: {reason}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        reason: String,
    },
    /// The file is not JSON (VS Code's JSON-with-comments is stripped of comments first).
    #[error("{path} is not valid JSON: {reason}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        reason: String,
    },
}

impl Source {
    /// Reads `path`, guessing the client with [`detect_client`] unless `client` is given.
    ///
    /// # Errors
    /// [`ImportError`] when the file cannot be read or is not JSON.
    pub fn read(path: &Path, client: Option<ClientKind>) -> Result<Source, ImportError> {
        let text = std::fs::read_to_string(path).map_err(|e| ImportError::Read {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
        // Notepad starts UTF-8 files with a byte order mark.
        let text = text.strip_prefix(crate::config::BOM).unwrap_or(&text);
        let doc: Value = parse_jsonc(text).map_err(|e| ImportError::Syntax {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
        let client = client.unwrap_or_else(|| detect_client(path, &doc));
        Ok(Source {
            client,
            path: path.to_owned(),
            doc,
        })
    }

    /// The source's server entries, by name, in file order.
    fn servers(&self) -> Vec<(&String, &Value)> {
        let map = match self.client {
            ClientKind::ClaudeDesktop | ClientKind::Cursor => self.doc.get("mcpServers"),
            ClientKind::VsCode => self
                .doc
                .get("servers")
                .or_else(|| self.doc.pointer("/mcp/servers")),
            ClientKind::Nanobot => self.doc.pointer("/tools/mcpServers"),
        };
        map.and_then(Value::as_object)
            .map(|m| m.iter().collect())
            .unwrap_or_default()
    }
}

/// What happened to one source entry.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "camelCase")]
pub enum ImportAction {
    /// Added under its own name.
    Added,
    /// Added under a new name because its name was taken by a different entry.
    Renamed {
        /// The name it gets.
        to: String,
    },
    /// Not added.
    Skipped {
        /// Why, for a person.
        reason: String,
    },
}

/// One line of the import report.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportItem {
    /// The name in the source file.
    pub name: String,
    /// Which client's file.
    pub client: ClientKind,
    /// The file.
    pub path: PathBuf,
    /// What happens to it.
    #[serde(flatten)]
    pub action: ImportAction,
    /// The entry as it will be written (absent when skipped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<Value>,
    /// How its `${…}` references were translated or why they were not (see `values.rs`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl ImportItem {
    /// The name it is written under, unless skipped.
    pub fn target_name(&self) -> Option<&str> {
        match &self.action {
            ImportAction::Added => Some(&self.name),
            ImportAction::Renamed { to } => Some(to),
            ImportAction::Skipped { .. } => None,
        }
    }
}

/// What an import will do: one item per source entry, and the source's whitelist entries it
/// leaves out.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportPlan {
    /// Every source entry, in source then file order.
    pub items: Vec<ImportItem>,
    /// `ssrfWhitelist` entries of the source (nanobot's `tools.ssrfWhitelist`) that the
    /// config does not have. They are shown, never copied: a range there opens the SSRF guard
    /// for every remote server (`0.0.0.0/0` turns it off), so adding one is the person's own
    /// edit of `ssrfWhitelist`, not a side effect of an import.
    pub whitelist: Vec<String>,
}

impl ImportPlan {
    /// How many entries will be added (renamed ones included).
    pub fn added(&self) -> usize {
        self.items
            .iter()
            .filter(|i| i.target_name().is_some())
            .count()
    }
}

/// Decides what importing `sources` into the raw config `doc` does (see the module docs).
pub fn plan(doc: &Value, sources: &[Source]) -> ImportPlan {
    let existing = doc
        .get("mcpServers")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    // Names and entries as they will be after the import, so later sources see earlier ones.
    let mut taken: Vec<(String, Value)> = existing.into_iter().collect();
    let mut plan = ImportPlan::default();
    for source in sources {
        for (name, raw) in source.servers() {
            let item = |action, entry| ImportItem {
                name: name.clone(),
                client: source.client,
                path: source.path.clone(),
                action,
                entry,
                notes: Vec::new(),
            };
            let converted = match convert_entry(raw) {
                Ok(e) => e,
                Err(reason) => {
                    plan.items
                        .push(item(ImportAction::Skipped { reason }, None));
                    continue;
                }
            };
            let translate = |server: &str| {
                let mut entry = converted.clone();
                let done = values::translate_entry(&mut entry, source.client, server);
                (entry, done)
            };
            let (mut entry, mut translated) = translate(name);
            if is_companion_bridge(&entry) {
                let reason = "this is MCP Companion's own bridge".to_owned();
                plan.items
                    .push(item(ImportAction::Skipped { reason }, None));
                continue;
            }
            if let Some((same, _)) = taken.iter().find(|(_, e)| same_server(e, &entry)) {
                let reason = format!("already present as \"{same}\"");
                plan.items
                    .push(item(ImportAction::Skipped { reason }, None));
                continue;
            }
            let target = unique_name(name, &taken);
            let action = if target == *name {
                ImportAction::Added
            } else {
                // `${input:…}` secrets are named after the server.
                (entry, translated) = translate(&target);
                ImportAction::Renamed { to: target.clone() }
            };
            if translated.unresolved
                && let Some(obj) = entry.as_object_mut()
            {
                obj.insert("disabled".into(), Value::Bool(true));
                translated
                    .notes
                    .push("imported disabled until the references above are edited".into());
            }
            taken.push((target, entry.clone()));
            let mut added = item(action, Some(entry));
            added.notes = translated.notes;
            plan.items.push(added);
        }
        if source.client == ClientKind::Nanobot
            && let Some(list) = source
                .doc
                .pointer("/tools/ssrfWhitelist")
                .and_then(Value::as_array)
        {
            let current = doc.get("ssrfWhitelist").and_then(Value::as_array);
            for cidr in list.iter().filter_map(Value::as_str) {
                let known = current.is_some_and(|c| c.iter().any(|v| v == cidr));
                if !known && !plan.whitelist.iter().any(|w| w == cidr) {
                    plan.whitelist.push(cidr.to_owned());
                }
            }
        }
    }
    plan
}

/// Writes the added entries of `plan` into the raw config `doc` (never its `whitelist`:
/// [`ImportPlan::whitelist`]).
pub fn apply(doc: &mut Value, plan: &ImportPlan) {
    let Some(top) = doc.as_object_mut() else {
        return;
    };
    let servers = top
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()));
    if !servers.is_object() {
        *servers = Value::Object(Map::new());
    }
    if let Some(servers) = servers.as_object_mut() {
        for item in &plan.items {
            if let (Some(name), Some(entry)) = (item.target_name(), &item.entry) {
                servers.insert(name.to_owned(), entry.clone());
            }
        }
    }
}

/// The entry in our format: known fields only, explicit `type` (`http` → `streamableHttp`).
fn convert_entry(raw: &Value) -> Result<Value, String> {
    let obj = raw
        .as_object()
        .ok_or_else(|| "not a server entry (expected a JSON object)".to_owned())?;
    let mut out = Map::new();
    let declared = obj.get("type").and_then(Value::as_str);
    let kind = match declared {
        Some(t) => config::TransportKind::from_type(t)
            .ok_or_else(|| format!("unsupported type \"{t}\""))?
            .name(),
        None => config::detect_transport(
            obj.contains_key("command"),
            obj.get("url").and_then(Value::as_str),
        )
        .ok_or_else(|| "has neither \"command\" nor \"url\"".to_owned())?
        .name(),
    };
    out.insert("type".into(), Value::String(kind.into()));
    for key in config::ENTRY_KEYS
        .iter()
        .filter(|k| !matches!(**k, "type" | "source"))
    {
        if let Some(v) = obj.get(*key) {
            out.insert((*key).into(), v.clone());
        }
    }
    let needed = if kind == "stdio" { "command" } else { "url" };
    if out.get(needed).is_none_or(|v| v.as_str().is_none()) {
        return Err(format!("type {kind} needs a \"{needed}\" string"));
    }
    Ok(Value::Object(out))
}

/// Whether `entry` launches MCP Companion's own bridge (importing it would loop).
fn is_companion_bridge(entry: &Value) -> bool {
    let command = entry.get("command").and_then(Value::as_str).unwrap_or("");
    let stem = Path::new(command)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("");
    let first_arg = entry.pointer("/args/0").and_then(Value::as_str);
    stem.starts_with("mcp-companion") && first_arg == Some("bridge")
}

/// Same server: same command, args and environment, or same URL and headers. Two entries
/// that differ only in `env` or `headers` are two accounts of one server: both are kept.
fn same_server(a: &Value, b: &Value) -> bool {
    let empty = || Value::Object(Map::new());
    let key = |e: &Value| {
        (
            e.get("command").cloned(),
            e.get("args").cloned().unwrap_or(Value::Array(Vec::new())),
            e.get("url").cloned(),
            e.get("env").cloned().unwrap_or_else(empty),
            e.get("headers").cloned().unwrap_or_else(empty),
        )
    };
    key(a) == key(b)
}

/// `name`, or `name-2`, `name-3`… whichever is not in `taken`.
fn unique_name(name: &str, taken: &[(String, Value)]) -> String {
    let free = |n: &str| !taken.iter().any(|(t, _)| t == n);
    if free(name) {
        return name.to_owned();
    }
    (2..)
        .map(|i| format!("{name}-{i}"))
        .find(|n| free(n))
        .unwrap_or_else(|| name.to_owned())
}

/// `text` read as JSONC, the way VS Code and Zed read their files (comments, trailing
/// commas; a key written twice counts where it appears last, as in `JSON.parse`). A file with
/// nothing but whitespace and comments is `null`.
fn parse_jsonc(text: &str) -> Result<Value, jsonc::ParseError> {
    Ok(jsonc::parse(text)?.map_or(Value::Null, |root| jsonc::to_value(text, &root)))
}

mod values;

#[cfg(test)]
mod tests;
