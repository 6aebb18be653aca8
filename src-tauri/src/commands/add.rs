//! The Add-server page: presets, custom entries, "Test" and "Save".

use std::collections::BTreeMap;

use mcp_companion::config;
use mcp_companion::hub::ReloadReport;
use mcp_companion::manage::edit;
use mcp_companion::manage::presets::{self, Preset};
use mcp_companion::manage::probe::{self, ProbeReport};
use serde_json::Value;
use tauri::State;

use super::edit_and_reload;
use crate::error::CommandError;
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
#[tauri::command]
pub async fn save_server(
    state: State<'_, Desktop>,
    name: String,
    entry: Value,
    replace: bool,
) -> Result<ReloadReport, CommandError> {
    edit_and_reload(&state, |doc| edit::set_server(doc, &name, entry, replace)).await
}
