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
//! timeout is [`CallError::Timeout`] (never retried). A broken session is one of three, by what
//! is known about the request ([`CallError::certainly_not_delivered`]):
//!
//! | variant | when | did the server get the request? |
//! |---|---|---|
//! | [`CallError::NotDelivered`] | the session was closed before the send, the write failed, the connection was refused | no |
//! | [`CallError::SessionExpired`] | the server answered this very request "session gone" (HTTP 404, or 400 with a session error) | no |
//! | [`CallError::Transport`] | the connection broke while the request was in flight | unknown |
//! | [`CallError::SessionClosed`] | we closed the session (stop, restart, reload) while it was in flight | unknown |
//!
//! The hub retries the first two always and the last two only for tools that are safe to run
//! twice (`hub::route`).

use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientRequest, ContentBlock, GetExtensions, GetPromptRequest,
    GetPromptRequestParams, GetPromptResult, JsonObject, ProgressNotificationParam, ProgressToken,
    ReadResourceRequest, ReadResourceRequestParams, ReadResourceResult, RequestId,
    ResourceContents, Role, ServerResult,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use rmcp::{Peer, RoleClient, RoleServer};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::askers::{Asker, Askers};
use super::mrtr;
use super::progress::{self, ProgressFeed};
use crate::catalog::{Target, uri_template};

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

/// [`CallError::Transport`]'s text: a refusal an HTTP server answered is no lost connection.
fn lost_text(reason: &str) -> String {
    if reason.starts_with("HTTP ") {
        format!("the server refused the request: {reason}")
    } else {
        format!("connection to the server was lost: {reason}")
    }
}

/// Why a call produced no upstream result.
#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum CallError {
    /// The server did not answer within `toolTimeout`; `notifications/cancelled` was sent.
    #[error("timed out after {} s", fmt_secs(*timeout))]
    Timeout {
        /// The configured `toolTimeout`.
        timeout: Duration,
    },
    /// The server answered with a JSON-RPC error.
    #[error("{message} (JSON-RPC error {code})")]
    Rpc {
        /// JSON-RPC error code.
        code: i32,
        /// The server's message, unchanged.
        message: String,
        /// The error's `data` member, unchanged (passed on by native requests).
        data: Option<serde_json::Value>,
    },
    /// The session broke (process exited, connection closed) while the request was in flight,
    /// or an HTTP server refused the request with a status (`reason` starts `HTTP `): the
    /// server may or may not have run it.
    #[error("{}", lost_text(reason))]
    Transport {
        /// What rmcp reported.
        reason: String,
    },
    /// The request never reached the server: the session was already closed, the write
    /// failed, or the connection was refused.
    #[error("could not send the request: {reason}")]
    NotDelivered {
        /// What failed.
        reason: String,
    },
    /// The HTTP server answered this request "no such session" (HTTP 404 on the session id,
    /// MCP 2025-03-26 "Session Management", or a 400 whose error names the session): it did
    /// not run it. Reconnect, then retry.
    #[error("the server ended the session")]
    SessionExpired,
    /// The agent cancelled the call.
    #[error("cancelled by the client")]
    Cancelled,
    /// The companion began shutting down while the call was in flight.
    #[error("the companion is shutting down")]
    ShuttingDown,
    /// Our session to the server was closed while the call was in flight (the server was
    /// stopped, restarted or removed).
    #[error("the server was stopped while the call was in flight")]
    SessionClosed,
    /// The arguments could not be turned into an upstream request.
    #[error("invalid arguments: {reason}")]
    Arguments {
        /// What was wrong.
        reason: String,
    },
    /// The server answered with something other than the expected result.
    #[error("unexpected answer from the server: {what}")]
    Unexpected {
        /// What arrived instead.
        what: String,
    },
}

impl CallError {
    /// Whether the session the call was sent on is broken, so a new one is needed.
    pub fn breaks_session(&self) -> bool {
        matches!(
            self,
            CallError::Transport { .. }
                | CallError::NotDelivered { .. }
                | CallError::SessionExpired
                | CallError::SessionClosed
        )
    }

    /// Whether the server certainly did not run the request, so sending it again on a new
    /// session cannot run it twice (the retry rule of `hub::route`).
    pub fn certainly_not_delivered(&self) -> bool {
        matches!(
            self,
            CallError::NotDelivered { .. } | CallError::SessionExpired
        )
    }
}

fn fmt_secs(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0}")
    } else {
        format!("{secs}")
    }
}

