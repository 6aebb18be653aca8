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
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | [`plan`] and [`apply`]: the report, added / renamed / skipped, and writing it |
//! | `clients.rs` | [`ClientKind`]: the clients we read, their standard paths, guessing one from a file |
//! | `source.rs` | [`Source`]: one file read as JSONC, and its server entries |
//! | `entry.rs` | one entry in our format, and whether the config already has that server |
//! | `values.rs` | what `${…}` in another client's file means, and its equivalent in ours |

mod clients;
mod entry;
mod source;
#[cfg(test)]
mod tests;
mod values;

use std::path::PathBuf;

use serde::Serialize;
use serde_json::{Map, Value};

pub use clients::{ClientKind, SourceFile, detect_client, standard_paths, standard_sources};
use entry::{convert_entry, is_companion_bridge, same_server, unique_name};
pub use source::{ImportError, Source};

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
