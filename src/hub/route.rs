//! [`Hub::call`]: from a wrapped tool name to an upstream request, and back to exactly one
//! `tools/call` result (DESIGN §6, §7).
//!
//! ```text
//! route by wrapped name ─▶ server running? ─no─▶ isError "server X is restarting, next try in N s"
//!                               │ yes
//!                               ▼
//!                       call on session g ──ok / JSON-RPC error / timeout──▶ result (never retried)
//!                               │ session broke (transport fault)
//!                               ▼
//!                 reconnect(g): shared by every caller that saw g fail
//!                               ▼
//!                       call once more on the new session ──▶ result
//! ```

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject};

use super::Hub;
use crate::catalog::{Route, naming};
use crate::config::DEFAULT_TOOL_TIMEOUT;
use crate::supervisor::{Live, ServerHandle, ServerState, ServerStatus, now_ms};
use crate::upstream::call::{self, CallError, Downstream};

impl Hub {
    /// Calls the wrapped tool `name` and always returns a `tools/call` result: upstream answers
    /// are passed through; every failure (unknown tool, server down, timeout, JSON-RPC error)
    /// becomes `isError: true` with a readable message naming the server.
    ///
    /// A call whose session breaks underneath it is retried once on a fresh session; callers
    /// that hit the same broken session share one reconnect.
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        downstream: Option<&Downstream>,
    ) -> CallToolResult {
        let catalog = self.catalog();
        let Some(route) = catalog.route(name) else {
            return error_result(self.unknown_tool(name));
        };
        let Some(server) = self.server(&route.server) else {
            return error_result(format!("unknown tool \"{name}\""));
        };
        // One snapshot: the session and the state it explains, read together.
        let snapshot = server.snapshot();
        let Some(live) = snapshot.live else {
            return error_result(unavailable(&snapshot.status));
        };
        let timeout = server
            .config()
            .map_or(DEFAULT_TOOL_TIMEOUT, |c| c.tool_timeout);
        let first = attempt(&live, route, arguments.clone(), timeout, downstream).await;
        match first {
            Ok(result) => result,
            Err(e) if e.is_transport() => {
                tracing::info!(server = %route.server, tool = name, error = %e, "session broke during a call; reconnecting to retry once");
                retry_on_new_session(&server, &live, route, arguments, timeout, downstream, &e)
                    .await
            }
            Err(e) => {
                tracing::info!(server = %route.server, tool = name, error = %e, "call failed");
                error_result(describe_failure(&route.server, &e))
            }
        }
    }
}

impl Hub {
    /// "unknown tool X", plus why when the name looks like a tool of a server that is not
    /// running (its tools leave the list while it is down).
    fn unknown_tool(&self, name: &str) -> String {
        let down = self.servers().into_iter().find_map(|s| {
            let prefix = naming::sanitize(&format!("mcp_{}_", s.name()));
            let snapshot = s.snapshot();
            (name.starts_with(&prefix) && snapshot.live.is_none()).then_some(snapshot.status)
        });
        match down {
            Some(status) => format!("unknown tool \"{name}\" ({})", unavailable(&status)),
            None => format!("unknown tool \"{name}\""),
        }
    }
}

async fn attempt(
    live: &Live,
    route: &Route,
    arguments: Option<JsonObject>,
    timeout: Duration,
    downstream: Option<&Downstream>,
) -> Result<CallToolResult, CallError> {
    call::call(&live.peer, &route.target, arguments, timeout, downstream).await
}

async fn retry_on_new_session(
    server: &ServerHandle,
    broken: &Arc<Live>,
    route: &Route,
    arguments: Option<JsonObject>,
    timeout: Duration,
    downstream: Option<&Downstream>,
    first: &CallError,
) -> CallToolResult {
    let fresh = match server.reconnect(broken.generation).await {
        Ok(fresh) => fresh,
        Err(e) => return error_result(format!("server \"{}\": {first}; {e}", route.server)),
    };
    match attempt(&fresh, route, arguments, timeout, downstream).await {
        Ok(result) => result,
        Err(e) => {
            tracing::info!(server = %route.server, error = %e, "retry after reconnect failed");
            error_result(describe_failure(&route.server, &e))
        }
    }
}

/// Why a server cannot take calls right now, e.g. "server \"x\" is restarting, next try in 3 s".
fn unavailable(status: &ServerStatus) -> String {
    let mut msg = match (status.state, status.retry_at_ms) {
        (ServerState::Backoff, Some(at)) => {
            let secs = at.saturating_sub(now_ms()).div_ceil(1000).max(1);
            format!(
                "server \"{}\" is restarting, next try in {secs} s",
                status.name
            )
        }
        (ServerState::Starting, _) => format!("server \"{}\" is starting", status.name),
        // A session is being torn down (a stop, or a loss before the restart is scheduled).
        (ServerState::Running, _) => format!("server \"{}\" has no session right now", status.name),
        (state, _) => format!("server \"{}\" is {}", status.name, state.as_str()),
    };
    if let Some(err) = &status.last_error {
        msg.push_str(": ");
        msg.push_str(err);
    }
    msg
}

/// The text of a failed call: `server "x" returned an error: <message> (JSON-RPC error <code>)`
/// for a JSON-RPC error, `server "x": <why>` otherwise.
pub fn describe_failure(server: &str, e: &CallError) -> String {
    match e {
        CallError::Rpc { .. } => format!("server \"{server}\" returned an error: {e}"),
        _ => format!("server \"{server}\": {e}"),
    }
}

/// The text of a call whose session broke while it was in flight and that is not retried
/// (the tool declares neither `readOnlyHint` nor `idempotentHint`): the server may have run it.
pub fn lost_in_flight(server: &str, e: &CallError) -> String {
    format!(
        "{}; the call may or may not have run, so it was not retried",
        describe_failure(server, e)
    )
}

/// An `isError` result with `message` as its one text block.
pub fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(state: ServerState, retry_in_ms: Option<u64>, error: Option<&str>) -> ServerStatus {
        ServerStatus {
            name: "x".into(),
            transport: "stdio".into(),
            state,
            last_error: error.map(str::to_owned),
            since_ms: 0,
            retry_at_ms: retry_in_ms.map(|ms| now_ms() + ms),
            pid: None,
            restarts: 0,
            tools: 0,
        }
    }

    #[test]
    fn unavailable_messages_say_what_is_happening() {
        assert_eq!(
            unavailable(&status(
                ServerState::Backoff,
                Some(2500),
                Some("process exited (exit code 3)")
            )),
            "server \"x\" is restarting, next try in 3 s: process exited (exit code 3)"
        );
        assert_eq!(
            unavailable(&status(ServerState::Stopped, None, None)),
            "server \"x\" is stopped"
        );
        assert_eq!(
            unavailable(&status(ServerState::Failed, None, Some("boom"))),
            "server \"x\" is failed: boom"
        );
        assert_eq!(
            unavailable(&status(ServerState::Starting, None, None)),
            "server \"x\" is starting"
        );
        assert_eq!(
            unavailable(&status(ServerState::Running, None, None)),
            "server \"x\" has no session right now"
        );
    }
}
