//! Hub events → the window's channels and the tray, in one exhaustive match.
//!
//! Channels (listened to in `ui/events.js`):
//!
//! | channel | payload | when |
//! |---|---|---|
//! | `servers-changed` | every server's status | a server's state changed, or servers were added/removed |
//! | `tools-changed` | none | the merged tool list changed |
//! | `elicitation-requested` | an open elicitation (`crate::elicit::Elicitation`) | a server asks the person (`crate::elicit`) |
//! | `elicitation-closed` | its id | answered, timed out, or withdrawn by the server |
//! | `approval-requested` | a call waiting for the person (`mcp_companion::hub::Ask`) | a tool's policy is `ask` (`crate::approve`) |
//! | `approval-closed` | its id | answered, timed out, or withdrawn by the agent |

use mcp_companion::hub::{Hub, HubEvent};
use tauri::{AppHandle, Emitter, Runtime};

/// Channel carrying `Vec<ServerStatus>`.
pub const SERVERS_CHANGED: &str = "servers-changed";
/// Channel with no payload.
pub const TOOLS_CHANGED: &str = "tools-changed";

/// Forwards `hub`'s events until the hub is gone.
pub fn forward<R: Runtime>(app: AppHandle<R>, hub: Hub) {
    let mut events = hub.subscribe();
    tauri::async_runtime::spawn(async move {
        while let Some(event) = events.recv().await {
            match event {
                HubEvent::ServersChanged => emit_servers(&app, &hub),
                HubEvent::ToolsChanged => {
                    // Tool counts are part of the statuses.
                    emit(&app, TOOLS_CHANGED, ());
                    emit_servers(&app, &hub);
                }
            }
        }
    });
}

fn emit_servers<R: Runtime>(app: &AppHandle<R>, hub: &Hub) {
    emit(app, SERVERS_CHANGED, hub.statuses());
    crate::tray::refresh(app);
}

fn emit<R: Runtime, S: serde::Serialize + Clone>(app: &AppHandle<R>, channel: &str, payload: S) {
    if let Err(e) = app.emit(channel, payload) {
        tracing::warn!(channel, error = %e, "cannot emit to the window");
    }
}
