//! Servers that ask: `elicitation/create`, `sampling/createMessage` and `roots/list`
//! sent by real upstream servers in the middle of a call reach the calling agent when it declared
//! the capability, and get the companion's fallbacks otherwise (cancel / "no model" error /
//! the entry's roots), through `mcp-companion bridge` with the official Python SDK 1.x and 2.x.
//!
//! Servers: `@modelcontextprotocol/server-everything` (stdio), whose tools
//! `trigger-elicitation-request`, `trigger-sampling-request`, `trigger-url-elicitation` and
//! `get-roots-list` exist only for clients that declare the capabilities, and
//! `tests/peers/asking_server.py` (SDK 2.x; stdio, and streamable HTTP where the request link
//! tells two agents' elicitations apart).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest,
    ElicitRequestParams, ElicitResult, ElicitationCapability, FormElicitationCapability,
    Implementation, ProtocolVersion,
};
use rmcp::service::{PeerRequestOptions, RequestContext};
use rmcp::{ClientHandler, ErrorData as McpError, RoleClient};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::common::asking::{asked_each, asking_agent};
use crate::common::{
    Companion, agent_call, eventually, everything_js, peers_dir, python_sdk1, python_sdk2,
};
use crate::remote_fixture::{free_port, python_server};

const AGENT_TIMEOUT: Duration = Duration::from_secs(90);
/// `connectTimeout` of the Python servers, in seconds: the SDK's imports alone can take half a
/// minute on a loaded machine.
const SLOW_START: u64 = 120;

