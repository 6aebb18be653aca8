//! Remote session loss with the real reference server: server-everything over streamable
//! HTTP, killed and started again on the same port under the companion, answers the old session
//! id with HTTP 400 "Bad Request: No valid session ID provided". The companion treats that as a
//! gone session: the next call reconnects and succeeds within seconds (not after its
//! `toolTimeout`), `status` shows the reconnect with the server's own words, and the server is
//! `running` on the new session.
//!
//! A server that goes away while nobody calls it is noticed too: rmcp re-opens the event
//! stream, the connection is refused, and `status` leaves `running` without waiting for a call.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{Companion, call, text};
use crate::remote_fixture::{everything_on, free_port};

/// Longer than any reconnect could take: a call that waits for it has hit the bug.
const TOOL_TIMEOUT_SECS: u64 = 120;

#[tokio::test]
async fn server_everything_restarted_under_the_companion_is_reconnected_not_waited_out() {
    let port = free_port();
    let Some(first) = everything_on("streamableHttp", port) else {
        return;
    };
    let c = Companion::start(json!({
        "mcpServers": { "ev": {
            "url": format!("http://127.0.0.1:{port}/mcp"),
            "toolTimeout": TOOL_TIMEOUT_SECS,
        } },
        "ssrfWhitelist": ["127.0.0.1/32"],
    }));
    let s = &c.settled().await[0];
    assert_eq!(s.state.as_str(), "running", "{s:?}\n{}", c.log());
    let client = c.client().await;
    let echo = call(&client, "mcp_ev_echo", json!({ "message": "before" })).await;
    assert_eq!(text(&echo), "Echo: before", "{echo:?}");

    // Restart the server underneath: same port, new process, no sessions.
    drop(first);
    let _second = everything_on("streamableHttp", port).expect("server-everything again");

    let started = Instant::now();
    let echo = call(&client, "mcp_ev_echo", json!({ "message": "after" })).await;
    let took = started.elapsed();
    assert_eq!(text(&echo), "Echo: after", "{echo:?}\n{}", c.log());
    eprintln!("the call after the restart took {took:?}");
    assert!(
        took < Duration::from_secs(TOOL_TIMEOUT_SECS / 2),
        "answered after {took:?}: the gone session was waited out"
    );

    // `status`: running on a new session, and the reason is what the server said.
    let deadline = Instant::now() + Duration::from_secs(30);
    let s = loop {
        let s = c.server("ev").await;
        if s.state.as_str() == "running" && s.restarts >= 1 {
            break s;
        }
        assert!(Instant::now() < deadline, "{s:?}\n{}", c.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // The last thing that went wrong: the server's 400 to our call or, when rmcp's attempt to
    // re-open the event stream came first, the refused connection while the server was down
    // (then a reconnect may have been refused as well before the new process listened).
    let why = s.last_error.clone().unwrap_or_default();
    assert!(
        why.contains("No valid session ID provided")
            || why.contains("the event stream could not be opened again")
            || why.contains("connection refused"),
        "{s:?}"
    );
    assert!(
        !why.contains("ErrorData") && !why.contains("Transport ["),
        "{why}"
    );
    let echo = call(&client, "mcp_ev_echo", json!({ "message": "steady" })).await;
    assert_eq!(text(&echo), "Echo: steady");
}

#[tokio::test]
async fn a_remote_server_that_goes_away_leaves_running_without_any_call() {
    let port = free_port();
    let Some(server) = everything_on("streamableHttp", port) else {
        return;
    };
    let c = Companion::start(json!({
        "mcpServers": { "ev": { "url": format!("http://127.0.0.1:{port}/mcp") } },
        "ssrfWhitelist": ["127.0.0.1/32"],
    }));
    let s = &c.settled().await[0];
    assert_eq!(s.state.as_str(), "running", "{s:?}\n{}", c.log());

    drop(server);
    // rmcp re-opens the broken event stream after 1 s; give it far more than that.
    let deadline = Instant::now() + Duration::from_secs(60);
    let s = loop {
        let s = c.server("ev").await;
        if s.state.as_str() != "running" {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "still running a minute after its server went away: {s:?}\n{}",
            c.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let why = s.last_error.clone().unwrap_or_default();
    assert!(
        why.contains("the event stream could not be opened again")
            || why.contains("connection refused"),
        "{s:?}"
    );
    assert!(!why.contains("Transport ["), "{why}");
}
