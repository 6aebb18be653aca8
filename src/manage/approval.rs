//! The person's answer to a call waiting for approval ([`crate::hub::Approvals`]), as both the
//! window and the control API give it: `always` first writes `toolPolicy` `allow` for the tool
//! into `config.json` ([`super::edit`], atomic) and reloads it — which changes the policy
//! without restarting the server — so the call runs with the new policy in place.

use std::path::Path;

use crate::config::Policy;
use crate::hub::{Answer, Ask, Hub};

/// Why an answer was not taken, or taken only in part.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// No call waits with that id (answered already, timed out, or withdrawn by its agent).
    #[error(transparent)]
    NotOpen(#[from] crate::hub::approvals::NotOpen),
    /// `always`: the call was allowed once, but `allow` could not be written.
    #[error("the call was allowed once, but \"allow\" could not be written into the config: {0}")]
    NotSaved(String),
}

/// Answers ask `id` of `hub` with `answer`; for [`Answer::Always`], writes `allow` for the
/// tool into `config_path` and reloads it first. Returns the ask as it was shown.
///
/// # Errors
/// [`AnswerError::NotOpen`]; [`AnswerError::NotSaved`] after allowing the call once.
pub async fn answer(
    hub: &Hub,
    config_path: Option<&Path>,
    id: u64,
    answer: Answer,
) -> Result<Ask, AnswerError> {
    let approvals = hub.approvals();
    if answer != Answer::Always {
        return Ok(approvals.answer(id, answer)?);
    }
    let ask = approvals
        .get(id)
        .ok_or(crate::hub::approvals::NotOpen(id))?;
    let written = write_allow(hub, config_path, &ask.server, &ask.tool).await;
    let ask = approvals.answer(id, answer)?;
    written.map(|()| ask).map_err(AnswerError::NotSaved)
}

/// Writes `toolPolicy` `allow` for `tool` of `server` into `config_path` and reloads it.
async fn write_allow(
    hub: &Hub,
    config_path: Option<&Path>,
    server: &str,
    tool: &str,
) -> Result<(), String> {
    let path = config_path.ok_or("this companion has no config file")?;
    let config = super::edit::update_file(path, |doc| {
        super::edit::set_tool_policy(doc, server, tool, Some(Policy::Allow))
    })
    .map_err(|e| e.to_string())?;
    hub.reload(&config).await;
    tracing::info!(
        server,
        tool,
        "the person always allows this tool: toolPolicy \"allow\" written"
    );
    Ok(())
}
