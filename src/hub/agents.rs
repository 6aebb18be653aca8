//! Who is connected: the hub's one registry of agent sessions, for `mcp-companion agents` and
//! the window.
//!
//! An agent session registers when its connection is accepted ([`Hub::register_agent`]: the
//! peer process the kernel reported, and for a bridge its parent, the agent) and leaves the
//! registry when the [`AgentGuard`] it holds is dropped, however the session ends. Its
//! `initialize` adds the `clientInfo` and protocol version ([`Hub::agent_initialized`]); both
//! call paths count its calls ([`Hub::count_call`]). Its profile is not copied here: the
//! registry holds the session's own choice ([`SessionChoice`]), so what `agents` shows is
//! what the session reads through, and [`Hub::set_agent_profile`] changes that one choice —
//! the agent gets `list_changed` and re-lists, without reconnecting.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::Hub;
use super::profiles::{ProfileSource, SessionChoice};
use crate::process::identity::ProcessIdentity;

/// The longest `clientInfo` name or version kept, in characters: outside text, cut like the
/// activity log's.
pub const CLIENT_TEXT_MAX: usize = 128;

/// One connected agent session, as `agents` shows it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentStatus {
    /// The session's number, unique while the companion runs (what `agents --set` takes).
    pub id: u64,
    /// Its `clientInfo.name` (cut at [`CLIENT_TEXT_MAX`] characters, known secrets masked);
    /// absent before `initialize`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// Its `clientInfo.version` (cut likewise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_version: Option<String>,
    /// The protocol version the session negotiated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// The agent's process: the peer of the connection, or, for a session through
    /// `mcp-companion bridge`, the bridge's parent (Linux; see [`Hub::register_agent`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<ProcessIdentity>,
    /// The bridge process, for a session through `mcp-companion bridge`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bridge: Option<ProcessIdentity>,
    /// The profile it reads through; absent: the default view (everything).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// How it got that profile.
    pub profile_source: ProfileSource,
    /// Its `tools/call` requests so far (both paths, search calls included).
    pub calls: u64,
    /// When it connected, in milliseconds since the Unix epoch.
    pub connected_ms: u64,
}

/// What the accept loop knows of a connection's process before the session starts.
#[derive(Clone, Debug, Default)]
pub struct PeerProcesses {
    /// The agent's process (for a bridge session: the bridge's parent).
    pub agent: Option<ProcessIdentity>,
    /// The bridge process, when the peer is `mcp-companion bridge`.
    pub bridge: Option<ProcessIdentity>,
}

/// The registry: every agent session of this hub, by id.
#[derive(Clone, Debug, Default)]
pub(super) struct Agents {
    inner: Arc<Mutex<Registry>>,
}

#[derive(Debug, Default)]
struct Registry {
    next: u64,
    sessions: BTreeMap<u64, Arc<Slot>>,
}

/// One session's entry: fixed facts, what `initialize` said, the call count and its choice.
#[derive(Debug)]
pub(super) struct Slot {
    id: u64,
    peers: PeerProcesses,
    connected_ms: u64,
    hello: Mutex<Hello>,
    calls: AtomicU64,
    choice: Arc<SessionChoice>,
}

#[derive(Clone, Debug, Default)]
struct Hello {
    client: Option<String>,
    client_version: Option<String>,
    protocol_version: Option<String>,
}

/// Keeps one session in the registry; dropping it removes the session.
#[derive(Debug)]
#[must_use = "the session leaves the registry when this is dropped"]
pub struct AgentGuard {
    agents: Agents,
    id: u64,
}

impl Drop for AgentGuard {
    fn drop(&mut self) {
        self.agents.lock().sessions.remove(&self.id);
    }
}

/// Why [`Hub::set_agent_profile`] refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    /// No connected session has that id (it may have left).
    #[error("no connected agent has id {0}")]
    UnknownAgent(u64),
    /// The config has no valid profile of that name.
    #[error("no valid profile is named \"{0}\"")]
    UnknownProfile(String),
}

