//! The agent side of the forwarding fast path (issue 15): `tools/call` lines that can be
//! forwarded as they are never enter the rmcp server session of their connection.
//!
//! [`Relay::take`] sees every complete line of an initialized agent connection before
//! [`super::line::LineTransport`] judges it, and takes:
//!
//! | line | when | what happens |
//! |---|---|---|
//! | `tools/call` | id a string or an integer; params only `name`, `arguments` (object or `null`), `_meta` without `progressToken`; the target a tool of a running stdio server with a fast lane ([`Hub::fast_target`]) | forwarded by [`call::FastCall`]: one answer, spliced |
//! | `notifications/cancelled` | `requestId` names a fast-path call in flight | that call is cancelled (upstream too); no answer, as rmcp does |
//! | anything else | — | left to rmcp, unchanged |
//!
//! So progress-carrying calls, resources and prompts served as tools, malformed requests,
//! and every error path before the forward keep their slow-path answers. The fast path is on
//! unless `MCP_COMPANION_FAST_PATH=0` ([`crate::upstream::lane::enabled`]).

pub mod call;
pub mod envelope;

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};

use rmcp::{Peer, RoleServer};
use tokio_util::sync::{CancellationToken, DropGuard};

use self::call::FastCall;
use self::envelope::{CallParams, CancelledParams, Incoming, Reply};
use crate::hub::Hub;

/// The calls of one connection in flight on the fast path: agent id key → (call number, cancel
/// token). The number tells a call's own entry from a later call that reused its id.
pub(crate) type InFlight = Arc<Mutex<HashMap<String, (u64, CancellationToken)>>>;

/// The running part of a taken call: resolves to its answer, or `None` when none is due
/// (the agent cancelled or left).
pub type Forward = Pin<Box<dyn Future<Output = Option<Reply>> + Send>>;

/// What [`Relay::take`] did with a line.
pub enum Taken {
    /// Not for the fast path: judge it and hand it to rmcp as usual.
    No,
    /// Consumed, nothing to send (a cancellation).
    Done,
    /// A forwarded call: run it and write its answer.
    Call(Forward),
}

/// The fast path of one agent connection. Dropping it (the connection ended) cancels every
/// call it forwarded.
pub struct Relay {
    hub: Hub,
    shutdown: CancellationToken,
    agent: Arc<OnceLock<Peer<RoleServer>>>,
    in_flight: InFlight,
    session: CancellationToken,
    calls: u64,
    _cancel_on_drop: DropGuard,
}

/// Where the connection's serving code puts the agent's session once it is initialized; the
/// relay takes nothing before.
#[derive(Clone, Debug, Default)]
pub struct AgentCell(Arc<OnceLock<Peer<RoleServer>>>);

impl AgentCell {
    /// Records the initialized session (first call wins).
    pub fn set(&self, peer: Peer<RoleServer>) {
        let _ = self.0.set(peer);
    }
}

impl Relay {
    /// A relay for one connection to `hub`; calls cut short by `shutdown` say so.
    pub fn new(hub: Hub, shutdown: CancellationToken) -> (Relay, AgentCell) {
        let cell = AgentCell::default();
        let session = CancellationToken::new();
        let relay = Relay {
            hub,
            shutdown,
            agent: cell.0.clone(),
            in_flight: InFlight::default(),
            calls: 0,
            _cancel_on_drop: session.clone().drop_guard(),
            session,
        };
        (relay, cell)
    }

    /// Takes `line` (one complete line from the agent) when it is the fast path's, see the
    /// module doc.
    pub fn take(&mut self, line: &[u8]) -> Taken {
        let Some(agent) = self.agent.get().cloned() else {
            return Taken::No;
        };
        let Ok(message) = serde_json::from_slice::<Incoming<'_>>(line) else {
            return Taken::No;
        };
        match (message.method.as_deref(), message.id, message.params) {
            (Some("notifications/cancelled"), None, Some(params)) => self.cancel(params.get()),
            (Some("tools/call"), Some(id), Some(params)) if envelope::plain_id(id) => {
                self.forward(agent, id.get(), params.get())
            }
            _ => Taken::No,
        }
    }

    fn cancel(&self, params: &str) -> Taken {
        let Ok(params) = serde_json::from_str::<CancelledParams>(params) else {
            return Taken::No;
        };
        let key = envelope::id_key(&params.request_id);
        let token = lock(&self.in_flight).get(&key).map(|(_, t)| t.clone());
        match token {
            Some(token) => {
                token.cancel();
                Taken::Done
            }
            None => Taken::No,
        }
    }

    fn forward(&mut self, agent: Peer<RoleServer>, id: &str, params: &str) -> Taken {
        let Ok(params) = serde_json::from_str::<CallParams<'_>>(params) else {
            return Taken::No;
        };
        if params.meta.is_some_and(envelope::wants_progress)
            || params
                .arguments
                .is_some_and(|a| !(a.get() == "null" || a.get().starts_with('{')))
        {
            return Taken::No;
        }
        let Some(target) = self.hub.fast_target(&params.name) else {
            return Taken::No;
        };
        let Ok(id_value) = serde_json::from_str::<serde_json::Value>(id) else {
            return Taken::No;
        };
        let key = envelope::id_key(&id_value);
        let cancel = self.session.child_token();
        self.calls += 1;
        lock(&self.in_flight).insert(key.clone(), (self.calls, cancel.clone()));
        let call = FastCall {
            hub: self.hub.clone(),
            agent,
            wrapped: params.name.into_owned(),
            agent_id: id.to_owned(),
            arguments: params.arguments.map(|a| a.to_owned()),
            target,
            cancel,
            shutdown: self.shutdown.clone(),
            _done: call::Forget {
                in_flight: self.in_flight.clone(),
                key,
                number: self.calls,
            },
        };
        Taken::Call(Box::pin(call.run()))
    }
}

pub(crate) fn lock(
    in_flight: &InFlight,
) -> std::sync::MutexGuard<'_, HashMap<String, (u64, CancellationToken)>> {
    // One insert, lookup or remove per critical section: a poisoned map is consistent.
    in_flight.lock().unwrap_or_else(|p| p.into_inner())
}
