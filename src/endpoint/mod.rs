//! The aggregated MCP server agents talk to (DESIGN §10): every connection on the local socket
//! is its own MCP session over newline-delimited JSON-RPC.
//!
//! | method | answer |
//! |---|---|
//! | `initialize` | negotiated down to the newest version with an `initialize` handshake (2025-11-25), answered with what the negotiated version defines ([`era::as_negotiated`]); once per connection: a second one, or one after 2026-07-28 requests, gets -32600 |
//! | `server/discover` | the versions served (the `initialize` era and 2026-07-28), the capabilities and server info; a request naming another version gets -32022 listing them ([`era`]) |
//! | `subscriptions/listen` (2026-07-28) | acknowledged for the list changes asked and the resource URIs served; that stream then carries them ([`listen`](mod@listen)) |
//! | `ping` | empty result |
//! | `prompts/list`, `resources/list`, `resources/templates/list` | the catalog's native tables ([`crate::catalog::native`]), paged like tools |
//! | `prompts/get`, `resources/read`, `completion/complete` | routed by the native table to the owning server ([`Hub::get_prompt`], [`Hub::read_resource`], [`Hub::complete`]) |
//! | `resources/subscribe`, `resources/unsubscribe` | per session, sent upstream once per resource (`native.rs`) |
//! | `logging/setLevel` | this session's level for the servers' log messages; the most verbose level goes upstream |
//! | `tools/list` | the merged catalog, [`PAGE_SIZE`] tools per page, `nextCursor` as an offset; a session's first one waits (at most `firstListTimeout`) until every server has settled ([`Hub::wait_settled`]), except for agents [`first_list`] answers at once |
//! | `tools/call` | routed by wrapped name; always exactly one result (`isError` on failure); plain calls to stdio servers are forwarded by the fast path ([`fast`]) |
//! | `notifications/cancelled` | cancels the call and is forwarded upstream |
//! | `notifications/roots/list_changed` | forwarded to every running server |
//! | anything else | -32601, with a message that says what this server answers, and `data.method` (`unknown_method.rs`) |
//! | a line that is not JSON-RPC, or a request whose `params` do not fit | -32700 / -32600 / -32602 ([`LineTransport`](line::LineTransport)) |
//!
//! Progress: a `tools/call` with `_meta.progressToken` gets the upstream server's
//! `notifications/progress`, re-addressed to the agent's token. When the merged catalog changes,
//! every session gets `notifications/tools/list_changed`, and `prompts/list_changed` /
//! `resources/list_changed` when those lists changed. `initialize` waits for the servers to
//! settle (at most `firstListTimeout`), so the declared capabilities cover them (`native.rs`).
//!
//! Each connection runs under the bounds of [`limits`] ([`Bounded`](bounded::Bounded)): a session that
//! has not finished its handshake within [`INITIALIZE_TIMEOUT`](limits::INITIALIZE_TIMEOUT) is closed, and when its agent
//! goes away every call it still has running is dropped, which cancels it upstream.
//!
//! Server requests: while an agent's `tools/call`, `prompts/get` or `resources/read` is in
//! flight, the upstream server's
//! `elicitation/create`, `sampling/createMessage` and `roots/list` are sent to that agent on
//! this session when it declared the capability ([`crate::upstream::ask`]); an agent of the
//! 2026-07-28 era gets them in an `InputRequiredResult` instead, its request parked until it
//! sends it again with the answers ([`park`]).
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | [`Endpoint`]: the MCP server handler of one agent session, its state and how it is built |
//! | `handler.rs` | the handler's methods: each request and notification of the table above answered |
//! | `unknown_method.rs` | the -32601 texts: what is served instead, and why a Tasks extension method is not offered |
//! | `asking.rs` | `tools/call`, `prompts/get`, `resources/read`: the requests during which a server may ask the agent for input, per era |
//! | `accepted.rs` | one accepted connection: served itself, or the agent stdio a bridge handed over |
//! | [`client_names`] | tool names shortened per session for agents that prefix them (Claude Code) |
//! | [`first_list`] | which agents' first listing waits for the servers still starting (`firstListHold`) |
//! | [`era`] | which protocol versions are served and what each era gets |
//! | [`listen`](mod@listen) | `subscriptions/listen` streams of 2026-07-28 agents: list changes and resource updates |
//! | `session.rs` | [`serve`]: the accept loop's agents, each one session under its bounds ([`serve_session_with`]) |
//! | `profiles.rs` | one socket per profile beside the main one, following the config ([`serve_profiles`]) |
//! | [`park`] | calls of 2026-07-28 agents waiting for their input, and the signed `requestState` that names them |
//! | `native.rs` | the declared capabilities, list pages, and each session's subscriptions, log level and notifications |
//! | [`fast`] | the forwarding fast path for `tools/call` and cached `tools/list` pages, beside the rmcp session |
//! | [`line`](mod@line) | the newline-JSON wire of an agent connection, answering malformed lines |
//! | [`limits`] | what one agent connection may hold: in-flight requests, queued bytes, connections, deadlines |
//! | [`bounded`] | the agent connection's transport under those limits: backpressure, noticing a gone agent |
//!
//! The sockets, pipes and the accept loop underneath are [`crate::ipc`]'s; the call rules
//! (deadline, retry, error texts) are [`crate::hub::forward`]'s.