impl Agents {
    fn lock(&self) -> std::sync::MutexGuard<'_, Registry> {
        // The registry is a map edited one entry at a time: whole even after a panic.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// An agent's `clientInfo` text as shown: every secret known now masked
/// ([`crate::net::scrub_known`]); applied when it is read, so a secret learned after the agent
/// connected (a token received later) is masked too.
fn masked(text: Option<String>) -> Option<String> {
    text.map(|t| crate::net::scrub_known(&t))
}

/// `text` cut at [`CLIENT_TEXT_MAX`] characters; display code escapes control characters.
fn cut(text: &str) -> String {
    match text.char_indices().nth(CLIENT_TEXT_MAX) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

impl Hub {
    /// Registers this handle's agent session (a handle from [`Hub::for_session`]) with the
    /// processes its connection came from; it stays listed until the guard is dropped. Calls
    /// made through clones of the returned handle count for it.
    ///
    /// For a bridge session the agent is the bridge's parent, read from the OS
    /// ([`crate::process::identity::parent`]) rather than told by the bridge: the bridge's pid
    /// comes from the kernel, and its parent from `/proc`, so a process cannot claim another
    /// agent's identity by what it sends. A parent that is a shell or `npx` wrapper is shown
    /// as it is.
    pub fn register_agent(mut self, peers: PeerProcesses) -> (Hub, AgentGuard) {
        let choice = self.session_choice();
        let mut registry = self.agents.lock();
        registry.next += 1;
        let id = registry.next;
        let slot = Arc::new(Slot {
            id,
            peers,
            connected_ms: crate::activity::now_ms(),
            hello: Mutex::default(),
            calls: AtomicU64::new(0),
            choice,
        });
        registry.sessions.insert(id, slot.clone());
        drop(registry);
        let guard = AgentGuard {
            agents: self.agents.clone(),
            id,
        };
        self.agent = Some(slot);
        (self, guard)
    }

    /// Records what the session's `initialize` said: the client's name and version (cut),
    /// and the protocol version negotiated.
    pub fn agent_initialized(&self, client: &rmcp::model::Implementation, protocol: &str) {
        if let Some(slot) = &self.agent {
            *slot.hello.lock().unwrap_or_else(PoisonError::into_inner) = Hello {
                client: Some(cut(&client.name)),
                client_version: Some(cut(&client.version)),
                protocol_version: Some(cut(protocol)),
            };
        }
    }

    /// Records a 2026-07-28 agent's `clientInfo`, which it puts in each request's `_meta`
    /// instead of sending `initialize`: the first request that names it fills in the session
    /// as [`Hub::agent_initialized`] does; later ones change nothing.
    pub fn agent_named(&self, meta: &rmcp::model::RequestMetaObject) {
        let Some(slot) = &self.agent else { return };
        let mut hello = slot.hello.lock().unwrap_or_else(PoisonError::into_inner);
        if hello.client.is_some() {
            return;
        }
        if let Some(client) = meta.client_info() {
            *hello = Hello {
                client: Some(cut(&client.name)),
                client_version: Some(cut(&client.version)),
                protocol_version: meta.protocol_version().map(|v| cut(v.as_str())),
            };
        }
    }

    /// The agent on `peer` as the activity log and approvals name it: what its `initialize`
    /// said, else what a 2026-07-28 agent said of itself in a request's `_meta`
    /// ([`Hub::agent_named`]). Raw: each place that shows it masks known secrets.
    pub fn agent_of(&self, peer: &rmcp::Peer<rmcp::RoleServer>) -> crate::activity::Agent {
        let mut agent = crate::activity::Agent::of(peer);
        if agent.name.is_none()
            && let Some(slot) = &self.agent
        {
            let hello = slot.hello.lock().unwrap_or_else(PoisonError::into_inner);
            agent.name.clone_from(&hello.client);
            agent.version.clone_from(&hello.client_version);
        }
        agent
    }

    /// Counts one `tools/call` of this handle's session.
    pub fn count_call(&self) {
        if let Some(slot) = &self.agent {
            slot.calls.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The processes this handle's session came from, for the activity log.
    pub fn agent_process(&self) -> Option<&ProcessIdentity> {
        self.agent.as_ref().and_then(|s| s.peers.agent.as_ref())
    }

    /// Every connected agent session, oldest first.
    pub fn agents(&self) -> Vec<AgentStatus> {
        let slots: Vec<Arc<Slot>> = self.agents.lock().sessions.values().cloned().collect();
        slots.iter().map(|s| s.status()).collect()
    }

    /// Sets session `id`'s profile (`None`: everything) for as long as it stays connected;
    /// its agent gets `notifications/tools/list_changed` and sees the new catalog at its next
    /// `tools/list`. Nothing is written to the config: the agent's next session gets its
    /// profile by the usual rules again.
    ///
    /// # Errors
    /// [`AgentError`] when no session has `id`, or `profile` names no valid profile.
    pub fn set_agent_profile(&self, id: u64, profile: Option<&str>) -> Result<(), AgentError> {
        let slot = self
            .agents
            .lock()
            .sessions
            .get(&id)
            .cloned()
            .ok_or(AgentError::UnknownAgent(id))?;
        let profile = match profile {
            None => None,
            Some(name) => {
                let valid = self
                    .profiles()
                    .into_iter()
                    .any(|p| p.name == name && p.error.is_none());
                if !valid {
                    return Err(AgentError::UnknownProfile(name.to_owned()));
                }
                Some(Arc::from(name))
            }
        };
        slot.choice.set_by_person(profile);
        Ok(())
    }
}

impl Slot {
    fn status(&self) -> AgentStatus {
        let hello = self
            .hello
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let (profile, profile_source) = self.choice.current();
        AgentStatus {
            id: self.id,
            client: masked(hello.client),
            client_version: masked(hello.client_version),
            protocol_version: hello.protocol_version,
            process: self.peers.agent.clone(),
            bridge: self.peers.bridge.clone(),
            profile: profile.map(|p| p.to_string()),
            profile_source,
            calls: self.calls.load(Ordering::Relaxed),
            connected_ms: self.connected_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn client_text_is_cut_at_a_character_boundary() {
        assert_eq!(cut("claude-code"), "claude-code");
        let long = "é".repeat(200);
        let c = cut(&long);
        assert_eq!(c.chars().count(), super::CLIENT_TEXT_MAX + 1);
        assert!(c.ends_with('…'));
    }
}
