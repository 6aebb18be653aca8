//! What the companion does with a request an upstream server sends it: `elicitation/create`,
//! `sampling/createMessage` and `roots/list` go to the agent whose call is in flight
//! ([`Askers::pick`]) when that agent declared the capability; its answer
//! goes back to the server unchanged. Otherwise the companion answers itself, never on a
//! person's behalf:
//!
//! | request | agent picked and capable | otherwise |
//! |---|---|---|
//! | `elicitation/create` (form) | forwarded | the companion's [`Elicitor`](elicitor::Elicitor): the desktop app asks the person in its window; headless, `cancel` (nobody was asked, so nobody declined), logged with server and message |
//! | `elicitation/create` (url) | forwarded if the agent declared `elicitation.url` | the [`Elicitor`](elicitor::Elicitor), as above |
//! | `sampling/createMessage` | forwarded | JSON-RPC error -32603: no model is available through the companion |
//! | `roots/list` | forwarded | the entry's `roots` as `file://` URIs, else `[]` |
//!
//! "Forwarded" to an agent of the 2026-07-28 era, which cannot be sent requests, means put to
//! it through the call's [`Relay`](super::relay::Relay): its `tools/call` is answered with an
//! `InputRequiredResult` carrying the request, and its answer arrives with the call's retry.
//! "Declared the capability" then means in the call's `_meta` `clientCapabilities`.
//!
//! A forwarded request lasts at most the entry's `toolTimeout` (the call it belongs to cannot
//! outlive that either): then the agent gets `notifications/cancelled` and the server gets
//! `cancel` (elicitation) or a JSON-RPC error (the others). When the agent's call is cancelled
//! or the agent hangs up first, the agent's pending request is cancelled and the server gets a
//! JSON-RPC error; when the server cancels its request, the agent's is cancelled too.
#![expect(
    deprecated,
    reason = "sampling and roots are deprecated by SEP-2577 but 2025-era servers use them"
)]

use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::RoleClient;
use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientResult, CreateMessageRequest,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequest, ElicitRequestParams,
    ElicitResult, ElicitationAction, GetExtensions, ListRootsRequest, ListRootsResult,
    ServerRequest,
};
use rmcp::service::{InboundStreamOrigin, PeerRequestOptions, RequestContext, ServiceError};

use super::askers::{Asker, Askers};
use super::elicitor::{self, ElicitationRequest, SharedElicitor};
use super::relay::NoAnswer;
use super::roots::EntryRoots;

/// What one upstream session needs to answer its server's requests.
#[derive(Clone, Debug)]
pub struct AskContext {
    /// The server's name (for log lines and error texts).
    pub server: Arc<str>,
    /// The calls in flight on this session.
    pub askers: Askers,
    /// The entry's `roots`, as sent in `roots/list` when no agent answers.
    pub roots: EntryRoots,
    /// How long a forwarded request may wait for the agent, or the person: the entry's
    /// `toolTimeout`.
    pub timeout: Duration,
    /// Who answers `elicitation/create` when no calling agent can ([`elicitor::Headless`]
    /// unless [`AskContext::with_elicitor`] says otherwise).
    pub elicitor: SharedElicitor,
    /// Where the server's resource updates and log messages go for agents.
    pub notices: super::notice::Notices,
}

impl AskContext {
    /// The context of server `server`'s sessions.
    pub fn new(server: &str, askers: Askers, roots: EntryRoots, timeout: Duration) -> Self {
        AskContext {
            server: server.into(),
            askers,
            roots,
            timeout,
            elicitor: elicitor::headless(),
            notices: super::notice::Notices::default(),
        }
    }

    /// The same context, asking `elicitor` when no calling agent can answer `elicitation/create`.
    pub fn with_elicitor(self, elicitor: SharedElicitor) -> Self {
        AskContext { elicitor, ..self }
    }

    /// Where the server's log messages go.
    pub fn logs(&self) -> super::notice::ServerLogs {
        super::notice::ServerLogs {
            server: self.server.clone(),
            notices: self.notices.clone(),
        }
    }

    /// The same context, passing resource updates and log messages to `notices`.
    pub fn with_notices(self, notices: super::notice::Notices) -> Self {
        AskContext { notices, ..self }
    }
}

/// The three server requests an agent may answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Elicitation,
    Sampling,
    Roots,
}

impl Kind {
    fn method(self) -> &'static str {
        match self {
            Kind::Elicitation => "elicitation/create",
            Kind::Sampling => "sampling/createMessage",
            Kind::Roots => "roots/list",
        }
    }
}