mod accepted;
mod asking;
pub mod bounded;
pub mod client_names;
pub mod era;
pub mod fast;
pub mod first_list;
mod handler;
pub mod limits;
pub mod line;
pub mod listen;
mod native;
pub mod park;
mod profiles;
mod session;
mod unknown_method;

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use tokio_util::sync::CancellationToken;

use crate::hub::Hub;

pub use crate::catalog::PAGE_SIZE;
use crate::ipc::accept::Handshake;
pub use first_list::FirstListPolicy;
pub use profiles::{ProfileSockets, serve_profiles};
pub use session::{framed, serve, serve_session, serve_session_with};

/// The MCP server handler of one agent session.
#[derive(Clone, Debug)]
pub struct Endpoint {
    hub: Hub,
    shutdown: CancellationToken,
    /// How the session's first listing waits for the servers to settle.
    first_list_policy: FirstListPolicy,
    /// Done once the first `tools/list` has waited.
    first_list: Arc<tokio::sync::OnceCell<()>>,
    /// Fires when the agent of this session has gone; its calls are then dropped.
    agent_gone: CancellationToken,
    /// Marked done when `initialize` arrives: from then on the connection is never closed to
    /// make room for another ([`crate::ipc::accept`]).
    handshake: Handshake,
    /// Set when the session's `initialize` is taken; a second one is refused (`handler.rs`).
    initialized: Arc<std::sync::OnceLock<()>>,
    /// The session's resource subscriptions and log level (`native.rs`).
    interest: Arc<native::AgentInterest>,
    /// The session's calls waiting for a 2026-07-28 agent's input ([`park`]).
    parks: Arc<park::Parks>,
    /// The tasks this session created, shared with the fast path's relay, which takes the
    /// `initialize` era's Tasks lines ([`crate::hub::Tasks`]).
    tasks: crate::hub::Tasks,
    /// What of the servers' notices was queued for the session and what was written: a call's
    /// answer waits for those its server sent before it ([`crate::upstream::notice`]).
    delivery: Arc<crate::upstream::notice::Delivery>,
}

impl Endpoint {
    /// A handler serving `hub`'s merged catalog.
    pub fn new(hub: Hub) -> Self {
        Self::with_shutdown(hub, CancellationToken::new(), FirstListPolicy::default())
    }

    /// Like [`Endpoint::new`]; calls cut short by `shutdown` say the companion is shutting
    /// down rather than that the agent cancelled them, and the first `tools/list` waits for
    /// every server to settle as `first_list` says for the agent ([`first_list`]).
    pub fn with_shutdown(
        hub: Hub,
        shutdown: CancellationToken,
        first_list: FirstListPolicy,
    ) -> Self {
        Endpoint {
            hub,
            shutdown,
            first_list_policy: first_list,
            first_list: Arc::default(),
            agent_gone: CancellationToken::new(),
            handshake: Handshake::default(),
            initialized: Arc::default(),
            interest: Arc::default(),
            parks: Arc::default(),
            tasks: crate::hub::Tasks::default(),
            delivery: Arc::default(),
        }
    }

    /// The session's resource subscriptions and log level, shared with its serving loop.
    pub(crate) fn interest(&self) -> Arc<native::AgentInterest> {
        self.interest.clone()
    }

    /// The session's notice delivery count, shared with its notice forwarder and fast path.
    pub(crate) fn delivery(&self) -> Arc<crate::upstream::notice::Delivery> {
        self.delivery.clone()
    }

    /// Waits (once per session, at most the policy's wait) until every server has settled,
    /// so that what the agent is first told covers them.
    async fn settled(&self) {
        let wait = self.first_list_policy.wait;
        self.first_list
            .get_or_init(|| async {
                if !self.hub.wait_settled(wait).await {
                    tracing::info!(
                        "first tools/list answered after {} s with servers still starting",
                        wait.as_secs_f64()
                    );
                }
            })
            .await;
    }

    /// The session's first-listing latch: set once its first `tools/list` has waited for the
    /// servers to settle (shared with the fast path, which answers later listings).
    pub fn first_list(&self) -> Arc<tokio::sync::OnceCell<()>> {
        self.first_list.clone()
    }

    /// Calls still running when `gone` fires are dropped (which sends `notifications/cancelled`
    /// upstream): their agent has left and nobody would read their answers.
    #[must_use]
    pub fn with_agent_gone(mut self, gone: CancellationToken) -> Self {
        self.agent_gone = gone;
        self
    }

    /// Records this session's tasks in `tasks` (the table its relay uses too).
    #[must_use]
    pub fn with_tasks(mut self, tasks: crate::hub::Tasks) -> Self {
        self.tasks = tasks;
        self
    }

    /// Marks `handshake` done when the agent's `initialize` arrives.
    #[must_use]
    pub fn with_handshake(mut self, handshake: Handshake) -> Self {
        self.handshake = handshake;
        self
    }
}

/// A call's answer: `result`, or the JSON-RPC error it stands for when the server answered
/// with one the agent must see as an error ([`crate::hub::passed_error`]).
fn passed(result: rmcp::model::CallToolResult) -> Result<rmcp::model::CallToolResult, McpError> {
    match crate::hub::passed_error(&result) {
        Some(error) => Err(error),
        None => Ok(result),
    }
}
