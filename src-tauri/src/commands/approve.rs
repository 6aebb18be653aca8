//! The approval card's commands: the calls waiting for the person, and the person's answer
//! (the asks themselves arrive on the `approval-requested` channel, see `crate::approve`).

use mcp_companion::hub::{Answer, Ask};
use mcp_companion::manage::approval::{self, AnswerError};
use tauri::State;

use crate::error::{CommandError, ErrorKind};
use crate::state::Desktop;

/// Every call waiting for the person, oldest first (the window shows them when it loads).
#[tauri::command]
pub fn list_approvals(state: State<'_, Desktop>) -> Vec<Ask> {
    state.hub.approvals().open()
}

/// Answers ask `id` with `answer`: `once`, `always` (also writes `toolPolicy` `allow` for the
/// tool into the config) or `deny`.
///
/// # Errors
/// `invalid` for an unknown answer or an ask no longer open; `file` when `always` allowed the
/// call once but could not write the config.
#[tauri::command]
pub async fn answer_approval(
    state: State<'_, Desktop>,
    id: u64,
    answer: String,
) -> Result<(), CommandError> {
    let answer = Answer::parse(&answer).ok_or_else(|| {
        CommandError::new(
            ErrorKind::Invalid,
            format!("\"{answer}\" is not an answer (once, always or deny)"),
        )
    })?;
    tracing::info!(id, ?answer, "approval answered in the window");
    approval::answer(&state.hub, Some(&state.config_path), id, answer)
        .await
        .map(|_| ())
        .map_err(|e| match e {
            AnswerError::NotOpen(_) => CommandError::new(ErrorKind::Invalid, e.to_string()),
            AnswerError::NotSaved(_) => CommandError::new(ErrorKind::File, e.to_string()),
        })
}
