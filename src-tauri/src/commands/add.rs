//! The Add-server page: presets, custom entries, "Test" and "Save".

use std::collections::BTreeMap;

use mcp_companion::config;
use mcp_companion::hub::ReloadReport;
use mcp_companion::manage::edit;
use mcp_companion::manage::presets::{self, Preset};
use mcp_companion::manage::probe::{self, ProbeReport};
use mcp_companion::manage::secrets;
use mcp_companion::secret;
use serde_json::{Value, json};
use tauri::State;

use super::edit_and_reload;
use crate::error::{CommandError, ErrorKind};
use crate::state::Desktop;

/// The built-in preset catalogue.
#[tauri::command]
pub fn list_presets() -> &'static [Preset] {
    presets::catalogue()
}

/// The config entry preset `id` makes from `inputs`.
#[tauri::command]
pub fn instantiate_preset(
    id: String,
    inputs: BTreeMap<String, String>,
) -> Result<Value, CommandError> {
    Ok(presets::instantiate(&id, &inputs)?)
}

/// Validates `entry` and connects to it once, reporting its tools; nothing is saved. Remote
/// entries are checked against the config file's current `ssrfWhitelist`.
#[tauri::command]
pub async fn test_server(
    state: State<'_, Desktop>,
    name: String,
    entry: Value,
) -> Result<ProbeReport, CommandError> {
    let whitelist = config::load(&state.config_path)
        .map(|c| c.ssrf_whitelist)
        .unwrap_or_default();
    Ok(probe::probe(&name, &entry, &whitelist).await?)
}

/// Saves `entry` as server `name` (refusing to overwrite unless `replace`) and applies it: the
/// new server starts, the others keep running.
///
/// `secret_fields` (`env.KEY`, `headers.KEY`: preset inputs marked secret, values the user
/// flagged) are stored in the OS keychain first and the saved entry refers to them as
/// `${secret:NAME.KEY}`; the file never holds those values. Without a keychain the save fails
/// with kind `keychain` and nothing is written.
#[tauri::command]
pub async fn save_server(
    state: State<'_, Desktop>,
    name: String,
    entry: Value,
    replace: bool,
    secret_fields: Option<Vec<String>>,
) -> Result<ReloadReport, CommandError> {
    edit::validate_entry(&name, &entry)?;
    let entry = match secret_fields.filter(|f| !f.is_empty()) {
        Some(fields) => {
            let name = name.clone();
            let store = state.secrets.clone();
            // Keychain round trips block (and may wait on an unlock prompt).
            tauri::async_runtime::spawn_blocking(move || {
                entry_with_secret_refs(&name, entry, &fields, store.as_ref())
            })
            .await
            .map_err(|e| CommandError::new(ErrorKind::System, e.to_string()))??
        }
        None => entry,
    };
    edit_and_reload(&state, |doc| edit::set_server(doc, &name, entry, replace)).await
}

/// Stores the values of `fields` of `entry` in `store` and returns the entry referring to them.
pub(crate) fn entry_with_secret_refs(
    name: &str,
    entry: Value,
    fields: &[String],
    store: &dyn secret::SecretStore,
) -> Result<Value, CommandError> {
    let mut doc = json!({ "mcpServers": { name: entry } });
    let moves = secrets::plan_fields(&doc, fields, store)?;
    secrets::apply(&mut doc, &moves, store)?;
    Ok(doc["mcpServers"][name].take())
}
