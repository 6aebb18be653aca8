//! Tool changes waiting for the person's approval (pinned definitions): the readable diff
//! `mcp-companion trust` prints (`Waiting::describe`, the core's one rendering) and the one
//! approval, through the same core function as `trust` ([`Hub::trust`]).
//!
//! [`Hub::trust`]: mcp_companion::hub::Hub::trust

use mcp_companion::catalog::pin::Waiting;
use mcp_companion::config::UnknownServer;
use serde::Serialize;
use tauri::State;

use crate::error::CommandError;
use crate::state::Desktop;

/// One server's withheld changes, as the window shows them.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingServer {
    /// The server.
    pub server: String,
    /// Its changes, in name order.
    pub changes: Vec<PendingChange>,
}

/// One withheld change.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingChange {
    /// `tool`, `prompt`, `resource` or `resource template`.
    pub kind: &'static str,
    /// Its upstream name (or URI).
    pub name: String,
    /// Whether it is new (or renamed) rather than changed.
    pub new: bool,
    /// The diff as `mcp-companion trust` prints it, one line each (text the server wrote:
    /// the window shows it as text, never as markup).
    pub lines: Vec<String>,
    /// The fingerprint of the definition shown, sent back with Approve so that only what
    /// the person saw is approved.
    pub fingerprint: String,
}

fn pending(server: String, waiting: &[Waiting]) -> PendingServer {
    PendingServer {
        server,
        changes: waiting
            .iter()
            .map(|w| PendingChange {
                kind: w.kind.word(),
                name: w.tool.clone(),
                new: w.approved.is_none(),
                lines: w.describe(),
                fingerprint: w.listed.fingerprint.clone(),
            })
            .collect(),
    }
}

/// The changes waiting for approval: of `name`, or of every server when `None`.
///
/// # Errors
/// `unknown_server` when `name` names no server.
#[tauri::command]
pub fn list_changes(
    state: State<'_, Desktop>,
    name: Option<String>,
) -> Result<Vec<PendingServer>, CommandError> {
    if let Some(n) = &name
        && state.hub.server(n).is_none()
    {
        return Err(UnknownServer::new(n).into());
    }
    Ok(state
        .hub
        .waiting()
        .iter()
        .filter(|(server, _)| name.as_deref().is_none_or(|n| n == &***server))
        .map(|(server, waiting)| pending(server.to_string(), waiting))
        .collect())
}

/// Approves every change of `name` that waits (as `mcp-companion trust NAME` does): agents
/// then get the tools and hear `tools/list_changed`. Returns what was approved.
///
/// # Errors
/// `unknown_server`, or the hub's error while it shuts down.
#[tauri::command]
pub async fn approve_changes(
    state: State<'_, Desktop>,
    name: String,
    fingerprints: Vec<String>,
) -> Result<Vec<PendingServer>, CommandError> {
    if state.hub.server(&name).is_none() {
        return Err(UnknownServer::new(&name).into());
    }
    // Only what the window showed: a definition that changed again since keeps waiting.
    Ok(state
        .hub
        .trust(Some(&name), Some(fingerprints))
        .await?
        .into_iter()
        .map(|(server, waiting)| pending(server, &waiting))
        .collect())
}
