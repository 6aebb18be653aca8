//! One routed call on an upstream session: `tools/call`, `resources/read` or `prompts/get`,
//! bounded by the server's `toolTimeout`, cancelled upstream when the agent cancels, with
//! progress forwarded, and the answer turned into a `tools/call` result (DESIGN §6, §7).
//!
//! | target | upstream request | result |
//! |---|---|---|
//! | tool | `tools/call` with the raw name | passed through unchanged (all content, `structuredContent`, `isError`) |
//! | resource | `resources/read` | text → text block; image/audio blob → image/audio block; other blob → embedded resource |
//! | resource template | `resources/read` of the expanded URI | as resource |
//! | prompt | `prompts/get` | one text block per message, prefixed with its role |
//!
//! Errors are classified by variant, never by message text: a JSON-RPC error from the server is
//! [`CallError::Rpc`] (shown to the agent as `isError` with the server's code and message, or
//! as the error itself for the codes `hub::forward` passes), a
//! timeout is [`CallError::Timeout`] (never retried), or [`CallError::NotSent`] when it passed
//! before a stdio server that stopped reading its input could be written the request (it did
//! not run; the session is only busy, so it is not retried either). A broken session is one of three, by what
//! is known about the request ([`CallError::certainly_not_delivered`]):
//!
//! | variant | when | did the server get the request? |
//! |---|---|---|
//! | [`CallError::NotDelivered`] | the session was closed before the send, the write failed, the connection was refused | no |
//! | [`CallError::SessionExpired`] | the server answered this very request "session gone" (HTTP 404, or 400 with a session error) | no |
//! | [`CallError::Transport`] | the connection broke while the request was in flight | unknown |
//! | [`CallError::Exited`] | the server's process exited while it was in flight (stdio) | unknown |
//! | [`CallError::SessionClosed`] | we closed the session (stop, restart, reload) while it was in flight | unknown |
//!
//! The hub retries the first two always and the last three only for tools that are safe to run
//! twice (`hub::route`). An answer that is no answer to the request (an HTTP body that is not
//! JSON, `202 Accepted`, …) is [`CallError::BadAnswer`]: the server got the request and the
//! session is fine, so it is never sent again.

mod error;
mod request;
mod result;
mod send;

use rmcp::model::{CallToolResult, ClientRequest, JsonObject, ProgressToken, ServerResult};
use rmcp::{Peer, RoleClient, RoleServer};
use tokio_util::sync::CancellationToken;

pub use error::CallError;
pub(super) use error::classify;
pub use result::tool_result_from_json;
pub use send::Clock;

use super::askers::Askers;
use super::mrtr;
use crate::catalog::Target;

/// The agent side of a call: who to send progress to, and the token that fires when the agent
/// sends `notifications/cancelled` or hangs up.
#[derive(Clone, Debug)]
pub struct Downstream {
    /// The agent's session.
    pub peer: Peer<RoleServer>,
    /// The agent's `_meta.progressToken`, if it asked for progress.
    pub progress_token: Option<ProgressToken>,
    /// The rest of the agent's request `_meta` the server is sent ([`forwarded_meta`]).
    pub meta: Option<JsonObject>,
    /// The agent's `tools/call` `arguments` as it wrote them; sent in place of the typed ones
    /// when the call sends the same arguments ([`super::exact`]).
    pub arguments: Option<std::sync::Arc<serde_json::value::RawValue>>,
    /// Cancelled when the agent cancels the request (and when its session ends).
    pub cancelled: CancellationToken,
    /// Cancelled when the companion shuts down; tells a shutdown from an agent's cancel.
    pub shutdown: CancellationToken,
    /// For an agent of the 2026-07-28 era: where the server's requests during the call go
    /// ([`super::relay`]); `None` sends them to `peer` as requests.
    pub relay: Option<super::relay::Relay>,
}

/// The keys of an agent's request `_meta` a server is sent with the call: all but
/// `progressToken` (the companion's own token replaces it) and the `io.modelcontextprotocol/`
/// keys of the 2026-07-28 envelope (the companion's session with the server has its own);
/// `None` when none is left.
pub fn forwarded_meta(meta: &JsonObject) -> Option<JsonObject> {
    let kept: JsonObject = meta
        .iter()
        .filter(|(k, _)| *k != "progressToken" && !k.starts_with("io.modelcontextprotocol/"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (!kept.is_empty()).then_some(kept)
}
/// The upstream session a call goes on.
#[derive(Clone, Copy)]
pub struct Upstream<'a> {
    /// Sends requests to the server.
    pub peer: &'a Peer<RoleClient>,
    /// The session's calls in flight ([`Askers::enter`]).
    pub askers: &'a Askers,
    /// A stdio session's writer to the server's stdin: a request still waiting to be written
    /// when the call gives up is withdrawn ([`crate::upstream::lane::FastLane::withdraw`]).
    pub stdin: Option<&'a crate::upstream::lane::FastLane>,
}

/// Calls `target` on `session`'s peer with `arguments`, within `clock` (its `idle` time counts from the
/// last progress the server reported for this call). While it is in flight the call
/// is registered in `askers` (the session's), so the server's `elicitation/create`,
/// `sampling/createMessage` and `roots/list` reach `downstream`'s agent.
///
/// # Errors
/// See [`CallError`]; the caller turns every error into an `isError` result, so an agent always
/// gets exactly one answer.
pub async fn call(
    session: Upstream<'_>,
    target: &Target,
    arguments: Option<JsonObject>,
    clock: Clock,
    downstream: Option<&Downstream>,
) -> Result<CallToolResult, CallError> {
    let request = request::build(target, arguments)?;
    let answer = rounds(session, request, clock, downstream).await?;
    result::into_tool_result(target, answer)
}

/// Sends `request` (`tools/call`, `prompts/get` or `resources/read`) as [`call`] does, and
/// answers the server's requests for input until it gives its result: a 2026-07-28 server asks
/// by answering `InputRequiredResult`, and the request is sent again with the answers
/// ([`mrtr`]), at most [`mrtr::MAX_ROUNDS`] times; each round lasts at most `clock`.
///
/// # Errors
/// As [`call`]; [`CallError::Unexpected`] after too many rounds.
pub async fn rounds(
    session: Upstream<'_>,
    mut request: ClientRequest,
    clock: Clock,
    downstream: Option<&Downstream>,
) -> Result<ServerResult, CallError> {
    for _round in 0..mrtr::MAX_ROUNDS {
        match send::send(session, request.clone(), clock, downstream).await? {
            ServerResult::InputRequiredResult(asked) => {
                let answers = mrtr::answer(asked, downstream, clock.idle).await?;
                mrtr::attach(&mut request, answers);
            }
            answer => return Ok(answer),
        }
    }
    Err(CallError::Unexpected {
        what: format!(
            "more than {} requests for input in one call",
            mrtr::MAX_ROUNDS
        ),
    })
}
