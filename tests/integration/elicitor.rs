//! The companion's [`Elicitor`] hook (issue 13, the desktop part): a server's
//! `elicitation/create` that no calling agent can answer goes to the elicitor the companion was
//! started with (the desktop app's window), and its answer — `accept` with the person's values,
//! or `decline` — reaches the server unchanged. Proven in process with a scripted elicitor,
//! `tests/peers/asking_server.py` on stdio, and an rmcp agent that declares no elicitation.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_companion::companion::Companion;
use mcp_companion::config;
use mcp_companion::ipc::paths::EndpointPaths;
use mcp_companion::ipc::socket;
use mcp_companion::upstream::elicitor::{
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationRequest, Elicitor,
};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use crate::common::{peers_dir, python_sdk2};

const ASKING_SERVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/asking_server.py");

/// Answers from a script, in order, and records what it was asked.
#[derive(Debug, Default)]
struct Scripted {
    answers: Mutex<VecDeque<ElicitResult>>,
    asked: Mutex<Vec<(String, String, Duration)>>,
}

impl Elicitor for Scripted {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'static, ElicitResult> {
        let message = match &request.params {
            ElicitRequestParams::FormElicitationParams { message, .. } => message.clone(),
            other => panic!("expected form mode, got {other:?}"),
        };
        self.asked.lock().expect("lock").push((
            request.server.to_string(),
            message,
            request.timeout,
        ));
        let answer = self
            .answers
            .lock()
            .expect("lock")
            .pop_front()
            .expect("an answer is scripted");
        Box::pin(async move { answer })
    }
}

async fn ask(socket: &std::path::Path, label: &str) -> Value {
    let stream = socket::connect(socket).await.expect("agent connects");
    // `()` declares no client capabilities, elicitation included.
    let agent = ().serve(stream).await.expect("agent initializes");
    let args = json!({ "label": label });
    let result = agent
        .call_tool(
            CallToolRequestParams::new("mcp_asking_ask")
                .with_arguments(args.as_object().expect("object").clone()),
        )
        .await
        .expect("tools/call answered");
    let _ = agent.cancel().await;
    let text = result.content[0]
        .as_text()
        .map(|t| t.text.clone())
        .unwrap_or_default();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_elicitation_no_agent_can_answer_goes_to_the_companions_elicitor() {
    let Some(peers) = peers_dir() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = json!({ "mcpServers": { "asking": {
        "command": python_sdk2(&peers).display().to_string(),
        "args": [ASKING_SERVER, "stdio"],
        "connectTimeout": 120,
        "toolTimeout": 45,
    } } });
    let cfg = config::parse(&cfg.to_string(), &dir.path().join("c.json")).expect("config");
    let paths = EndpointPaths::beside(dir.path().join("mcp.sock"));
    let elicitor = Arc::new(Scripted::default());
    elicitor.answers.lock().expect("lock").extend([
        ElicitResult::new(ElicitationAction::Accept).with_content(json!({ "name": "Ada" })),
        ElicitResult::new(ElicitationAction::Decline),
    ]);
    let companion = Companion::start_with(&cfg, paths.clone(), None, elicitor.clone())
        .await
        .expect("start");
    let hub = companion.hub().clone();
    let deadline = std::time::Instant::now() + Duration::from_secs(240);
    while hub.catalog().route("mcp_asking_ask").is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "asking server never listed its tools: {:?}",
            hub.statuses()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let accepted = ask(&paths.mcp, "one").await;
    assert_eq!(accepted["action"], "accept", "{accepted}");
    assert_eq!(accepted["content"], json!({ "name": "Ada" }), "{accepted}");
    let declined = ask(&paths.mcp, "two").await;
    assert_eq!(declined["action"], "decline", "{declined}");
    assert_eq!(declined["content"], Value::Null, "{declined}");

    let asked = elicitor.asked.lock().expect("lock").clone();
    assert_eq!(
        asked,
        vec![
            (
                "asking".to_owned(),
                "one: what is your name?".to_owned(),
                Duration::from_secs(45)
            ),
            (
                "asking".to_owned(),
                "two: what is your name?".to_owned(),
                Duration::from_secs(45)
            ),
        ]
    );
    companion.shutdown().await;
}
