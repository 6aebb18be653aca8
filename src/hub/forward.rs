//! [`Forward`]: the rules of one forwarded call, written once for both forwarding paths
//! (DESIGN §7). [`Hub::call`](super::Hub::call) (the rmcp path, `route.rs`) and the agent
//! endpoint's fast path (raw JSON on a stdio server's fast lane) each drive one `Forward` per
//! agent call; neither decides a deadline, a retry or an error text of its own.
//!
//! ```text
//! Forward::new(route, server) ── timeout() ──▶ the attempt's deadline: the server's toolTimeout
//!      ▼
//! an attempt fails with CallError e ── judge(e) ─┬─ Retry: a new session, one more attempt
//!                                                └─ Fail(isError result): the agent's answer
//! ```
//!
//! **The deadline.** An attempt times out `toolTimeout` after the later of its start and the
//! last `notifications/progress` the server sent for it (as the SDKs' `resetTimeoutOnProgress`),
//! and in any case [`MAX_TIMEOUT_FACTOR`] × `toolTimeout` after its start, progress or not
//! ([`Forward::clock`]). Only a call whose agent asked for progress gets any (the fast path
//! leaves those to the rmcp path), so the others time out `toolTimeout` after their start.
//!
//! **The arguments.** A `tools/call` without `arguments` (or with `null`) is forwarded with
//! `{}` when the server's `inputSchema` of the tool is `"type": "object"`: servers that
//! validate the arguments as an object reject a missing one ([`Forward::arguments`],
//! [`Forward::raw_arguments`]).
//!
//! **The retry rule.** A failed attempt is sent again — once, on a new session — only when its
//! session broke ([`CallError::breaks_session`]) and sending it again cannot run it twice: the
//! request certainly never reached the server ([`CallError::certainly_not_delivered`]: the
//! session was already closed, the write failed, the connection was refused, or the server
//! answered this very request "no such session"), or the tool declares `readOnlyHint` or
//! `idempotentHint` (wrapped resources and prompts are read-only). Otherwise the agent gets an
//! `isError` result saying the connection was lost (or the server's process exited, quoting
//! its exit status and last stderr line) and the call may or may not have run. An answer that
//! is no answer ([`CallError::BadAnswer`]: the session is fine, the server got the request) is
//! never sent again; its text says the call may have run.
//! JSON-RPC errors and timeouts are answers, never retried; so is a request whose
//! `toolTimeout` passed before it could be written to a stdio server that stopped reading its
//! input ([`CallError::NotSent`]: it did not run, but the session is only busy, and a retry
//! would wait behind the same full pipe).
//!
//! The deadline covers the write: on both paths a request still waiting to be written at its
//! deadline is given up and answered then, not when the server reads again. The rule is the same for stdio
//! crashes and remote sessions, and for both paths: a fast-path attempt that is retried
//! spends the call's one retry.
//!
//! **The texts.** Every failure names the server: `server "x" returned an error: <message>
//! (JSON-RPC error <code>)` for a JSON-RPC error, `server "x": <why>` otherwise, plus, for a
//! lost connection that is not retried, that the call may or may not have run.
//!
//! **Errors the agent must act on.** A JSON-RPC error whose code asks the client to do
//! something before calling again ([`PASSED_ERROR_CODES`]: -32042, MCP 2025-11-25
//! client/elicitation "URL Elicitation Required") reaches the agent as that JSON-RPC error, its
//! `data` intact (known secrets masked): an `isError` text would hide the URLs it carries. The
//! failed result keeps it under [`PASSED_ERROR_KEY`] in `_meta` until the endpoint answers
//! ([`passed_error`]); every other JSON-RPC error stays an `isError` result.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock, ErrorCode, ErrorData, JsonObject, MetaObject};

use crate::catalog::Route;
use crate::config::DEFAULT_TOOL_TIMEOUT;
use crate::supervisor::ServerHandle;
use crate::upstream::call::{CallError, Clock};

/// The hard maximum of one attempt, in multiples of its `toolTimeout`: progress moves the
/// deadline, but never past 10 × `toolTimeout` after the attempt started (5 minutes at the
/// default 30 s).
pub const MAX_TIMEOUT_FACTOR: u32 = 10;