/// When an attempt times out: `idle` after the later of its start and its last progress
/// notification (as the SDKs' `resetTimeoutOnProgress`), and in any case `max` after its
/// start. The hub decides both (`hub::forward`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    /// `toolTimeout`: how long the server may stay silent.
    pub idle: Duration,
    /// The hard maximum of one attempt, progress or not.
    pub max: Duration,
}

impl Clock {
    /// The deadline of an attempt that started at `started` and last reported progress at
    /// `last_progress` (its start when it reported none).
    pub fn due(&self, started: Instant, last_progress: Instant) -> Instant {
        (last_progress + self.idle).min(started + self.max)
    }

    /// The error of an attempt that reached [`Self::due`] at `now`.
    fn timed_out(&self, started: Instant, now: Instant) -> CallError {
        let timeout = if now >= started + self.max {
            self.max
        } else {
            self.idle
        };
        CallError::Timeout { timeout }
    }
}

/// Calls `target` on `peer` with `arguments`, within `clock` (its `idle` time counts from the
/// last progress the server reported for this call). While it is in flight the call
/// is registered in `askers` (the session's), so the server's `elicitation/create`,
/// `sampling/createMessage` and `roots/list` reach `downstream`'s agent.
///
/// # Errors
/// See [`CallError`]; the caller turns every error into an `isError` result, so an agent always
/// gets exactly one answer.
pub async fn call(
    peer: &Peer<RoleClient>,
    askers: &Askers,
    target: &Target,
    arguments: Option<JsonObject>,
    clock: Clock,
    downstream: Option<&Downstream>,
) -> Result<CallToolResult, CallError> {
    let request = build_request(target, arguments)?;
    let answer = rounds(peer, askers, request, clock, downstream).await?;
    into_tool_result(target, answer)
}

