//! Approval of calls in the window: the desktop app is an approver of the core's
//! [`Approvals`](mcp_companion::hub::Approvals) for as long as it runs, so a call whose policy
//! is `ask` waits for the person instead of being refused. Each ask is emitted on
//! [`APPROVAL_REQUESTED`] (the window shows the tool, the agent, the server and the arguments
//! with Allow once / Always allow / Deny), brings the window forward, and shows a desktop
//! notification ([`crate::notification`]) whose click raises the window. However it ends —
//! answered (`answer_approval`), timed out, or withdrawn by the agent — [`APPROVAL_CLOSED`]
//! takes it down and the notification is withdrawn.

use std::collections::HashMap;

use mcp_companion::hub::{ApprovalEvent, Hub};
use tauri::{AppHandle, Emitter, Runtime};
use tokio::sync::oneshot;

use crate::notification::Notice;

/// Channel carrying an [`Ask`](mcp_companion::hub::Ask): a call waiting for the person.
pub const APPROVAL_REQUESTED: &str = "approval-requested";
/// Channel carrying the `id` (number) of an ask that was answered, timed out or withdrawn.
pub const APPROVAL_CLOSED: &str = "approval-closed";

/// Attaches the app as an approver of `hub` until the app exits, and shows every ask.
pub fn attach<R: Runtime>(app: AppHandle<R>, hub: &Hub) {
    let mut approver = hub.approvals().attach();
    tauri::async_runtime::spawn(async move {
        // Dropping an ask's sender withdraws its notification.
        let mut notices: HashMap<u64, oneshot::Sender<()>> = HashMap::new();
        while let Some(events) = approver.recv().await {
            for event in events {
                match event {
                    ApprovalEvent::Asked(ask) => {
                        if notices.contains_key(&ask.id) {
                            continue;
                        }
                        tracing::info!(id = ask.id, server = %ask.server, tool = %ask.tool, "a call waits for the person: asking in the window");
                        if let Err(e) = app.emit(APPROVAL_REQUESTED, &ask) {
                            tracing::warn!(error = %e, "cannot show the approval in the window");
                        }
                        crate::tray::show_window(&app);
                        let (withdraw, withdrawn) = oneshot::channel();
                        notices.insert(ask.id, withdraw);
                        let notice = Notice::approving(&ask);
                        tauri::async_runtime::spawn(crate::elicit::notify(
                            app.clone(),
                            notice,
                            withdrawn,
                        ));
                    }
                    ApprovalEvent::Closed { id, .. } => {
                        notices.remove(&id);
                        if let Err(e) = app.emit(APPROVAL_CLOSED, id) {
                            tracing::warn!(error = %e, "cannot tell the window an approval closed");
                        }
                    }
                }
            }
        }
    });
}
