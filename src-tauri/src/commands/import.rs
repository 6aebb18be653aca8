//! The Import page: other clients' config files, a preview, then the import.

use std::path::PathBuf;
use std::sync::Arc;

use mcp_companion::hub::ReloadReport;
use mcp_companion::manage::import::{self, ImportPlan, Source, SourceFile};
use mcp_companion::manage::secrets::{self, SecretMove};
use mcp_companion::secret::SecretStore;
use serde::Serialize;
use serde_json::Value;
use tauri::State;

use super::{edit_and_reload, raw_config};
use crate::error::{CommandError, ErrorKind};
use crate::state::Desktop;

/// The standard config files of Claude Desktop, Cursor, VS Code and nanobot on this OS.
#[tauri::command]
pub fn scan_imports() -> Vec<SourceFile> {
    import::standard_sources()
}

fn read_sources(paths: &[String]) -> Result<Vec<Source>, CommandError> {
    paths
        .iter()
        .map(|p| {
            Source::read(&PathBuf::from(p), None)
                .map_err(|e| CommandError::new(ErrorKind::Import, e.to_string()))
        })
        .collect()
}

/// What importing `paths` would add, skip and rename; nothing is written.
#[tauri::command]
pub fn preview_import(
    state: State<'_, Desktop>,
    paths: Vec<String>,
) -> Result<ImportPlan, CommandError> {
    let sources = read_sources(&paths)?;
    Ok(import::plan(&raw_config(&state)?, &sources))
}

/// Plain-text secrets in what importing `paths` would add, and where each would go in the
/// keychain (no values). `error` says why none can be moved (e.g. no keychain on this machine).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretPreview {
    /// One per plain-text value of a secret-looking `env` / `headers` key.
    pub moves: Vec<SecretMove>,
    /// Why the keychain cannot take them, when it cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The plain-text secrets importing `paths` would bring in, as [`SecretPreview`]; nothing is
/// written.
#[tauri::command]
pub async fn preview_import_secrets(
    state: State<'_, Desktop>,
    paths: Vec<String>,
) -> Result<SecretPreview, CommandError> {
    let sources = read_sources(&paths)?;
    let mut doc = raw_config(&state)?;
    let plan = import::plan(&doc, &sources);
    import::apply(&mut doc, &plan);
    let added = added_names(&plan);
    let store = state.secrets.clone();
    let found = tauri::async_runtime::spawn_blocking(move || {
        secrets::plan(&doc, Some(&added), store.as_ref())
    })
    .await
    .map_err(|e| CommandError::new(ErrorKind::System, e.to_string()))?;
    Ok(match found {
        Ok(moves) => SecretPreview { moves, error: None },
        Err(e) => SecretPreview {
            moves: Vec::new(),
            error: Some(e.to_string()),
        },
    })
}

fn added_names(plan: &ImportPlan) -> Vec<String> {
    plan.items
        .iter()
        .filter_map(|i| i.target_name().map(str::to_owned))
        .collect()
}

/// Plans, stores and returns the secret moves for the servers `plan` adds to `doc` (a copy of
/// the config with the import applied).
async fn store_imported_secrets(
    mut doc: Value,
    plan: ImportPlan,
    store: Arc<dyn SecretStore>,
) -> Result<Vec<SecretMove>, CommandError> {
    tauri::async_runtime::spawn_blocking(move || {
        import::apply(&mut doc, &plan);
        let moves = secrets::plan(&doc, Some(&added_names(&plan)), store.as_ref())?;
        secrets::store_values(&moves, store.as_ref())?;
        Ok(moves)
    })
    .await
    .map_err(|e| CommandError::new(ErrorKind::System, e.to_string()))?
}

/// The outcome of an import.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportOutcome {
    /// What was done with every source entry.
    pub plan: ImportPlan,
    /// What the hub did.
    pub reload: ReloadReport,
    /// The plain-text values moved into the keychain (no values), when asked for.
    pub secrets: Vec<SecretMove>,
}

/// Imports `paths` into the config file and starts the added servers. With `move_secrets`,
/// the plain-text values of secret-looking keys in the added entries go to the keychain first
/// and the file gets `${secret:…}` references instead (if the keychain fails, nothing is
/// written).
#[tauri::command]
pub async fn apply_import(
    state: State<'_, Desktop>,
    paths: Vec<String>,
    move_secrets: Option<bool>,
) -> Result<ImportOutcome, CommandError> {
    let sources = read_sources(&paths)?;
    let moved = if move_secrets == Some(true) {
        let doc = raw_config(&state)?;
        let plan = import::plan(&doc, &sources);
        store_imported_secrets(doc, plan, state.secrets.clone()).await?
    } else {
        Vec::new()
    };
    let mut applied = ImportPlan::default();
    let reload = edit_and_reload(&state, |doc| {
        // Planned against the document as saved, so a concurrent edit cannot be clobbered;
        // a moved value is replaced only where the field still holds it.
        applied = import::plan(doc, &sources);
        import::apply(doc, &applied);
        secrets::rewrite(doc, &moved);
        Ok(())
    })
    .await?;
    Ok(ImportOutcome {
        plan: applied,
        reload,
        secrets: moved,
    })
}