/// Waits until every server is `running` (not merely settled: a slow start may be retrying).
async fn all_running(c: &Companion) -> Vec<mcp_companion::supervisor::ServerStatus> {
    let deadline = std::time::Instant::now() + Duration::from_secs(2 * SLOW_START);
    loop {
        let servers = c.status().await.servers;
        if servers
            .iter()
            .all(|s| s.state == mcp_companion::supervisor::ServerState::Running)
        {
            return servers;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "servers not running: {servers:?}\n{}",
            c.log()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
const ASKING_SERVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/asking_server.py");

/// Runs asking_agent.py with `python` against the companion, off the runtime.
async fn agent(python: &Path, c: &Companion, args: &[&str]) -> Value {
    asking_agent(python, c, args, AGENT_TIMEOUT).await
}

/// The text of a recorded `tools/call` result.
fn result_text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// The JSON object the asking server's tool returned.
fn asked_json(run: &Value, tool: &str) -> Value {
    let text = result_text(agent_call(run, tool));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{tool}: not JSON ({e}): {run:#}"))
}

fn entry_roots(dir: &Path) -> (Vec<PathBuf>, Vec<String>) {
    let dirs = vec![dir.join("alpha"), dir.join("beta gamma")];
    let uris = vec![
        format!("file://{}/alpha/", dir.display()),
        format!("file://{}/beta%20gamma/", dir.display()),
    ];
    (dirs, uris)
}

fn config(peers: &Path, roots: &[PathBuf]) -> Value {
    json!({ "mcpServers": {
        "everything": {
            "command": "node",
            "args": [everything_js(peers).display().to_string(), "stdio"],
            "roots": roots,
        },
        "asking": {
            "command": python_sdk2(peers).display().to_string(),
            "args": [ASKING_SERVER, "stdio"],
            "roots": roots,
            "connectTimeout": SLOW_START,
        },
    }})
}

const EVERYTHING_CALLS: [&str; 10] = [
    "--call",
    "mcp_everything_trigger-elicitation-request",
    "{}",
    "--call",
    "mcp_everything_trigger-sampling-request",
    r#"{"prompt":"ping","maxTokens":20}"#,
    "--call",
    "mcp_everything_trigger-url-elicitation",
    r#"{"url":"https://example.com/sign-in"}"#,
    "--call",
];

fn calls_tail() -> [&'static str; 11] {
    [
        "mcp_everything_get-roots-list",
        "{}",
        "--call",
        "mcp_asking_ask",
        r#"{"label":"solo"}"#,
        "--call",
        "mcp_asking_sample",
        r#"{"prompt":"ping"}"#,
        "--call",
        "mcp_asking_roots",
        "{}",
    ]
}

#[tokio::test]
async fn server_requests_reach_a_capable_agent_and_get_fallbacks_otherwise() {
    let Some(peers) = peers_dir() else { return };
    let scratch = tempfile::tempdir().expect("tempdir");
    let (roots, root_uris) = entry_roots(scratch.path());
    let c = Companion::start(config(&peers, &roots));
    all_running(&c).await;
    let calls: Vec<&str> = [&EVERYTHING_CALLS[..], &calls_tail()[..]].concat();

    for (label, python) in [
        ("SDK 2.x", python_sdk2(&peers)),
        ("SDK 1.x", python_sdk1(&peers)),
    ] {
        // With callbacks: every request reaches this agent and its answers reach the server.
        let answering = [
            "--elicit",
            r#"{"name":"Ada Lovelace","check":true,"integer":7}"#,
            "--sample",
            "forty-two",
            "--roots",
            "file:///agent/one/,file:///agent/two/",
        ];
        let run = agent(&python, &c, &[&answering[..], &calls].concat()).await;
        assert_eq!(run["exit"], json!(0), "{label}: {run:#}");

        let elicited = result_text(agent_call(
            &run,
            "mcp_everything_trigger-elicitation-request",
        ));
        assert!(
            elicited.contains("- Name: Ada Lovelace") && elicited.contains("Favorite Integer: 7"),
            "{label}: {elicited}"
        );
        let sampled = result_text(agent_call(&run, "mcp_everything_trigger-sampling-request"));
        assert!(
            sampled.contains("forty-two") && sampled.contains("test-model"),
            "{label}: {sampled}"
        );
        let url = result_text(agent_call(&run, "mcp_everything_trigger-url-elicitation"));
        assert!(
            url.contains("User completed the URL elicitation flow"),
            "{label}: {url}"
        );
        // server-everything asks for roots once, 350 ms after initialize, outside any call, and
        // caches the answer: the entry's roots.
        let listed = result_text(agent_call(&run, "mcp_everything_get-roots-list"));
        for uri in &root_uris {
            assert!(listed.contains(uri.as_str()), "{label}: {uri} in {listed}");
        }
        let ask = asked_json(&run, "mcp_asking_ask");
        assert_eq!(ask["action"], json!("accept"), "{label}: {ask}");
        assert_eq!(
            ask["content"]["name"],
            json!("Ada Lovelace"),
            "{label}: {ask}"
        );
        let sample = asked_json(&run, "mcp_asking_sample");
        assert_eq!(
            sample,
            json!({"model": "test-model", "text": "forty-two"}),
            "{label}"
        );
        let agent_roots = asked_json(&run, "mcp_asking_roots");
        assert_eq!(
            agent_roots["roots"],
            json!(["file:///agent/one/", "file:///agent/two/"]),
            "{label}: the calling agent's roots, not the entry's"
        );
        let asked = asked_each(&run, "method");
        assert_eq!(
            asked.iter().filter(|m| **m == "elicitation/create").count(),
            3,
            "{label}: {asked:?}"
        );

        // Without callbacks: nobody is asked on the agent's behalf, and nothing hangs.
        let run = agent(&python, &c, &calls).await;
        assert_eq!(run["exit"], json!(0), "{label}: {run:#}");
        assert_eq!(run["asked"], json!([]), "{label}");
        let elicited = result_text(agent_call(
            &run,
            "mcp_everything_trigger-elicitation-request",
        ));
        assert!(
            elicited.contains("User cancelled the elicitation dialog"),
            "{label}: cancel, never decline: {elicited}"
        );
        let url = result_text(agent_call(&run, "mcp_everything_trigger-url-elicitation"));
        assert!(
            url.contains("User cancelled the URL elicitation"),
            "{label}: {url}"
        );
        let sampled = agent_call(&run, "mcp_everything_trigger-sampling-request");
        assert_eq!(sampled["isError"], json!(true), "{label}: {sampled:#}");
        assert!(
            result_text(sampled).contains("no model is available through MCP Companion"),
            "{label}: {sampled:#}"
        );
        let ask = asked_json(&run, "mcp_asking_ask");
        assert_eq!(ask["action"], json!("cancel"), "{label}: {ask}");
        let sample = asked_json(&run, "mcp_asking_sample");
        assert!(
            sample["error"]
                .as_str()
                .is_some_and(|e| e.contains("no model is available through MCP Companion")),
            "{label}: {sample}"
        );
        let roots_now = asked_json(&run, "mcp_asking_roots");
        assert_eq!(
            roots_now["roots"],
            json!(root_uris),
            "{label}: the entry's roots"
        );
    }
    let log = c.log();
    assert!(
        log.contains("elicitation/create with no agent able to answer it")
            && log.contains("solo: what is your name?"),
        "the headless cancel is logged with server and message:\n{log}"
    );
}

#[tokio::test]
async fn a_server_without_entry_roots_gets_an_empty_list() {
    let Some(peers) = peers_dir() else { return };
    let c = Companion::start(config(&peers, &[]));
    all_running(&c).await;
    let run = agent(
        &python_sdk2(&peers),
        &c,
        &["--call", "mcp_asking_roots", "{}"],
    )
    .await;
    assert_eq!(
        asked_json(&run, "mcp_asking_roots"),
        json!({"roots": []}),
        "{run:#}"
    );
}

/// On streamable HTTP each server request rides the response stream of the call it belongs to:
/// with two agents' elicitations pending at once, each agent gets only its own (picking by the
/// longest-running call would send B's to A, whose call started first).
#[tokio::test]
async fn two_agents_calling_one_server_each_get_only_their_own_elicitations() {
    let Some(peers) = peers_dir() else { return };
    let python = python_sdk2(&peers);
    let server = python_server("asking_server.py", &python, "http", &[], free_port());
    let c = Companion::start(json!({
        "ssrfWhitelist": ["127.0.0.1/32"],
        "mcpServers": { "asking": {
            "type": "streamableHttp",
            "url": format!("http://127.0.0.1:{}/mcp", server.port),
        }},
    }));
    all_running(&c).await;

    let first = agent(
        &python,
        &c,
        &[
            "--elicit",
            r#"{"name":"agent A"}"#,
            "--elicit-delay",
            "4",
            "--call",
            "mcp_asking_ask",
            r#"{"label":"A"}"#,
        ],
    );
    let second = async {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        agent(
            &python,
            &c,
            &[
                "--elicit",
                r#"{"name":"agent B"}"#,
                "--call",
                "mcp_asking_ask",
                r#"{"label":"B"}"#,
            ],
        )
        .await
    };
    let (a, b) = tokio::join!(first, second);
    for (run, me) in [(&a, "A"), (&b, "B")] {
        let ask = asked_json(run, "mcp_asking_ask");
        assert_eq!(ask["action"], json!("accept"), "{me}: {run:#}");
        assert_eq!(
            ask["content"]["name"],
            json!(format!("agent {me}")),
            "{me}: {run:#}"
        );
        let messages = asked_each(run, "message");
        assert_eq!(
            messages,
            vec![format!("{me}: what is your name?")],
            "{me} was asked only its own question"
        );
    }
}

/// An agent whose elicitation handler never answers: it reports each request, and when that
/// request is cancelled.
#[derive(Clone)]
struct Stalling {
    events: mpsc::UnboundedSender<&'static str>,
}

impl ClientHandler for Stalling {
    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        caps.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        ClientConfig::new(caps, Implementation::new("stalling", "0"))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn create_elicitation(
        &self,
        _params: ElicitRequestParams,
        cx: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        let _ = self.events.send("asked");
        cx.ct.cancelled().await;
        let _ = self.events.send("cancelled");
        Err(McpError::internal_error("cancelled", None))
    }
}

/// The stalling agent's next event, within 30 s (else the companion's log is shown).
async fn next(events: &mut mpsc::UnboundedReceiver<&'static str>, c: &Companion) -> &'static str {
    match tokio::time::timeout(Duration::from_secs(30), events.recv()).await {
        Ok(Some(event)) => event,
        Ok(None) => panic!("the handler is gone"),
        Err(_) => panic!("no event within 30 s; log:\n{}", c.log()),
    }
}

/// Cancellation both ways: the agent cancels its call → the elicitation forwarded to it is
/// cancelled; the call times out → the same; the agent hangs up → the server's tool is not left
/// waiting.
#[tokio::test]
async fn a_cancelled_timed_out_or_departed_call_ends_the_pending_request() {
    let Some(peers) = peers_dir() else { return };
    let asking = json!({
        "command": python_sdk2(&peers).display().to_string(),
        "args": [ASKING_SERVER, "stdio"],
        "connectTimeout": SLOW_START,
    });
    let mut hurried = asking.clone();
    hurried["toolTimeout"] = json!(8);
    let c = Companion::start(json!({ "mcpServers": { "asking": asking, "hurried": hurried } }));
    all_running(&c).await;

    let (tx, mut events) = mpsc::unbounded_channel();
    let client = c.client_with(Stalling { events: tx }).await;
    let mut params = CallToolRequestParams::new("mcp_asking_ask");
    params.arguments = json!({"label": "cancelled-call"}).as_object().cloned();
    let handle = client
        .send_request_with_option(
            ClientRequest::CallToolRequest(CallToolRequest::new(params)),
            PeerRequestOptions::no_options(),
        )
        .await
        .expect("send tools/call");
    assert_eq!(next(&mut events, &c).await, "asked");
    handle
        .cancel(Some("changed my mind".into()))
        .await
        .expect("send notifications/cancelled");
    assert_eq!(
        next(&mut events, &c).await,
        "cancelled",
        "the companion cancels the elicitation it forwarded"
    );
    // The server is not left waiting: its request got an error, or its call was cancelled
    // first (the companion sends notifications/cancelled for the tools/call at the same time).
    let log_has = |needle: &'static str| {
        let c = &c;
        move || c.log().contains(needle)
    };
    assert!(
        eventually(Duration::from_secs(30), log_has("ask cancelled-call: ")).await,
        "the server's tool ended:\n{}",
        c.log()
    );

    // Nobody answers within toolTimeout (8 s): the call times out and the agent's pending
    // elicitation is cancelled.
    let (tx, mut events) = mpsc::unbounded_channel();
    let client3 = c.client_with(Stalling { events: tx }).await;
    let caller = tokio::spawn(async move {
        let result =
            crate::common::call(&client3, "mcp_hurried_ask", json!({"label": "late"})).await;
        (client3, result)
    });
    assert_eq!(next(&mut events, &c).await, "asked");
    assert_eq!(
        next(&mut events, &c).await,
        "cancelled",
        "cancelled at the timeout"
    );
    let (client3, result) = caller.await.expect("join");
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert!(
        crate::common::text(&result).contains("timed out after 8 s"),
        "{result:?}"
    );
    drop(client3);

    // The agent hangs up while its elicitation is pending.
    let (tx, mut events) = mpsc::unbounded_channel();
    let client2 = Arc::new(c.client_with(Stalling { events: tx }).await);
    let mut params = CallToolRequestParams::new("mcp_asking_ask");
    params.arguments = json!({"label": "departed"}).as_object().cloned();
    let caller = client2.clone();
    let pending = tokio::spawn(async move { caller.call_tool(params).await });
    assert_eq!(next(&mut events, &c).await, "asked");
    pending.abort();
    drop(client2);
    drop(client);
    assert!(
        eventually(Duration::from_secs(30), log_has("ask departed: ")).await,
        "the server's tool ended, not left waiting:\n{}",
        c.log()
    );
    assert!(
        !c.log().contains("ask departed: accept"),
        "nobody answered for the departed agent"
    );
}

/// `notifications/roots/list_changed` goes upstream when an agent says its roots changed and
/// when a reload edits an entry's `roots` (without restarting the server). server-everything
/// re-asks `roots/list` on it and logs "Roots updated: N root(s)" to us.
#[tokio::test]
async fn roots_changes_reach_the_servers_without_a_restart() {
    let Some(peers) = peers_dir() else { return };
    let scratch = tempfile::tempdir().expect("tempdir");
    let (roots, _) = entry_roots(scratch.path());
    let mut config = config(&peers, &roots);
    let c = Companion::start(config.clone());
    let before = all_running(&c).await;
    let updates = |n: usize| {
        let c = &c;
        move || c.log().matches("Roots updated: ").count() >= n
    };
    assert!(
        eventually(Duration::from_secs(30), updates(1)).await,
        "server-everything's first roots/list:\n{}",
        c.log()
    );
    let first = c.log().matches("Roots updated: ").count();

    // An agent says its roots changed.
    let run = agent(
        &python_sdk2(&peers),
        &c,
        &["--roots", "file:///x/", "--notify-roots"],
    )
    .await;
    assert_eq!(run["exit"], json!(0), "{run:#}");
    assert!(
        eventually(Duration::from_secs(30), updates(first + 1)).await,
        "the agent's roots/list_changed reached server-everything:\n{}",
        c.log()
    );

    // The entry's roots are edited: same process, the new roots, and one more roots/list.
    let edited = vec![scratch.path().join("gamma")];
    config["mcpServers"]["asking"]["roots"] = json!(edited);
    config["mcpServers"]["everything"]["roots"] = json!(edited);
    std::fs::write(&c.config, serde_json::to_vec_pretty(&config).expect("json")).expect("write");
    let out = c.cli(&["reload", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("report");
    assert_eq!(report["changed"], json!([]), "{report}");
    assert!(
        eventually(Duration::from_secs(30), || c
            .log()
            .contains("Roots updated: 1 root(s)"))
        .await,
        "server-everything re-asked after the edit:\n{}",
        c.log()
    );
    let after = c.status().await.servers;
    for name in ["asking", "everything"] {
        let pid = |list: &[mcp_companion::supervisor::ServerStatus]| {
            list.iter().find(|s| s.name == name).and_then(|s| s.pid)
        };
        assert_eq!(pid(&after), pid(&before), "{name} kept its process");
    }
    let run = agent(
        &python_sdk2(&peers),
        &c,
        &["--call", "mcp_asking_roots", "{}"],
    )
    .await;
    assert_eq!(
        asked_json(&run, "mcp_asking_roots")["roots"],
        json!([format!("file://{}/gamma/", scratch.path().display())]),
        "{run:#}"
    );
}
