//! The person's answer to a call waiting for approval ([`crate::hub::Approvals`]), as both the
//! window and the control API give it: `always` first writes `toolPolicy` `allow` for the tool
//! into `config.json` ([`super::edit`], atomic, under the config's edit lock) and reloads it —
//! which changes the policy without restarting the server — so the call runs with the new
//! policy in place. The key written is one that names this tool and no other
//! ([`crate::config::ToolPolicy::allow_keys`]): the key that names it exactly when there is
//! one (its value replaced, so it keeps deciding), else the tool's exact name.

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
    let written = write_allow(hub, config_path, &ask).await;
    let ask = approvals.answer(id, answer)?;
    written.map(|()| ask).map_err(AnswerError::NotSaved)
}

/// Writes `toolPolicy` `allow` for the tool of `ask` into `config_path` (the keys of
/// [`crate::config::ToolPolicy::allow_keys`], against the file as it is under the edit lock)
/// and reloads it.
async fn write_allow(hub: &Hub, config_path: Option<&Path>, ask: &Ask) -> Result<(), String> {
    let path = config_path.ok_or("this companion has no config file")?;
    let (server, tool) = (ask.server.as_str(), ask.tool.as_str());
    let mut names: Vec<&str> = ask.policy_names.iter().map(String::as_str).collect();
    if names.is_empty() {
        names.push(tool);
    }
    let config = super::edit::update_file(path, |doc| {
        let current = doc
            .get("mcpServers")
            .and_then(|servers| servers.get(server))
            .and_then(|entry| entry.get("toolPolicy"));
        let keys = crate::config::parse_tool_policy(server, current)
            .map_err(super::edit::EditError::Invalid)?
            .allow_keys(&names, tool);
        for key in keys {
            super::edit::set_tool_policy(doc, server, &key, Some(Policy::Allow))?;
        }
        Ok(())
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
