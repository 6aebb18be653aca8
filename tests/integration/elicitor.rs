//! The companion's [`Elicitor`] hook: a server's
//! `elicitation/create` that no calling agent can answer goes to the elicitor the companion was
//! started with (the desktop app's window), and its answer — `accept` with the person's values,
//! or `decline` — reaches the server unchanged; when the call it was asked during is cancelled,
//! the elicitor's request is withdrawn (its future dropped). Proven in process with scripted
//! elicitors, `tests/peers/asking_server.py` on stdio, and an rmcp agent that declares no
//! elicitation.

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
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};
use tokio::sync::mpsc;

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

/// Never answers; tells `events` when it is asked and when its request is withdrawn.
#[derive(Debug)]
struct Hanging {
    events: mpsc::UnboundedSender<&'static str>,
}

/// Sends "withdrawn" when dropped.
struct Withdrawn(mpsc::UnboundedSender<&'static str>);

impl Drop for Withdrawn {
    fn drop(&mut self) {
        let _ = self.0.send("withdrawn");
    }
}

impl Elicitor for Hanging {
    fn elicit(&self, _request: ElicitationRequest) -> BoxFuture<'static, ElicitResult> {
        let _ = self.events.send("asked");
        let guard = Withdrawn(self.events.clone());
        Box::pin(async move {
            let _guard = guard;
            std::future::pending::<ElicitResult>().await
        })
    }
}

/// A companion serving the asking server, asking `elicitor`; returns once its tools are listed.
async fn start(
    dir: &std::path::Path,
    elicitor: Arc<dyn Elicitor>,
) -> Option<(Companion, EndpointPaths)> {
    let peers = peers_dir()?;
    let cfg = json!({ "mcpServers": { "asking": {
        "command": python_sdk2(&peers).display().to_string(),
        "args": [ASKING_SERVER, "stdio"],
        "connectTimeout": 120,
        "toolTimeout": 45,
    } } });
    let cfg = config::parse(&cfg.to_string(), &dir.join("c.json")).expect("config");
    let paths = EndpointPaths::isolated(dir.join("mcp.sock"));
    let companion = Companion::start_with(&cfg, paths.clone(), None, elicitor)
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
    Some((companion, paths))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_elicitation_no_agent_can_answer_goes_to_the_companions_elicitor() {
    let dir = tempfile::tempdir().expect("tempdir");
    let elicitor = Arc::new(Scripted::default());
    elicitor.answers.lock().expect("lock").extend([
        ElicitResult::new(ElicitationAction::Accept).with_content(json!({ "name": "Ada" })),
        ElicitResult::new(ElicitationAction::Decline),
    ]);
    let Some((companion, paths)) = start(dir.path(), elicitor.clone()).await else {
        return;
    };

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_withdraws_its_elicitation_from_the_elicitor() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (tx, mut events) = mpsc::unbounded_channel();
    let Some((companion, paths)) = start(dir.path(), Arc::new(Hanging { events: tx })).await else {
        return;
    };
    let stream = socket::connect(&paths.mcp).await.expect("agent connects");
    let agent = ().serve(stream).await.expect("agent initializes");
    let mut params = CallToolRequestParams::new("mcp_asking_ask");
    params.arguments = json!({ "label": "withdrawn" }).as_object().cloned();
    let call = agent
        .send_request_with_option(
            ClientRequest::CallToolRequest(CallToolRequest::new(params)),
            PeerRequestOptions::no_options(),
        )
        .await
        .expect("send tools/call");
    assert_eq!(next(&mut events).await, Some("asked"));
    call.cancel(Some("changed my mind".into()))
        .await
        .expect("send notifications/cancelled");
    assert_eq!(
        next(&mut events).await,
        Some("withdrawn"),
        "the elicitor's request is dropped once the call is cancelled"
    );
    let _ = agent.cancel().await;
    companion.shutdown().await;
}

/// The elicitor's next event, or `None` after 30 s.
async fn next(events: &mut mpsc::UnboundedReceiver<&'static str>) -> Option<&'static str> {
    tokio::time::timeout(Duration::from_secs(30), events.recv())
        .await
        .ok()
        .flatten()
}