/// Why a forwarded request produced no answer from the agent.
#[derive(Debug)]
enum Unanswered {
    /// The agent answered with a JSON-RPC error: passed to the server unchanged.
    Rpc(McpError),
    /// Nothing within the timeout.
    TimedOut,
    /// The agent's call ended (cancelled, or the agent hung up).
    CallEnded,
    /// The server cancelled its own request.
    ServerCancelled,
    /// The agent's session is gone or sent something that is not an answer.
    Broken(String),
}

/// `elicitation/create`: forwarded to a capable calling agent, else to the
/// [`Elicitor`](elicitor::Elicitor) (headless: `cancel`). The elicitor's request is withdrawn when the server cancels it or the
/// call in flight it was asked during is cancelled (or its agent hangs up).
///
/// # Errors
/// The agent's own JSON-RPC error, or -32603 when its call ended before it (or the person)
/// answered, or the server cancelled the request.
pub async fn elicit(
    cx: &AskContext,
    params: ElicitRequestParams,
    rcx: RequestContext<RoleClient>,
) -> Result<ElicitResult, McpError> {
    let (mode, message) = match &params {
        ElicitRequestParams::FormElicitationParams { message, .. } => ("form", message.clone()),
        ElicitRequestParams::UrlElicitationParams { message, .. } => ("url", message.clone()),
        // A mode newer than this build: no agent can be known to handle it.
        _ => ("unknown", String::new()),
    };
    let picked = pick(cx, &rcx);
    let capable = picked.clone().filter(|a| {
        a.capabilities()
            .elicitation
            .as_ref()
            .is_some_and(|e| match mode {
                // An empty `elicitation: {}` means form mode only (MCP 2025-11-25).
                "form" => e.form.is_some() || e.url.is_none(),
                "url" => e.url.is_some(),
                _ => false,
            })
    });
    let Some(asker) = capable else {
        let request = ElicitationRequest {
            server: cx.server.clone(),
            params,
            timeout: cx.timeout,
        };
        // The call it belongs to (when one is in flight) may be cancelled first.
        let call_ended = picked.map(|a| a.cancelled).unwrap_or_default();
        // Dropping the elicitor's future withdraws the request (the window takes its form down).
        return tokio::select! {
            result = cx.elicitor.elicit(request) => Ok(result),
            () = rcx.ct.cancelled() => Err(unanswered(cx, Kind::Elicitation, Unanswered::ServerCancelled)),
            () = call_ended.cancelled() => Err(unanswered(cx, Kind::Elicitation, Unanswered::CallEnded)),
        };
    };
    let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
    match forward(cx, &asker, request, &rcx).await {
        Ok(ClientResult::ElicitResult(result)) => Ok(result),
        Ok(_) => Err(not_an_answer(cx, Kind::Elicitation)),
        Err(Unanswered::TimedOut) => {
            tracing::warn!(server = %cx.server, message = %crate::net::capped(&message), timeout_s = cx.timeout.as_secs_f64(), "the agent did not answer elicitation/create in time: answered cancel");
            Ok(ElicitResult::new(ElicitationAction::Cancel))
        }
        Err(e) => Err(unanswered(cx, Kind::Elicitation, e)),
    }
}

/// `sampling/createMessage`: forwarded to a capable calling agent, else a JSON-RPC error.
///
/// # Errors
/// -32603 "no model is available through MCP Companion" when no agent can answer; the agent's
/// own error; -32603 when its call ended or it did not answer within the timeout.
pub async fn sample(
    cx: &AskContext,
    params: CreateMessageRequestParams,
    rcx: RequestContext<RoleClient>,
) -> Result<CreateMessageResult, McpError> {
    let capable = pick(cx, &rcx).filter(|a| a.capabilities().sampling.is_some());
    let Some(asker) = capable else {
        tracing::info!(server = %cx.server, "sampling/createMessage with no agent able to answer it: refused");
        return Err(McpError::internal_error(
            format!(
                "no model is available through MCP Companion: server \"{}\" asked for sampling/createMessage, but no agent that declared sampling has a call in flight on it",
                cx.server
            ),
            None,
        ));
    };
    let request = ServerRequest::CreateMessageRequest(CreateMessageRequest::new(params));
    match forward(cx, &asker, request, &rcx).await {
        Ok(ClientResult::CreateMessageResult(result)) => Ok(*result),
        Ok(_) => Err(not_an_answer(cx, Kind::Sampling)),
        Err(e) => Err(unanswered(cx, Kind::Sampling, e)),
    }
}

/// `roots/list`: forwarded to a capable calling agent, else the entry's roots (maybe none).
///
/// # Errors
/// The agent's own error; -32603 when its call ended or it did not answer within the timeout.
pub async fn list_roots(
    cx: &AskContext,
    rcx: RequestContext<RoleClient>,
) -> Result<ListRootsResult, McpError> {
    let capable = pick(cx, &rcx).filter(|a| a.capabilities().roots.is_some());
    let Some(asker) = capable else {
        return Ok(ListRootsResult::new(cx.roots.roots()));
    };
    let request = ServerRequest::ListRootsRequest(ListRootsRequest::default());
    match forward(cx, &asker, request, &rcx).await {
        Ok(ClientResult::ListRootsResult(result)) => Ok(result),
        Ok(_) => Err(not_an_answer(cx, Kind::Roots)),
        Err(e) => Err(unanswered(cx, Kind::Roots, e)),
    }
}

