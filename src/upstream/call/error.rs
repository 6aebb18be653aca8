//! Why a call produced no upstream result ([`CallError`]), and the error of a request whose send
//! or answer failed ([`classify`]).

use std::time::Duration;

use rmcp::service::ServiceError;

use crate::upstream::bad_answer::BadAnswer;

/// The most bytes of a server's stderr line quoted in [`CallError::Exited`].
pub const STDERR_QUOTE_MAX: usize = 300;

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
    /// `toolTimeout` passed while the request still waited to be written: the server had
    /// stopped reading its input (stdio), so it never got the request and the call did not
    /// run. Nothing was sent upstream, no `notifications/cancelled` either; the session goes
    /// on (it is not broken, only busy), so the call is not sent again.
    #[error(
        "timed out after {} s before the request could be sent: the server is not reading its \
         input, so the call was not delivered and did not run",
        fmt_secs(*timeout)
    )]
    NotSent {
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
    /// The server's process (stdio) exited while the request was in flight: the server may or
    /// may not have run it. Built from a [`CallError::Transport`] or
    /// [`CallError::SessionClosed`] once the exit is known ([`crate::upstream::ending`]).
    #[error("{}", exited_text(how, last_stderr.as_deref()))]
    Exited {
        /// How it exited: `exit code 3`, `signal 9 (SIGKILL)`.
        how: String,
        /// The last line the process wrote to stderr (masked; capped and escaped when shown).
        last_stderr: Option<String>,
    },
    /// The server got the request and answered with something that is no answer to it (a
    /// streamable HTTP answer of the wrong content type, not JSON, empty, `202 Accepted`, a
    /// JSON-RPC error for another request): it may have run it. The session goes on.
    #[error("{0}")]
    BadAnswer(BadAnswer),
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
                | CallError::Exited { .. }
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
            CallError::NotDelivered { .. } | CallError::SessionExpired | CallError::NotSent { .. }
        )
    }
}

/// [`CallError::Exited`]'s text: `the server's process exited during the call (exit code 3);
/// its last stderr line: "panic: boom"` (the line capped at [`STDERR_QUOTE_MAX`] bytes and
/// quoted with its control characters escaped).
fn exited_text(how: &str, last_stderr: Option<&str>) -> String {
    let mut out = format!("the server's process exited during the call ({how})");
    if let Some(line) = last_stderr {
        out.push_str(&format!(
            "; its last stderr line: {:?}",
            crate::net::capped_at(line, STDERR_QUOTE_MAX)
        ));
    }
    out
}

fn fmt_secs(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0}")
    } else {
        format!("{secs}")
    }
}
/// The [`CallError`] of a request whose send or answer failed with `e`.
pub(in crate::upstream) fn classify(e: ServiceError) -> CallError {
    if crate::upstream::http::is_session_expired(&e) {
        return CallError::SessionExpired;
    }
    if let ServiceError::TransportSend(send) = &e
        && let Some(bad) = BadAnswer::find(send.error.as_ref())
    {
        return CallError::BadAnswer(bad);
    }
    // The transport failed to send this very request: unless it was an HTTP request whose
    // fate is unknown (the connection broke after it went out), the server never saw it.
    if let ServiceError::TransportSend(send) = &e
        && !crate::upstream::http::maybe_delivered(send.error.as_ref())
    {
        return CallError::NotDelivered {
            reason: crate::upstream::error_text::describe(&e),
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
            reason: crate::upstream::error_text::describe(&e),
        },
        other => CallError::Unexpected {
            what: crate::upstream::error_text::describe(&other),
        },
    }
}
