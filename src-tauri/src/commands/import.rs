//! The Import page: other clients' config files, a preview, then the import.

use std::path::PathBuf;

use mcp_companion::hub::ReloadReport;
use mcp_companion::manage::import::{self, ImportPlan, Source, SourceFile};
use serde::Serialize;
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

/// The outcome of an import.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportOutcome {
    /// What was done with every source entry.
    pub plan: ImportPlan,
    /// What the hub did.
    pub reload: ReloadReport,
}

/// Imports `paths` into the config file and starts the added servers.
#[tauri::command]
pub async fn apply_import(
    state: State<'_, Desktop>,
    paths: Vec<String>,
) -> Result<ImportOutcome, CommandError> {
    let sources = read_sources(&paths)?;
    let mut applied = ImportPlan::default();
    let reload = edit_and_reload(&state, |doc| {
        // Planned against the document as saved, so a concurrent edit cannot be clobbered.
        applied = import::plan(doc, &sources);
        import::apply(doc, &applied);
        Ok(())
    })
    .await?;
    Ok(ImportOutcome {
        plan: applied,
        reload,
    })
}
