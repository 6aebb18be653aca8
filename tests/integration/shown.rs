//! What the person is shown of text an agent chose, over real processes: a call waiting for
//! approval shows a short preview of its arguments and gives them whole on demand
//! (`argumentsFull`, `approvals --full`), secrets masked in both; and a known secret inside an
//! agent's `clientInfo.name` is masked wherever the name is shown — the ask, `agents`
//! (text and JSON) and the activity log.

use std::sync::Arc;

use mcp_companion::hub::Ask;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use serde_json::json;

use crate::approval::{Watcher, entry};
use crate::common::activity::recorded;
use crate::common::{Companion, call, text};

/// A value the companion learns as a secret: the server's `env` names it a token.
const SECRET: &str = "shown-test-token-7c2e91";

#[tokio::test(flavor = "multi_thread")]
async fn long_arguments_come_whole_on_demand_and_a_secret_agent_name_is_masked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("calls.log");
    let mut a = entry(dir.path(), &log, json!({"echo": "ask"}), false);
    a["approvalTimeout"] = json!(60);
    a["env"] = json!({ "DEMO_API_TOKEN": SECRET });
    let c = Companion::start(json!({ "mcpServers": { "a": a } }));
    c.settled().await;
    let agent_name = format!("agent-{SECRET}");
    let client = Arc::new(
        c.client_with(
            ClientConfig::new(
                ClientCapabilities::default(),
                Implementation::new(agent_name.clone(), "0"),
            )
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE),
        )
        .await,
    );
    let mut watcher = Watcher::attach(&c).await;

    let long = "x".repeat(3000);
    let message = format!("{long} {SECRET} end-of-message");
    let calling = {
        let client = client.clone();
        let message = message.clone();
        tokio::spawn(
            async move { call(&client, "mcp_a_echo", json!({ "message": message })).await },
        )
    };
    let asked: Ask = serde_json::from_value(watcher.next().await).expect("an ask");
    assert_eq!(
        asked.agent.as_deref(),
        Some("agent-<redacted>"),
        "{asked:?}"
    );
    assert!(
        asked.arguments.len() < 1200 && asked.arguments.contains("bytes in all"),
        "the preview is cut: {}",
        asked.arguments
    );
    let full = asked
        .arguments_full
        .as_deref()
        .expect("the whole arguments");
    assert!(
        full.contains(&long) && full.contains("end-of-message"),
        "{full}"
    );
    assert!(
        !full.contains(SECRET) && full.contains("<redacted>"),
        "{full}"
    );

    let whole = c.cli(&["approvals", "--full"]);
    let printed = String::from_utf8_lossy(&whole.stdout);
    assert!(whole.status.success(), "{whole:?}");
    assert!(
        printed.contains(&long) && printed.contains("end-of-message"),
        "{printed}"
    );
    assert!(
        !printed.contains(SECRET) && printed.contains("agent-<redacted>"),
        "{printed}"
    );
    let preview = c.cli(&["approvals"]);
    let printed = String::from_utf8_lossy(&preview.stdout);
    assert!(
        !printed.contains(&long) && printed.contains("approvals --full"),
        "without --full the preview and how to see the rest: {printed}"
    );

    let listed = c.cli(&["agents", "--json"]);
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        !listed.contains(SECRET) && listed.contains("agent-<redacted>"),
        "{listed}"
    );
    let agents = c.cli(&["agents"]);
    let agents = String::from_utf8_lossy(&agents.stdout);
    assert!(
        !agents.contains(SECRET) && agents.contains("agent-<redacted>"),
        "{agents}"
    );

    watcher.answer(&json!(asked.id), "once").await;
    let ran = calling.await.expect("joined");
    assert_eq!(
        text(&ran),
        message,
        "the call ran with its arguments as sent"
    );
    let row = recorded(&c, "mcp_a_echo").await;
    assert_eq!(row.agent.as_deref(), Some("agent-<redacted>"), "{row:?}");
}
