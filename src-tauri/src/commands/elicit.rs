//! The elicitation form's commands: what is open, and the person's answer (the
//! requests themselves arrive on the `elicitation-requested` channel, see `crate::elicit`).

use mcp_companion::upstream::elicitor::{ElicitResult, ElicitationAction};
use serde::Deserialize;
use serde_json::Value;
use tauri::State;

use crate::elicit::Elicitation;
use crate::error::{CommandError, ErrorKind};
use crate::state::Desktop;

/// The person's choice (MCP `ElicitResult.action`).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Submit the form (form mode) or open the URL (url mode).
    Accept,
    /// Say no.
    Decline,
    /// Dismiss without answering.
    Cancel,
}

/// Every open elicitation, oldest first (the window shows them when it loads).
#[tauri::command]
pub fn list_elicitations(state: State<'_, Desktop>) -> Vec<Elicitation> {
    state.elicitations.list()
}

/// Answers elicitation `id`. Form mode `accept` carries `content`, the form's values as a JSON
/// object (the window validated them against `requestedSchema`); url mode `accept` opens the URL
/// in the browser first and answers only once it opened.
///
/// # Errors
/// `invalid` when the request is no longer open or `accept` lacks an object `content` in form
/// mode; `system` when no browser could be started (the request stays open).
// Async: Tauri runs it on its Tokio runtime, which starting the browser process needs.
#[tauri::command]
pub async fn answer_elicitation(
    state: State<'_, Desktop>,
    id: u64,
    action: Action,
    content: Option<Value>,
) -> Result<(), CommandError> {
    let pending = &state.elicitations;
    let shown = pending.get(id).ok_or_else(|| {
        CommandError::new(
            ErrorKind::Invalid,
            crate::elicit::NotPending(id).to_string(),
        )
    })?;
    let result = match action {
        Action::Accept if shown.mode == "url" => {
            let url = shown.url.unwrap_or_default();
            mcp_companion::auth::browser::open(&url)
                .map_err(|e| CommandError::new(ErrorKind::System, e.to_string()))?;
            ElicitResult::new(ElicitationAction::Accept)
        }
        Action::Accept => match content {
            Some(content @ Value::Object(_)) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(content)
            }
            _ => {
                return Err(CommandError::new(
                    ErrorKind::Invalid,
                    "accept needs the form's values as a JSON object",
                ));
            }
        },
        Action::Decline => ElicitResult::new(ElicitationAction::Decline),
        Action::Cancel => ElicitResult::new(ElicitationAction::Cancel),
    };
    tracing::info!(id, server = %shown.server, ?action, "elicitation answered in the window");
    pending
        .answer(id, result)
        .map_err(|e| CommandError::new(ErrorKind::Invalid, e.to_string()))
}
