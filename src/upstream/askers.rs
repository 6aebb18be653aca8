//! [`Askers`]: the agents with a call in flight on one upstream session, so that a request the
//! server sends us in the middle of a call (`elicitation/create`, `sampling/createMessage`,
//! `roots/list`) can go to the agent whose call it belongs to (see [`super::ask`]).
//!
//! Every routed call enters the registry for its lifetime: [`Askers::enter`] returns a guard that
//! leaves it when dropped (the call answered, failed, timed out or was cancelled). Whoever sends
//! a call upstream registers it, whichever path it takes.
//!
//! Picking the agent for a server request ([`Askers::pick`]):
//! 1. Streamable HTTP tells which of our requests' response streams the server request arrived
//!    on (rmcp's `InboundStreamOrigin`, SEP-2260): the call whose upstream request id matches.
//! 2. Otherwise (stdio, legacy SSE, the standalone GET stream, or an id not yet recorded): the
//!    longest-running call in flight, because the transport has no link to the call.
//! 3. No call in flight: nobody; the caller falls back.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{ClientCapabilities, RequestId};
use rmcp::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use super::relay::Relay;

/// An agent whose call is in flight: where to send the server's requests, and the token that
/// fires when that call is cancelled or the agent hangs up.
#[derive(Clone, Debug)]
pub struct Asker {
    /// The agent's session.
    pub peer: Peer<RoleServer>,
    /// Fires when the agent cancels its call (`notifications/cancelled`) or its session ends.
    pub cancelled: CancellationToken,
    /// For an agent of the 2026-07-28 era: where its call's questions go instead of requests
    /// on `peer` ([`super::relay`]).
    pub relay: Option<Relay>,
}

impl Asker {
    /// What the agent declared: in its `initialize` request, or for an agent of the
    /// 2026-07-28 era in its call's `_meta` (empty when neither).
    pub fn capabilities(&self) -> ClientCapabilities {
        if let Some(relay) = &self.relay {
            return relay.capabilities().clone();
        }
        self.peer
            .peer_info()
            .map(|info| info.capabilities.clone())
            .unwrap_or_default()
    }
}

/// One registered call.
#[derive(Debug)]
struct Entry {
    asker: Asker,
    /// The id of the upstream request carrying the call, once it is sent.
    upstream_id: Option<RequestId>,
}

/// The calls in flight on one upstream session, in the order they started. Cheap to clone;
/// clones share the registry.
#[derive(Clone, Debug, Default)]
pub struct Askers {
    inner: Arc<Mutex<Registry>>,
}

#[derive(Debug, Default)]
struct Registry {
    /// Counts up, so the smallest key is the longest-running call.
    next: u64,
    calls: BTreeMap<u64, Entry>,
}

impl Askers {
    /// Registers `asker`'s call until the returned guard is dropped.
    pub fn enter(&self, asker: Asker) -> AskerGuard {
        let mut reg = self.lock();
        let key = reg.next;
        reg.next += 1;
        reg.calls.insert(
            key,
            Entry {
                asker,
                upstream_id: None,
            },
        );
        AskerGuard {
            askers: self.clone(),
            key,
        }
    }

    /// The agent a server request belongs to: the call whose upstream request id is `related`
    /// when the transport said so and that call is registered, else the longest-running call;
    /// `None` when no call is in flight.
    pub fn pick(&self, related: Option<&RequestId>) -> Option<Asker> {
        let reg = self.lock();
        let linked = related.and_then(|id| {
            reg.calls
                .values()
                .find(|e| e.upstream_id.as_ref() == Some(id))
        });
        linked
            .or_else(|| reg.calls.values().next())
            .map(|e| e.asker.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Registry> {
        // The registry holds no invariant a panicking holder could break half-way.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Keeps one call registered; dropping it removes the call.
#[derive(Debug)]
pub struct AskerGuard {
    askers: Askers,
    key: u64,
}

impl AskerGuard {
    /// Records the id of the upstream request that carries this call, so a server request
    /// linked to it by the transport finds it.
    pub fn set_request_id(&self, id: RequestId) {
        if let Some(entry) = self.askers.lock().calls.get_mut(&self.key) {
            entry.upstream_id = Some(id);
        }
    }
}

impl Drop for AskerGuard {
    fn drop(&mut self) {
        self.askers.lock().calls.remove(&self.key);
    }
}