/// Sends `request` (`tools/call`, `prompts/get` or `resources/read`) as [`call`] does, and
/// answers the server's requests for input until it gives its result: a 2026-07-28 server asks
/// by answering `InputRequiredResult`, and the request is sent again with the answers
/// ([`mrtr`]), at most [`mrtr::MAX_ROUNDS`] times; each round lasts at most `clock`.
///
/// # Errors
/// As [`call`]; [`CallError::Unexpected`] after too many rounds.
pub async fn rounds(
    peer: &Peer<RoleClient>,
    askers: &Askers,
    mut request: ClientRequest,
    clock: Clock,
    downstream: Option<&Downstream>,
) -> Result<ServerResult, CallError> {
    for _round in 0..mrtr::MAX_ROUNDS {
        match send(peer, askers, request.clone(), clock, downstream).await? {
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

/// One round of [`call`]: sends `request` and waits for its answer.
async fn send(
    peer: &Peer<RoleClient>,
    askers: &Askers,
    request: ClientRequest,
    clock: Clock,
    downstream: Option<&Downstream>,
) -> Result<ServerResult, CallError> {
    // The deadline is ours (below), not rmcp's: progress moves it.
    let mut options = PeerRequestOptions::no_options();
    options.meta = downstream
        .and_then(|d| d.meta.clone())
        .map(rmcp::model::RequestMetaObject::from);
    let started = Instant::now();
    let mut last_progress = started;

    let mut request = request;
    if let (Some(arguments), ClientRequest::CallToolRequest(call)) =
        (downstream.and_then(|d| d.arguments.as_ref()), &mut request)
        && let Some(exact) = super::exact::same_arguments(arguments, call.params.arguments.as_ref())
    {
        call.extensions.insert(exact);
    }
    let mut feed = downstream.and_then(|d| {
        let token = d.progress_token.clone()?;
        let (sink, feed) = progress::channel(d.peer.clone(), token);
        request.extensions_mut().insert(sink);
        Some(feed)
    });
    // Entered before the request goes out: the server may ask before we see the id.
    let asking = downstream.map(|d| {
        askers.enter(Asker {
            peer: d.peer.clone(),
            cancelled: d.cancelled.clone(),
            relay: d.relay.clone(),
        })
    });
    // An error here means the request was never handed to the transport.
    let handle = peer
        .send_request_with_option(request, options)
        .await
        .map_err(|e| match e {
            ServiceError::TransportClosed => CallError::NotDelivered {
                reason: "the session was already closed".to_owned(),
            },
            other => classify(other),
        })?;
    if let Some(asking) = &asking {
        asking.set_request_id(handle.id.clone());
    }

    let mut guard = CancelOnDrop {
        peer: peer.clone(),
        id: Some(handle.id.clone()),
        reason: "cancelled by the client",
    };
    let never = CancellationToken::new();
    let cancelled = downstream.map(|d| &d.cancelled).unwrap_or(&never);
    let response = handle.await_response();
    tokio::pin!(response);
    let answer = loop {
        let due = clock.due(started, last_progress);
        tokio::select! {
            biased;
            () = cancelled.cancelled() => {
                // The guard sends notifications/cancelled upstream as it drops.
                if downstream.is_some_and(|d| d.shutdown.is_cancelled()) {
                    guard.reason = "the companion is shutting down";
                    return Err(CallError::ShuttingDown);
                }
                return Err(CallError::Cancelled);
            }
            () = tokio::time::sleep_until(due) => {
                // The guard sends notifications/cancelled upstream as it drops.
                guard.reason = "request timeout";
                return Err(clock.timed_out(started, Instant::now()));
            }
            progress = next_progress(&mut feed) => {
                last_progress = Instant::now();
                // Forwarded here, not in the branch future: a response arriving meanwhile must
                // not cancel a forward half-way.
                if let Some(feed) = &feed {
                    feed.forward(progress).await;
                }
            }
            answer = &mut response => break answer,
        }
    };
    // Progress the server sent before its response is queued by now (see `progress`); it
    // must reach the agent before the response does.
    if let Some(feed) = &mut feed {
        feed.flush().await;
    }
    guard.id = None;
    answer.map_err(|e| match e {
        ServiceError::Timeout { timeout } => CallError::Timeout { timeout },
        other => classify(other),
    })
}

/// The next progress notification of this call, or never when the agent asked for none.
async fn next_progress(feed: &mut Option<ProgressFeed>) -> ProgressNotificationParam {
    match feed {
        Some(feed) => feed.next().await,
        None => std::future::pending().await,
    }
}

fn build_request(
    target: &Target,
    arguments: Option<JsonObject>,
) -> Result<ClientRequest, CallError> {
    Ok(match target {
        Target::Tool { name } => {
            let mut params = CallToolRequestParams::new(name.clone());
            params.arguments = arguments;
            ClientRequest::CallToolRequest(CallToolRequest::new(params))
        }
        Target::Resource { uri } => ClientRequest::ReadResourceRequest(ReadResourceRequest::new(
            ReadResourceRequestParams::new(uri.clone()),
        )),
        Target::ResourceTemplate { uri_template } => {
            let args = arguments.unwrap_or_default();
            let uri =
                uri_template::expand(uri_template, &args).map_err(|e| CallError::Arguments {
                    reason: e.to_string(),
                })?;
            ClientRequest::ReadResourceRequest(ReadResourceRequest::new(
                ReadResourceRequestParams::new(uri),
            ))
        }
        Target::Prompt { name, .. } => {
            let mut params = GetPromptRequestParams::new(name.clone());
            params.arguments = arguments.map(stringify_values);
            ClientRequest::GetPromptRequest(GetPromptRequest::new(params))
        }
    })
}

/// Prompt arguments are strings on the wire; agents sometimes send numbers or booleans.
fn stringify_values(args: JsonObject) -> JsonObject {
    args.into_iter()
        .map(|(k, v)| {
            let v = match v {
                serde_json::Value::String(s) => serde_json::Value::String(s),
                other => serde_json::Value::String(other.to_string()),
            };
            (k, v)
        })
        .collect()
}

/// The [`CallError`] of a request whose send or answer failed with `e`.
pub(super) fn classify(e: ServiceError) -> CallError {
    if super::http::is_session_expired(&e) {
        return CallError::SessionExpired;
    }
    // The transport failed to send this very request: unless it was an HTTP request whose
    // fate is unknown (the connection broke after it went out), the server never saw it.
    if let ServiceError::TransportSend(send) = &e
        && !super::http::maybe_delivered(send.error.as_ref())
    {
        return CallError::NotDelivered {
            reason: super::error_text::describe(&e),
        };
    }
    // Transport errors quote reqwest, which quotes the request URL: `describe` redacts every
    // URL and masks every remembered secret. The server's own message keeps its links.
    match e {
        ServiceError::McpError(err) => CallError::Rpc {
            code: err.code.0,
            message: crate::net::scrub_known(&err.message),
            data: err.data,
        },
        ServiceError::Timeout { timeout } => CallError::Timeout { timeout },
        ServiceError::Cancelled { .. } => CallError::SessionClosed,
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => CallError::Transport {
            reason: super::error_text::describe(&e),
        },
        other => CallError::Unexpected {
            what: super::error_text::describe(&other),
        },
    }
}

/// The `tools/call` result in `raw` (the `result` member of a JSON-RPC response), judged as
/// [`call`] judges a decoded one: the fast path's way for results it does not pass through.
///
/// # Errors
/// [`CallError::Unexpected`] when `raw` is not a `tools/call` result.
pub fn tool_result_from_json(raw: &str) -> Result<CallToolResult, CallError> {
    let answer: ServerResult = serde_json::from_str(raw).map_err(|e| CallError::Unexpected {
        what: format!("the server sent an invalid result: {e}"),
    })?;
    let target = Target::Tool {
        name: String::new(),
    };
    into_tool_result(&target, answer)
}

fn into_tool_result(target: &Target, answer: ServerResult) -> Result<CallToolResult, CallError> {
    match (target, answer) {
        (Target::Tool { .. }, ServerResult::CallToolResult(result)) => Ok(result),
        // Content blocks of a type rmcp does not know, or members it does not expect.
        (Target::Tool { .. }, ServerResult::CustomResult(custom))
            if let Some(result) = super::exact::tool_result(custom.0.clone()) =>
        {
            Ok(result)
        }
        (
            Target::Resource { .. } | Target::ResourceTemplate { .. },
            ServerResult::ReadResourceResult(r),
        ) => Ok(resource_result(r)),
        (Target::Prompt { .. }, ServerResult::GetPromptResult(r)) => Ok(prompt_result(r)),
        (_, ServerResult::CreateTaskResult(_)) => Err(CallError::Unexpected {
            what: "a task handle (task-augmented calls are not supported yet)".into(),
        }),
        (target, other) => Err(CallError::Unexpected {
            what: describe_result(target, &other),
        }),
    }
}

/// "a result with fields tools, nextCursor where tools/call expects content": what arrived,
/// by its JSON field names (never a Rust `Debug` dump).
fn describe_result(target: &Target, result: &ServerResult) -> String {
    let expected = match target {
        Target::Tool { .. } => "tools/call expects content",
        Target::Resource { .. } | Target::ResourceTemplate { .. } => {
            "resources/read expects contents"
        }
        Target::Prompt { .. } => "prompts/get expects messages",
    };
    let value = serde_json::to_value(result).unwrap_or_default();
    if let Some(problem) = super::error_text::content_problem(&value) {
        return format!("the server sent an invalid result: {problem}");
    }
    let fields = match value {
        serde_json::Value::Object(map) if !map.is_empty() => {
            let names: Vec<&str> = map.keys().map(String::as_str).take(8).collect();
            format!("a result with fields {}", names.join(", "))
        }
        _ => "an empty result".to_owned(),
    };
    format!("{fields} where {expected}")
}

fn resource_result(read: ReadResourceResult) -> CallToolResult {
    let content = read
        .contents
        .into_iter()
        .map(|item| match item {
            ResourceContents::TextResourceContents { text, .. } => ContentBlock::text(text),
            ResourceContents::BlobResourceContents {
                blob,
                mime_type: Some(mime),
                ..
            } if mime.starts_with("image/") => ContentBlock::image(blob, mime),
            ResourceContents::BlobResourceContents {
                blob,
                mime_type: Some(mime),
                ..
            } if mime.starts_with("audio/") => ContentBlock::audio(blob, mime),
            blob => ContentBlock::resource(blob),
        })
        .collect();
    CallToolResult::success(content)
}

fn prompt_result(prompt: GetPromptResult) -> CallToolResult {
    let content = prompt
        .messages
        .into_iter()
        .map(|m| {
            let role = match m.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            match m.content {
                ContentBlock::Text(t) => ContentBlock::text(format!("{role}: {}", t.text)),
                other => other,
            }
        })
        .collect();
    CallToolResult::success(content)
}

/// Sends `notifications/cancelled` for a request whose caller went away before the answer.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
    /// The `reason` of the notification.
    reason: &'static str,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        let reason = self.reason;
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        rt.spawn(async move {
            let note = CancelledNotification::new(CancelledNotificationParam::new(
                Some(id),
                Some(reason.into()),
            ));
            let _ = peer.send_notification(note.into()).await;
        });
    }
}
