//! What `status`, the tray and the window show of one server: its [`ServerState`] and
//! [`ServerStatus`].

use serde::{Deserialize, Serialize};

/// Lifecycle state of one server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerState {
    /// Not running, by configuration (`disabled`) or by request.
    Stopped,
    /// Spawning, initializing or listing.
    Starting,
    /// Serving calls.
    Running,
    /// Waiting before a restart; `retry_at_ms` says when.
    Backoff,
    /// Gave up: configuration error or too many failures in a row. `last_error` says why.
    Failed,
    /// The remote server answered 401: it waits for `mcp-companion login` (no retries).
    #[serde(rename = "needs sign-in")]
    NeedsSignIn,
}

impl ServerState {
    /// The lower-case name used in CLI output and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            ServerState::Stopped => "stopped",
            ServerState::Starting => "starting",
            ServerState::Running => "running",
            ServerState::Backoff => "backoff",
            ServerState::Failed => "failed",
            ServerState::NeedsSignIn => "needs sign-in",
        }
    }

    /// The word a person reads for the state, the same as the window's badge
    /// (`ui/states.js`): `backoff` reads `retrying`; every other state its [`Self::as_str`].
    pub fn label(self) -> &'static str {
        match self {
            ServerState::Backoff => "retrying",
            other => other.as_str(),
        }
    }
}

/// What `status` shows for one server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    /// The server's name in the config.
    pub name: String,
    /// `stdio`, `sse`, `streamableHttp`, or `unknown` for an entry that failed to parse.
    pub transport: String,
    /// Current state.
    pub state: ServerState,
    /// Why the server last failed, readable by a person (kept while it restarts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// When the state last changed, in milliseconds since the Unix epoch.
    pub since_ms: u64,
    /// In `backoff`: when the next start is due, in milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_at_ms: Option<u64>,
    /// Process id of a running stdio server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The MCP protocol version the running session speaks: the version `initialize` agreed,
    /// or `2026-07-28` for a server that speaks only that (`None` while not running). See
    /// [`crate::upstream::era`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// Restarts after an exit or a lost session since the companion started.
    #[serde(default)]
    pub restarts: u32,
    /// Wrapped tools this server contributes to the merged catalog (filled in by the hub).
    pub tools: usize,
    /// Tools withheld from agents until the person approves them (`mcp-companion trust`;
    /// filled in by the hub).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub waiting_approval: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl ServerStatus {
    /// A status that says only `state`: no error, no process, no restarts, no tools, since 0
    /// (the epoch); callers set what they know with struct-update syntax.
    pub fn new(name: &str, transport: &str, state: ServerState) -> ServerStatus {
        ServerStatus {
            name: name.to_owned(),
            transport: transport.to_owned(),
            state,
            last_error: None,
            since_ms: 0,
            retry_at_ms: None,
            pid: None,
            protocol: None,
            restarts: 0,
            tools: 0,
            waiting_approval: 0,
        }
    }

    /// In `backoff` with a due time: the whole seconds from `now_ms` (milliseconds since the
    /// Unix epoch) until the next start, rounded up, 0 when it is due or overdue. `None` in
    /// every other state. The one count behind `status`'s `retrying 3s` and the
    /// "next try in 3 s" of a call that cannot be routed.
    pub fn retry_in_secs(&self, now_ms: u64) -> Option<u64> {
        match (self.state, self.retry_at_ms) {
            (ServerState::Backoff, Some(at)) => Some(at.saturating_sub(now_ms).div_ceil(1000)),
            _ => None,
        }
    }

    /// Whether [`ServerStatus::last_error`] concerns the current process. While a server is
    /// `starting` or `running` again, its last error is an earlier process's, and is shown
    /// marked as older (`status` prints `(earlier) …`, the window dims it).
    pub fn error_is_current(&self) -> bool {
        !matches!(self.state, ServerState::Starting | ServerState::Running)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_before_a_restart_is_whole_seconds_rounded_up_and_only_in_backoff() {
        let cases = [
            (ServerState::Backoff, Some(10_200), 8_000, Some(3)),
            (ServerState::Backoff, Some(10_000), 8_000, Some(2)),
            (ServerState::Backoff, Some(8_000), 9_000, Some(0)),
            (ServerState::Backoff, None, 0, None),
            (ServerState::Running, Some(10_000), 0, None),
            (ServerState::Starting, Some(10_000), 0, None),
        ];
        for (state, retry_at_ms, now_ms, want) in cases {
            let status = ServerStatus {
                retry_at_ms,
                ..ServerStatus::new("s", "stdio", state)
            };
            assert_eq!(
                status.retry_in_secs(now_ms),
                want,
                "{state:?} {retry_at_ms:?} at {now_ms}"
            );
        }
    }
}
