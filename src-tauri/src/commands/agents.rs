//! The Agents page: the agent sessions connected now, each with its process and profile, and
//! moving one session to another profile for as long as it stays connected (its agent gets
//! `list_changed`; nothing is written to the config).

use mcp_companion::hub::AgentStatus;
use serde::Serialize;
use tauri::State;

use crate::error::CommandError;
use crate::state::Desktop;

/// What the Agents page shows.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentsPage {
    /// Every connected session, oldest first.
    pub agents: Vec<AgentStatus>,
    /// The valid profiles' names, in config order: what a session can be moved to.
    pub profiles: Vec<String>,
}

/// The connected agents and the profiles they can be given.
#[tauri::command]
pub fn list_agents(state: State<'_, Desktop>) -> AgentsPage {
    AgentsPage {
        agents: state.hub.agents(),
        profiles: state
            .hub
            .profiles()
            .into_iter()
            .filter(|p| p.error.is_none())
            .map(|p| p.name)
            .collect(),
    }
}

/// Moves session `id` to `profile` (`None`: everything) until it disconnects.
#[tauri::command]
pub fn set_agent_profile(
    state: State<'_, Desktop>,
    id: u64,
    profile: Option<String>,
) -> Result<(), CommandError> {
    Ok(state.hub.set_agent_profile(id, profile.as_deref())?)
}