/// The calling agent for this server request, by the transport's link when there is one.
fn pick(cx: &AskContext, rcx: &RequestContext<RoleClient>) -> Option<Asker> {
    let related = match rcx.extensions.get::<InboundStreamOrigin>() {
        Some(InboundStreamOrigin::OutboundRequest(id)) => Some(id),
        _ => None,
    };
    cx.askers.pick(related)
}

/// Sends `request` to `asker` and waits for its answer, the timeout, the end of the agent's
/// call, or the server cancelling its request (`rcx`, the server's request), whichever comes
/// first. Any way but an answer, the agent's request is cancelled with
/// `notifications/cancelled`. The server's `_meta` goes with the request, its `progressToken`
/// as the server gave it ([`super::sent_token`]).
async fn forward(
    cx: &AskContext,
    asker: &Asker,
    request: ServerRequest,
    rcx: &RequestContext<RoleClient>,
) -> Result<ClientResult, Unanswered> {
    let server_cancelled = &rcx.ct;
    let mut options = PeerRequestOptions::with_timeout(cx.timeout);
    options.meta = super::call::forwarded_meta(&rcx.meta).map(Into::into);
    let mut request = request;
    if let Some(exact) = rcx.extensions.get::<super::exact::ExactParams>() {
        request.extensions_mut().insert(exact.clone());
    }
    if let Some(token) = rcx.meta.get_progress_token() {
        request
            .extensions_mut()
            .insert(super::sent_token::SenderToken(token));
    }
    if let Some(relay) = &asker.relay {
        // A 2026-07-28 agent: the endpoint puts the request to it in an `InputRequiredResult`.
        let due = tokio::time::Instant::now() + cx.timeout;
        return tokio::select! {
            answer = relay.ask(request, due) => answer.map_err(|e| match e {
                NoAnswer::TimedOut => Unanswered::TimedOut,
                NoAnswer::CallEnded => Unanswered::CallEnded,
            }),
            () = asker.cancelled.cancelled() => Err(Unanswered::CallEnded),
            () = server_cancelled.cancelled() => Err(Unanswered::ServerCancelled),
        };
    }
    let handle = asker
        .peer
        .send_request_with_option(request, options)
        .await
        .map_err(|e| Unanswered::Broken(super::error_text::describe(&e)))?;
    let id = handle.id.clone();
    let (why, reason) = tokio::select! {
        answer = handle.await_response() => return answer.map_err(|e| match e {
            ServiceError::McpError(err) => Unanswered::Rpc(err),
            // rmcp sent notifications/cancelled to the agent already.
            ServiceError::Timeout { .. } => Unanswered::TimedOut,
            other => Unanswered::Broken(super::error_text::describe(&other)),
        }),
        () = asker.cancelled.cancelled() => (Unanswered::CallEnded, "the call it belongs to ended"),
        () = server_cancelled.cancelled() => (Unanswered::ServerCancelled, "the server cancelled its request"),
    };
    let note = CancelledNotification::new(CancelledNotificationParam::new(
        Some(id),
        Some(reason.into()),
    ));
    // The agent may be gone already (that can be why the call ended).
    let _ = asker.peer.send_notification(note.into()).await;
    Err(why)
}

fn unanswered(cx: &AskContext, kind: Kind, e: Unanswered) -> McpError {
    let method = kind.method();
    let server = &cx.server;
    match e {
        Unanswered::Rpc(err) => err,
        Unanswered::TimedOut => McpError::internal_error(
            format!(
                "the agent did not answer {method} within {} s (toolTimeout of server \"{server}\")",
                cx.timeout.as_secs_f64()
            ),
            None,
        ),
        Unanswered::CallEnded => McpError::internal_error(
            format!(
                "the agent's call ended (cancelled, or the agent disconnected) before it answered {method}"
            ),
            None,
        ),
        Unanswered::ServerCancelled => {
            McpError::internal_error(format!("{method} was cancelled"), None)
        }
        Unanswered::Broken(why) => McpError::internal_error(
            format!("could not reach the agent for {method}: {why}"),
            None,
        ),
    }
}

fn not_an_answer(cx: &AskContext, kind: Kind) -> McpError {
    McpError::internal_error(
        format!(
            "the agent answered {} for server \"{}\" with a result of another kind",
            kind.method(),
            cx.server
        ),
        None,
    )
}
