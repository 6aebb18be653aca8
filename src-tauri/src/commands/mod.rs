//! Tauri commands: each parses its input, calls the core, returns. `verb_noun` names; the
//! front end's `ui/api.js` has one camelCase function per command.
//!
//! | file | commands |
//! |---|---|
//! | `agents.rs` | the connected agents, moving one to another profile |
//! | `servers.rs` | list, start/stop/restart (one or all), remove, detail, log, call a tool |
//! | `add.rs` | presets, preset → entry, test (probe), save |
//! | `import.rs` | detect other clients' files, preview, import |
//! | `settings.rs` | connect snippets, whitelist, log level, autostart |
//! | `registry.rs` | registry search/details/install plan, per-client connect toggles |
//! | `bundle.rs` | open a `.mcpb` (path or picked bytes), install it, the bundle the app was opened with |
//! | `sign_in.rs` | OAuth sign-in of a server |
//! | `elicit.rs` | open elicitations, the person's answer |
//! | `trust.rs` | tool changes waiting for approval: their diff, the approval |
//! | `approve.rs` | calls waiting for approval, the person's answer |

pub mod add;
pub mod agents;
pub mod approve;
pub mod bundle;
pub mod elicit;
pub mod import;
pub mod registry;
pub mod servers;
pub mod settings;
pub mod sign_in;
pub mod trust;

use mcp_companion::config;
use mcp_companion::hub::ReloadReport;
use mcp_companion::manage::edit::{self, EditError};
use serde_json::Value;

use crate::error::CommandError;
use crate::state::Desktop;

/// Applies `change` to the config file, saves it atomically and reloads the hub with it, so
/// only the servers whose entries changed restart.
pub(crate) async fn edit_and_reload(
    desktop: &Desktop,
    change: impl FnOnce(&mut Value) -> Result<(), EditError>,
) -> Result<ReloadReport, CommandError> {
    let cfg = edit::update_file(&desktop.config_path, change)?;
    Ok(desktop.hub.reload(&cfg).await)
}

/// The raw config document as on disk.
pub(crate) fn raw_config(desktop: &Desktop) -> Result<Value, CommandError> {
    Ok(config::load(&desktop.config_path)?.raw)
}
