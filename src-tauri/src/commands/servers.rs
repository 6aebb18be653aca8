//! The Servers and Server-detail pages.

use mcp_companion::config::UnknownServer;
use mcp_companion::hub::ReloadReport;
use mcp_companion::manage::{bundle, edit};
use mcp_companion::supervisor::{ServerState, ServerStatus};
use serde::Serialize;
use serde_json::{Map, Value};
use tauri::State;

use super::{edit_and_reload, raw_config};
use crate::error::{CommandError, ErrorKind};
use crate::state::Desktop;

/// Every server's status, in config order.
#[tauri::command]
pub fn list_servers(state: State<'_, Desktop>) -> Vec<ServerStatus> {
    state.hub.statuses()
}

/// The warnings of the config in effect (unknown keys and the like), one sentence each;
/// empty when it has none. The Servers page shows them above the table.
#[tauri::command]
pub fn config_warnings(state: State<'_, Desktop>) -> Vec<String> {
    state.hub.config_warnings().to_vec()
}

/// Starts `name` (also after it gave up).
#[tauri::command]
pub async fn start_server(state: State<'_, Desktop>, name: String) -> Result<(), CommandError> {
    Ok(state.hub.start_server(&name).await?)
}

/// Stops `name`; its tools leave the catalog.
#[tauri::command]
pub async fn stop_server(state: State<'_, Desktop>, name: String) -> Result<(), CommandError> {
    Ok(state.hub.stop_server(&name).await?)
}

/// Stops and starts `name`.
#[tauri::command]
pub async fn restart_server(state: State<'_, Desktop>, name: String) -> Result<(), CommandError> {
    Ok(state.hub.restart_server(&name).await?)
}

/// Starts every server that is not running (invalid entries are skipped).
#[tauri::command]
pub async fn start_all(state: State<'_, Desktop>) -> Result<(), CommandError> {
    state.hub.start_all().await;
    Ok(())
}

/// Stops every server; they can be started again (this is not the companion's shutdown).
#[tauri::command]
pub async fn stop_all(state: State<'_, Desktop>) -> Result<(), CommandError> {
    state.hub.stop_all().await;
    Ok(())
}

/// Removes `name` from the config file and stops it; a server installed from a bundle loses
/// its unpacked directory too, once stopped, unless another entry names it (a directory that
/// cannot be deleted is logged).
#[tauri::command]
pub async fn remove_server(
    state: State<'_, Desktop>,
    name: String,
) -> Result<ReloadReport, CommandError> {
    let old = raw_config(&state)?
        .get("mcpServers")
        .and_then(|s| s.get(&name))
        .cloned();
    let report = edit_and_reload(&state, |doc| edit::remove_server(doc, &name)).await?;
    let root = bundle::paths::bundles_root();
    if let (Some(old), Some(root), Ok(remaining)) = (old, root, raw_config(&state)) {
        match bundle::install::remove_dir(&old, &root, &remaining) {
            Some(bundle::install::DirOutcome::Failed(e)) => {
                tracing::warn!(server = %name, error = %e, "cannot delete the bundle's directory")
            }
            Some(bundle::install::DirOutcome::InUse { by, .. }) => {
                tracing::info!(server = %name, used_by = %by, "kept the bundle's directory: another server uses it")
            }
            _ => {}
        }
    }
    Ok(report)
}

/// One wrapped tool of a server, as the detail page shows it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolView {
    /// Wrapped name (`mcp_<server>_<tool>`), what agents call.
    pub name: String,
    /// Description.
    pub description: Option<String>,
    /// JSON Schema of the arguments.
    pub input_schema: Value,
    /// The tool's name on its server (what `toolPolicy` keys name); `None` for a resource or
    /// prompt served as a tool.
    pub upstream: Option<String>,
    /// Its call policy now: `allow`, `ask` or `deny`.
    pub policy: &'static str,
    /// Where the policy comes from: `config` (a `toolPolicy` key) or `annotation` (the default).
    pub policy_source: &'static str,
}

/// The detail page's data.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerDetail {
    /// Status as in the list.
    pub status: ServerStatus,
    /// The entry as written in the config file, `env` and `headers` values masked.
    pub entry: Value,
    /// Served tools, in catalog order.
    pub tools: Vec<ToolView>,
}

