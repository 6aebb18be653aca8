//! The Connect-an-agent and Settings pages.
//!
//! Server config goes through the core (`edit`, atomic save with `.bak`); the UI's own settings
//! (log level, autostart mirror) live in a `tauri-plugin-store` file, `ui-settings.json`.

use std::path::PathBuf;

use mcp_companion::manage::edit;
use serde::Serialize;
use serde_json::{Value, json};
use tauri::{AppHandle, Manager, Runtime, State};
use tauri_plugin_autostart::{AutoLaunchManager, ManagerExt as _};
use tauri_plugin_store::StoreExt;

use super::{edit_and_reload, raw_config};
use crate::error::{CommandError, ErrorKind};
use crate::state::Desktop;

/// The store file holding UI settings (not server config).
pub const UI_STORE: &str = "ui-settings.json";
/// Store key of the log filter.
pub const LOG_LEVEL_KEY: &str = "logLevel";
/// Log levels offered; any `tracing` filter string is accepted.
pub const LOG_LEVELS: &[&str] = &["error", "warn", "info", "debug", "trace"];

/// What the Connect page shows.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectInfo {
    /// Absolute path of the program agents spawn with `bridge`.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The MCP socket (direct connections).
    pub socket: String,
    /// The control socket (the CLI's `status`, `tools`, …).
    pub control_socket: String,
    /// The config file.
    pub config_path: String,
    /// Copy-ready snippets by client.
    pub snippets: Vec<Snippet>,
}

/// One client's config snippet.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Snippet {
    /// Client name.
    pub client: &'static str,
    /// Where the snippet goes.
    pub file: &'static str,
    /// The JSON text.
    pub text: String,
}

/// The bridge program: the `mcp-companion` CLI installed beside this binary if there is one,
/// else this binary (which also answers `bridge`).
pub(crate) fn bridge_program() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("mcp-companion-desktop"));
    let cli = exe.with_file_name(format!("mcp-companion{}", std::env::consts::EXE_SUFFIX));
    if cli.is_file() { cli } else { exe }
}

/// Snippets for Claude Desktop, Cursor, VS Code and nanobot, and the socket paths.
#[tauri::command]
pub fn get_connect_info(state: State<'_, Desktop>) -> ConnectInfo {
    let command = bridge_program().display().to_string();
    let args = vec!["bridge".to_owned()];
    let stdio = json!({"command": command, "args": args});
    let pretty = |v: Value| serde_json::to_string_pretty(&v).unwrap_or_default();
    let snippets = vec![
        Snippet {
            client: "Claude Desktop",
            file: "claude_desktop_config.json",
            text: pretty(json!({"mcpServers": {"companion": stdio}})),
        },
        Snippet {
            client: "Cursor",
            file: "~/.cursor/mcp.json",
            text: pretty(json!({"mcpServers": {"companion": stdio}})),
        },
        Snippet {
            client: "VS Code",
            file: ".vscode/mcp.json",
            text: pretty(
                json!({"servers": {"companion": {"type": "stdio", "command": command, "args": args}}}),
            ),
        },
        Snippet {
            client: "nanobot",
            file: "~/.nanobot/config.json",
            text: pretty(json!({"tools": {"mcpServers": {"companion": stdio}}})),
        },
    ];
    ConnectInfo {
        command,
        args,
        socket: state.paths.mcp.display().to_string(),
        control_socket: state.paths.control.display().to_string(),
        config_path: state.config_path.display().to_string(),
        snippets,
    }
}

/// What the Settings page shows.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// `ssrfWhitelist` entries as written.
    pub ssrf_whitelist: Vec<String>,
    /// Current log filter.
    pub log_level: String,
    /// Offered levels.
    pub log_levels: &'static [&'static str],
    /// Whether the app starts at login; `None` when autostart is unavailable.
    pub autostart: Option<bool>,
    /// The config file.
    pub config_path: String,
}

/// The current settings.
#[tauri::command]
pub fn get_settings<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, Desktop>,
) -> Result<Settings, CommandError> {
    let doc = raw_config(&state)?;
    let ssrf_whitelist = doc
        .get("ssrfWhitelist")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    Ok(Settings {
        ssrf_whitelist,
        log_level: stored_log_level(&app).unwrap_or_else(|| "info".to_owned()),
        log_levels: LOG_LEVELS,
        autostart: app
            .try_state::<AutoLaunchManager>()
            .and_then(|m| m.is_enabled().ok()),
        config_path: state.config_path.display().to_string(),
    })
}

/// Replaces `ssrfWhitelist` (every entry validated as a CIDR or address) and reloads.
#[tauri::command]
pub async fn save_whitelist(
    state: State<'_, Desktop>,
    entries: Vec<String>,
) -> Result<Vec<String>, CommandError> {
    edit_and_reload(&state, |doc| edit::set_whitelist(doc, &entries)).await?;
    let doc = raw_config(&state)?;
    Ok(doc
        .get("ssrfWhitelist")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default())
}

/// The log filter saved in the UI store, if any.
pub fn stored_log_level<R: Runtime>(app: &AppHandle<R>) -> Option<String> {
    app.store(UI_STORE)
        .ok()?
        .get(LOG_LEVEL_KEY)?
        .as_str()
        .map(str::to_owned)
}

/// Changes the log filter now and remembers it for the next start.
#[tauri::command]
pub fn set_log_level<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, Desktop>,
    level: String,
) -> Result<(), CommandError> {
    if let Some(set) = &state.set_log_level {
        set(&level).map_err(|m| CommandError {
            kind: ErrorKind::Invalid,
            message: m,
            field: Some("logLevel".into()),
        })?;
    }
    let store = app
        .store(UI_STORE)
        .map_err(|e| CommandError::new(ErrorKind::System, e.to_string()))?;
    store.set(LOG_LEVEL_KEY, json!(level));
    store
        .save()
        .map_err(|e| CommandError::new(ErrorKind::System, e.to_string()))
}

/// Turns start-at-login on or off; returns the new state.
#[tauri::command]
pub fn set_autostart<R: Runtime>(app: AppHandle<R>, enabled: bool) -> Result<bool, CommandError> {
    if app.try_state::<AutoLaunchManager>().is_none() {
        return Err(CommandError::new(
            ErrorKind::System,
            "autostart is not available",
        ));
    }
    let manager = app.autolaunch();
    let result = if enabled {
        manager.enable()
    } else {
        manager.disable()
    };
    result.map_err(|e| CommandError::new(ErrorKind::System, e.to_string()))?;
    manager
        .is_enabled()
        .map_err(|e| CommandError::new(ErrorKind::System, e.to_string()))
}
