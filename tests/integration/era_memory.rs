//! The era a server's session spoke is remembered for its next connect: a stdio server that
//! speaks only MCP 2026-07-28 (the demo server with `--stateless`) is sent `initialize` once,
//! refuses it and is started again for `server/discover`; after a restart it is reached through
//! `server/discover` at once, without the refused `initialize` and the second start.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{Companion, demo};

/// The companion's log line for a server that refused `initialize` speaking only 2026-07-28.
const STARTED_AGAIN: &str = "starting it again for that";

#[tokio::test]
async fn a_2026_only_server_is_reached_through_discover_first_after_a_restart() {
    let c = Companion::start(json!({ "mcpServers": { "modern": demo(&["--stateless"]) } }));
    c.settled().await;
    let first = c.server("modern").await;
    assert_eq!(first.protocol.as_deref(), Some("2026-07-28"), "{first:?}");
    assert_eq!(c.log().matches(STARTED_AGAIN).count(), 1, "{}", c.log());

    assert!(c.cli(&["restart", "modern"]).status.success());
    let deadline = Instant::now() + Duration::from_secs(60);
    let again = loop {
        let status = c.server("modern").await;
        let up =
            status.state.as_str() == "running" && status.pid.is_some() && status.pid != first.pid;
        if up || Instant::now() > deadline {
            break status;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(again.pid != first.pid, "not restarted: {again:?}");
    assert_eq!(again.protocol.as_deref(), Some("2026-07-28"), "{again:?}");
    // No second refused `initialize`: the restart went to `server/discover` at once.
    assert_eq!(c.log().matches(STARTED_AGAIN).count(), 1, "{}", c.log());
}
