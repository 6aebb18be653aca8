//! The quick-answer bound: how long a local client (the CLI, the bridge) waits for an answer the
//! companion gives from what it already holds, or at once — the MCP handshake, a listing, a
//! `status`, a `ping`, the reply to the bridge's stdio offer. A companion that accepts
//! connections but never answers (stopped with SIGSTOP, held in a debugger, wedged) is reported
//! after this long instead of hanging its caller forever.
//!
//! Requests that legitimately take longer get their own bound built on this one (`reload`:
//! the hub's settle time plus this, see `control::ControlRequest::answer_bound`), or are watched
//! for liveness with it (`call`: a `ping` must be answered within it while the call runs).
//!
//! [`BOUND_ENV`] overrides the default for tests that stop a companion and should not wait 30 s.

use std::sync::OnceLock;
use std::time::Duration;

/// The bound when [`BOUND_ENV`] does not set one, in seconds.
pub const DEFAULT_SECS: u64 = 30;

/// The environment variable that sets the bound, in whole seconds (≥ 1; anything else is
/// ignored). Meant for tests.
pub const BOUND_ENV: &str = "MCP_COMPANION_QUICK_ANSWER_SECS";

/// The quick-answer bound: [`DEFAULT_SECS`], or [`BOUND_ENV`]'s value. Read once per process.
pub fn bound() -> Duration {
    static SECS: OnceLock<u64> = OnceLock::new();
    Duration::from_secs(*SECS.get_or_init(|| {
        std::env::var(BOUND_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|&s| s >= 1)
            .unwrap_or(DEFAULT_SECS)
    }))
}

/// The text of a companion that accepted the connection but did not answer `what` within
/// `bound`, with what the person can do about it.
pub fn unanswered(what: &str, bound: Duration) -> String {
    format!(
        "the companion accepted the connection but did not answer {what} within {} s: it may be stopped (SIGSTOP, a debugger) or stuck; `kill -CONT` it, or stop it and start it again",
        bound.as_secs()
    )
}