/// Status, masked config entry and tools of `name`.
#[tauri::command]
pub fn get_server(state: State<'_, Desktop>, name: String) -> Result<ServerDetail, CommandError> {
    let status = state
        .hub
        .statuses()
        .into_iter()
        .find(|s| s.name == name)
        .ok_or_else(|| UnknownServer::new(&name))?;
    let catalog = state.hub.catalog();
    let handle = state.hub.server(&name);
    let tools = match (&handle, status.state) {
        (Some(handle), ServerState::Running) => catalog
            .tools()
            .iter()
            .filter_map(|t| {
                let route = catalog.route(&t.name).filter(|r| *r.server == *name)?;
                let (policy, source) = mcp_companion::hub::policy_of(route, handle);
                Some(ToolView {
                    name: t.name.to_string(),
                    description: t.description.as_ref().map(ToString::to_string),
                    input_schema: Value::Object((*t.input_schema).clone()),
                    upstream: match &route.target {
                        mcp_companion::catalog::Target::Tool { name } => Some(name.clone()),
                        _ => None,
                    },
                    policy: policy.as_str(),
                    policy_source: match source {
                        mcp_companion::hub::PolicySource::Config => "config",
                        mcp_companion::hub::PolicySource::Annotation => "annotation",
                    },
                })
            })
            .collect(),
        _ => Vec::new(),
    };
    let entry = raw_config(&state)
        .ok()
        .and_then(|doc| {
            doc.pointer(&format!("/mcpServers/{}", pointer_escape(&name)))
                .cloned()
        })
        .map(mask_secrets)
        .unwrap_or(Value::Null);
    Ok(ServerDetail {
        status,
        entry,
        tools,
    })
}

fn pointer_escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Replaces every `env` and `headers` value and `oauth.clientSecret` with `"••••"` unless it
/// is a pure `${VAR}` / `${secret:NAME}` reference (which is no secret).
fn mask_secrets(mut entry: Value) -> Value {
    for key in ["env", "headers"] {
        if let Some(Value::Object(map)) = entry.get_mut(key) {
            map.values_mut().for_each(mask_value);
        }
    }
    if let Some(secret) = entry.pointer_mut("/oauth/clientSecret") {
        mask_value(secret);
    }
    entry
}

fn mask_value(v: &mut Value) {
    let is_reference = v
        .as_str()
        .is_some_and(|s| s.starts_with("${") && s.ends_with('}') && !s[2..].contains('$'));
    if !is_reference {
        *v = Value::String("••••".into());
    }
}

/// New stderr lines of a server since `since` (a count returned by the previous call).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogChunk {
    /// The lines.
    pub lines: Vec<String>,
    /// Pass this as `since` next time.
    pub next: u64,
}

/// The server's captured stderr after the first `since` lines (0: everything still held).
#[tauri::command]
pub fn read_log(
    state: State<'_, Desktop>,
    name: String,
    since: u64,
) -> Result<LogChunk, CommandError> {
    let server = state
        .hub
        .server(&name)
        .ok_or_else(|| UnknownServer::new(&name))?;
    let (lines, next) = server.log().since(since);
    Ok(LogChunk { lines, next })
}

/// Calls a wrapped tool; the `tools/call` result as JSON (errors are results with `isError`).
#[tauri::command]
pub async fn call_tool(
    state: State<'_, Desktop>,
    name: String,
    arguments: Map<String, Value>,
) -> Result<Value, CommandError> {
    let result = state.hub.call(&name, Some(arguments), None).await;
    serde_json::to_value(result).map_err(|e| CommandError::new(ErrorKind::System, e.to_string()))
}

/// Sets the call policy of `tool` (its name on server `name`) to `policy` (`allow`, `ask`,
/// `deny`), or removes its `toolPolicy` key for `default`, under the key that names this tool
/// alone (`config::exact_key`); saved atomically and reloaded (the server keeps running).
///
/// # Errors
/// `invalid` for an unknown policy or a bad tool name; `unknownServer`; `file`.
#[tauri::command]
pub async fn set_tool_policy(
    state: State<'_, Desktop>,
    name: String,
    tool: String,
    policy: String,
) -> Result<(), CommandError> {
    let policy = match policy.as_str() {
        "default" => None,
        p => Some(mcp_companion::config::Policy::parse(p).ok_or_else(|| {
            CommandError::new(
                crate::error::ErrorKind::Invalid,
                format!("\"{p}\" is not a policy (allow, ask, deny or default)"),
            )
        })?),
    };
    // The key that names this tool alone, also when its name has glob characters.
    let key = mcp_companion::config::exact_key(&tool);
    super::edit_and_reload(&state, |doc| {
        mcp_companion::manage::edit::set_tool_policy(doc, &name, &key, policy)
    })
    .await
    .map(|_| ())
}