/// One agent call's forwarding state: its server, its deadline and whether its one retry is
/// spent. Made once per agent call and handed from attempt to attempt (and from the fast path
/// to the rmcp path), so the retry budget is the call's, not the path's.
#[derive(Clone, Debug)]
pub struct Forward {
    server: Arc<str>,
    /// The wrapped name the agent called (for the log lines).
    tool: String,
    retry_safe: bool,
    /// Whether a call without arguments forwards `{}` (the tool's schema is an object).
    object_arguments: bool,
    timeout: Duration,
    retried: bool,
}

/// What happens after a failed attempt ([`Forward::judge`]).
#[derive(Debug)]
pub enum Verdict {
    /// Get a new session (reconnect) and send the call once more.
    Retry,
    /// The call is over: this `isError` result is the agent's answer.
    Fail(CallToolResult),
}

impl Forward {
    /// The state of a call to the wrapped tool `tool` along `route`, on `server`.
    pub fn new(tool: &str, route: &Route, server: &ServerHandle) -> Forward {
        let mut forward = Forward::with(
            route.server.clone(),
            tool,
            route.retry_safe,
            server
                .config()
                .map_or(DEFAULT_TOOL_TIMEOUT, |c| c.tool_timeout),
        );
        forward.object_arguments = route.object_arguments;
        forward
    }

    /// The state of a call to `tool` on `server` with these rules (what [`Self::new`] reads
    /// from the route and the config); its arguments are forwarded as given.
    pub fn with(server: Arc<str>, tool: &str, retry_safe: bool, timeout: Duration) -> Forward {
        Forward {
            server,
            tool: tool.to_owned(),
            retry_safe,
            object_arguments: false,
            timeout,
            retried: false,
        }
    }

    /// The same call with `{}` forwarded for missing arguments when `object` (the tool's
    /// schema is an object).
    pub fn object_arguments(mut self, object: bool) -> Forward {
        self.object_arguments = object;
        self
    }

    /// The server's `toolTimeout`: an attempt without progress times out this long after its
    /// start (on expiry the path sends `notifications/cancelled` upstream and the attempt fails
    /// with [`CallError::Timeout`]).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The deadline rule of each attempt (module doc): `toolTimeout` from the last progress,
    /// at most [`MAX_TIMEOUT_FACTOR`] × `toolTimeout` from the start.
    pub fn clock(&self) -> Clock {
        Clock {
            idle: self.timeout,
            max: self.timeout.saturating_mul(MAX_TIMEOUT_FACTOR),
        }
    }

    /// The arguments to forward for the agent's `given` ones: `{}` in place of none when the
    /// tool's schema is an object.
    pub fn arguments(&self, given: Option<JsonObject>) -> Option<JsonObject> {
        match given {
            None if self.object_arguments => Some(JsonObject::new()),
            given => given,
        }
    }

    /// [`Self::arguments`] for the raw JSON text of the agent's `arguments` member: `None`
    /// (the member is left out) or the text to send; `null` counts as none.
    pub fn raw_arguments<'a>(&self, given: Option<&'a str>) -> Option<&'a str> {
        match given.filter(|a| *a != "null") {
            None if self.object_arguments => Some("{}"),
            given => given,
        }
    }

    /// The server name, as configured.
    pub fn server(&self) -> &Arc<str> {
        &self.server
    }

    /// Judges a failed attempt by its variant (see the module doc): [`Verdict::Retry`] at most
    /// once per call, else the agent's `isError` answer. Logs which it was.
    pub fn judge(&mut self, e: &CallError) -> Verdict {
        let safe = e.certainly_not_delivered() || self.retry_safe;
        if e.breaks_session() && safe && !self.retried {
            self.retried = true;
            tracing::info!(server = %self.server, tool = %self.tool, error = %crate::net::capped(&e.to_string()), "session broke; reconnecting to send the call again on a new session");
            return Verdict::Retry;
        }
        Verdict::Fail(self.fail(e))
    }

    /// The agent's answer to a call that ended with `e` and cannot go on (no retry is
    /// considered: the agent's arguments were bad, the companion is shutting down).
    pub fn fail(&self, e: &CallError) -> CallToolResult {
        tracing::info!(server = %self.server, tool = %self.tool, error = %crate::net::capped(&e.to_string()), "call failed");
        let mut result = error_result(describe_failure(&self.server, e, self.retry_safe));
        if let CallError::Rpc {
            code,
            message,
            data,
        } = e
            && PASSED_ERROR_CODES.contains(code)
        {
            let error = serde_json::json!({ "code": code, "message": message, "data": data });
            result
                .meta
                .get_or_insert_with(MetaObject::new)
                .insert(PASSED_ERROR_KEY.to_owned(), error);
        }
        result
    }

    /// The agent's answer when a retry was due after `e` but no session came: the reconnect
    /// failed (`why`) and the server did not come back either (`unavailable`, what the wait
    /// for it said).
    pub fn no_session(&self, e: &CallError, why: &str, unavailable: &str) -> CallToolResult {
        tracing::info!(server = %self.server, tool = %self.tool, error = %crate::net::capped(why), "no session to retry on");
        // Nothing was retried, so the text is that of a safe call: the caveat about a second
        // run does not apply.
        error_result(format!(
            "{}; {unavailable}",
            describe_failure(&self.server, e, true)
        ))
    }
}

