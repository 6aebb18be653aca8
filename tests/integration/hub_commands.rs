//! Proves the hub's whole-set commands keep their meanings apart: "Stop all" (the tray's and
//! window's) stops every server and leaves the hub ready to start them again, "Start all" starts
//! what is stopped, and only `shutdown` is final — after it, starts and reloads are refused.

use std::time::Duration;

use mcp_companion::config;
use mcp_companion::hub::{Hub, HubError};
use mcp_companion::supervisor::ServerState;
use serde_json::json;

use crate::common::demo;

fn states(hub: &Hub) -> Vec<ServerState> {
    hub.statuses().into_iter().map(|s| s.state).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_all_can_be_undone_and_shutdown_cannot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = json!({ "mcpServers": { "a": demo(&[]), "b": demo(&[]) } }).to_string();
    let cfg = config::parse(&text, &dir.path().join("c.json")).expect("config");
    let hub = Hub::start(&cfg);
    let settle = Duration::from_secs(60);
    hub.settle(settle).await;
    assert_eq!(states(&hub), [ServerState::Running, ServerState::Running]);

    hub.stop_all().await;
    assert_eq!(states(&hub), [ServerState::Stopped, ServerState::Stopped]);
    hub.settle(settle).await;
    assert!(
        hub.catalog().is_empty(),
        "no tools while everything is stopped"
    );

    hub.start_all().await;
    hub.settle(settle).await;
    assert_eq!(states(&hub), [ServerState::Running, ServerState::Running]);
    assert!(!hub.catalog().is_empty());

    hub.shutdown().await;
    assert_eq!(states(&hub), [ServerState::Stopped, ServerState::Stopped]);
    assert_eq!(hub.start_server("a").await, Err(HubError::ShuttingDown));
    let report = hub.reload(&cfg).await;
    assert!(
        report.added.is_empty() && report.unchanged.is_empty(),
        "a reload after shutdown changes nothing: {report:?}"
    );
    hub.start_all().await;
    assert_eq!(states(&hub), [ServerState::Stopped, ServerState::Stopped]);
}
