//! The agent side of the forwarding fast path: `tools/call` lines that can be
//! forwarded as they are, and `tools/list` lines a cached catalog page answers, never enter the
//! rmcp server session of their connection.
//!
//! [`Relay`], the connection's [`Tap`](super::line::Tap), sees every complete line of an
//! initialized agent connection before [`super::line::LineTransport`] judges it, and takes:
//!
//! | line | when | what happens |
//! |---|---|---|
//! | `tools/call` | the session started with `initialize` (a 2026-07-28 agent's calls go to rmcp, which checks their `_meta` and adds `resultType`); id a string or an integer; params only `name`, `arguments` (object or `null`), `_meta` without `progressToken` or a protocol version; the target a tool of a running stdio or streamable HTTP server with a fast lane ([`Hub::fast_target`](crate::hub::Hub::fast_target)) | forwarded by [`call::FastCall`]: one answer, spliced |
//! | `notifications/cancelled` | `requestId` names a fast-path call in flight | that call is cancelled (upstream too); no answer, as rmcp does |
//! | `tools/list` | the session on a protocol version before 2026-07-28; id a string or an integer; params absent or only `cursor`, one the catalog handed out; the session's first listing has waited for the servers (or they have all settled) | answered from the catalog's page JSON, made once per catalog ([`crate::catalog::Catalog::page_json`]) |
//! | `tools/call` with `params.task`, `tasks/get`, `tasks/result`, `tasks/cancel`, `tasks/list` | the session started with `initialize`; id a string or an integer; params an object or absent; taken even with the fast path off | answered by the hub's Tasks pass-through ([`crate::hub::Tasks`]): rmcp's model drops `params.task` and reads `tasks/*` as a later extension's |
//! | anything else | — | left to rmcp, unchanged |
//!
//! So progress-carrying calls, bad cursors, resources and prompts served as tools, malformed requests,
//! and every error path before the forward keep their slow-path answers. Taken calls count
//! against the connection's bounds exactly as rmcp's requests do (`relay.rs`). The fast path is on
//! unless `MCP_COMPANION_FAST_PATH=0` ([`crate::upstream::lane::enabled`]); the Tasks lines
//! are taken either way.

pub mod call;
pub mod envelope;
mod relay;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

pub use self::relay::{AgentCell, Relay};

/// The calls of one connection in flight on the fast path: agent id key → (call number, cancel
/// token). The number tells a call's own entry from a later call that reused its id.
pub(crate) type InFlight = Arc<Mutex<HashMap<String, (u64, CancellationToken)>>>;

pub(crate) fn lock(
    in_flight: &InFlight,
) -> std::sync::MutexGuard<'_, HashMap<String, (u64, CancellationToken)>> {
    // One insert, lookup or remove per critical section: a poisoned map is consistent.
    in_flight.lock().unwrap_or_else(|p| p.into_inner())
}