/// The text of a failed call: `server "x" returned an error: <message> (JSON-RPC error <code>)`
/// for a JSON-RPC error; for a lost connection or an exited process when the call is not
/// `retry_safe`, that it may or may not have run; for an answer that is no answer, that the
/// server got the request, so the call may have run; `server "x": <why>` otherwise.
pub fn describe_failure(server: &str, e: &CallError, retry_safe: bool) -> String {
    match e {
        CallError::Rpc { .. } => format!("server \"{server}\" returned an error: {e}"),
        CallError::Transport { .. } | CallError::Exited { .. } | CallError::SessionClosed
            if !retry_safe =>
        {
            format!(
                "server \"{server}\": {e}. The call may or may not have run; it was not sent \
                 again because the tool does not declare readOnlyHint or idempotentHint"
            )
        }
        CallError::BadAnswer(_) => format!(
            "server \"{server}\": {e}. The server got the request, so the call may have run; \
             it was not sent again"
        ),
        _ => format!("server \"{server}\": {e}"),
    }
}

/// An `isError` result with `message` as its one text block, every known secret masked
/// ([`crate::net::scrub_known`]: the message may quote a server that echoed one).
pub fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(crate::net::scrub_known(&message))])
}

/// `result` with every known secret masked in its text blocks and `structuredContent` when
/// it is an `isError` result (SECURITY.md: known secrets are masked in every error result);
/// other results pass unchanged.
pub fn masked(mut result: CallToolResult) -> CallToolResult {
    if result.is_error != Some(true) {
        return result;
    }
    crate::upstream::exact::masked(&mut result);
    for block in &mut result.content {
        if let ContentBlock::Text(text) = block {
            let masked = crate::net::scrub_known(&text.text);
            if masked != text.text {
                text.text = masked;
            }
        }
    }
    if let Some(structured) = &mut result.structured_content {
        crate::net::scrub_known_value(structured);
    }
    result
}

/// JSON-RPC error codes a server's answer to a call keeps on its way to the agent: -32042,
/// URL Elicitation Required (MCP 2025-11-25 client/elicitation, "URL mode"), whose `data.elicitations`
/// the agent must open.
pub const PASSED_ERROR_CODES: &[i32] = &[-32042];

/// The `_meta` key under which a failed result carries the JSON-RPC error the agent is to get
/// instead ([`passed_error`]); never sent to an agent.
pub const PASSED_ERROR_KEY: &str = "mcp-companion/passed-error";

/// The JSON-RPC error `result` stands for, when the call failed with one of
/// [`PASSED_ERROR_CODES`]: the server's code and message, and its `data` with every known
/// secret masked (dropped when masking left no JSON).
pub fn passed_error(result: &CallToolResult) -> Option<ErrorData> {
    let error = result.meta.as_ref()?.get(PASSED_ERROR_KEY)?;
    let code = i32::try_from(error.get("code")?.as_i64()?).ok()?;
    let message = error.get("message")?.as_str()?.to_owned();
    let data = error
        .get("data")
        .filter(|d| !d.is_null())
        .and_then(|d| serde_json::from_str(&crate::net::scrub_known(&d.to_string())).ok());
    Some(ErrorData::new(ErrorCode(code), message, data))
}

#[cfg(test)]
mod tests;
