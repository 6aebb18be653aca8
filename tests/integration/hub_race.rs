//! Proves the hub keeps connected agents in step while its state changes from several sides at
//! once: a storm of reloads (servers added, removed, changed) interleaved with stop/start of
//! another server, with an agent connected. The agent behaves as agents do — it re-lists on every
//! `tools/list_changed` — so after every change its `tools/list` must equal the hub's catalog,
//! which only holds when a `list_changed` arrived after the last change. The catalog itself must
//! show exactly the servers of the config in force (no stale rebuild overwrote a newer one).
//!
//! The hub runs in this process (real demo-server children, the real endpoint session over an
//! in-memory stream), so the test can compare the agent's view with `Hub::catalog` directly.

use std::collections::BTreeSet;
use std::time::Duration;

use mcp_companion::config::{self, Config};
use mcp_companion::endpoint;
use mcp_companion::hub::Hub;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::common::BIN;

/// Rounds of (reload ‖ stop+start); each round changes the tool list at least twice.
const ROUNDS: usize = 16;
/// How long the agent waits for a `tools/list_changed` that must come.
const NOTIFY_WAIT: Duration = Duration::from_secs(5);

/// An agent that reports each `tools/list_changed` on a channel.
#[derive(Clone)]
struct Agent(mpsc::UnboundedSender<()>);

impl ClientHandler for Agent {
    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.0.send(());
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("race-agent", "0"),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

fn demo(test_tools: bool, env: Option<&str>) -> Value {
    let mut args = vec!["demo-server"];
    if test_tools {
        args.push("--test-tools");
    }
    let mut entry = json!({ "command": BIN, "args": args });
    if let Some(v) = env {
        entry["env"] = json!({ "RACE_MARK": v });
    }
    entry
}

/// The configs the storm cycles through: `a` changes (tools differ, or only its env), `b` comes
/// and goes, `c` is the same in all of them (the test stops and starts it by hand).
fn configs(dir: &std::path::Path) -> Vec<Config> {
    let docs = [
        json!({ "a": demo(false, None), "c": demo(false, None) }),
        json!({ "a": demo(true, None), "b": demo(false, None), "c": demo(false, None) }),
        json!({ "a": demo(true, Some("1")), "c": demo(false, None) }),
        json!({ "a": demo(false, Some("2")), "b": demo(true, None), "c": demo(false, None) }),
    ];
    docs.iter()
        .map(|servers| {
            let text = json!({ "mcpServers": servers }).to_string();
            config::parse(&text, &dir.join("config.json")).expect("config parses")
        })
        .collect()
}

fn catalog_names(hub: &Hub) -> BTreeSet<String> {
    hub.catalog()
        .tools()
        .iter()
        .map(|t| t.name.to_string())
        .collect()
}

fn servers_in(names: &BTreeSet<String>) -> BTreeSet<String> {
    ["a", "b", "c"]
        .into_iter()
        .filter(|s| names.iter().any(|n| n.starts_with(&format!("mcp_{s}_"))))
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reload_storm_with_stop_and_start_keeps_the_agent_in_step() {
    let dir = tempfile::tempdir().expect("tempdir");
    let configs = configs(dir.path());
    let hub = Hub::start(&configs[0]);
    hub.settle(Duration::from_secs(60)).await;

    let (agent_side, hub_side) = tokio::io::duplex(1 << 20);
    let stop = CancellationToken::new();
    let session = tokio::spawn(endpoint::serve_session(
        hub_side,
        hub.clone(),
        stop.clone(),
        endpoint::FirstListPolicy::hold_all(Duration::ZERO),
    ));
    let (heard, mut notifications) = mpsc::unbounded_channel();
    let agent = Agent(heard).serve(agent_side).await.expect("handshake");
    let list = || async {
        agent
            .list_all_tools()
            .await
            .expect("tools/list")
            .into_iter()
            .map(|t| t.name.into_owned())
            .collect::<BTreeSet<String>>()
    };
    let mut seen = list().await;

    for round in 1..=ROUNDS {
        let cfg = &configs[round % configs.len()];
        let stop_start = async {
            // Vary where the stop/start lands relative to the reload's phases (its stops, the
            // new servers' start, the final rebuild), so that c's reports race each of them.
            tokio::time::sleep(Duration::from_millis((round as u64 * 37) % 300)).await;
            hub.stop_server("c").await.expect("stop c");
            hub.start_server("c").await.expect("start c");
        };
        let (report, ()) = tokio::join!(hub.reload(cfg), stop_start);
        hub.settle(Duration::from_secs(60)).await;

        let want = catalog_names(&hub);
        let expected: BTreeSet<String> = cfg.servers.iter().map(|s| s.name.clone()).collect();
        assert_eq!(
            servers_in(&want),
            expected,
            "round {round}: the hub's catalog does not show the servers of the config in force \
             ({report:?}); statuses: {:?}",
            hub.statuses()
        );
        // The agent re-lists on every list_changed, as agents do, until it agrees with the hub.
        while seen != want {
            match tokio::time::timeout(NOTIFY_WAIT, notifications.recv()).await {
                Ok(Some(())) => {
                    while notifications.try_recv().is_ok() {}
                    seen = list().await;
                }
                _ => panic!(
                    "round {round}: no tools/list_changed after the last change; the agent still \
                     lists {seen:?} but the hub's catalog is {want:?}"
                ),
            }
        }
    }

    stop.cancel();
    let _ = session.await;
    hub.shutdown().await;
}
