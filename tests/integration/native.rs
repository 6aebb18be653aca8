//! Proves that prompts, resources, templates, completions, subscriptions and log messages pass
//! through natively, with real servers (server-everything and our demo server): listed under
//! their documented names and URIs, read, filled and completed at the server that owns them,
//! updates and log messages reaching the agent that asked; a resource link in a tool result is
//! readable through the companion; two servers with the same URIs get them rewritten and still
//! routed; `"wrapResources": false` drops the wrapped tools and keeps the native forms.
#![expect(
    deprecated,
    reason = "logging/setLevel and log messages are deprecated by SEP-2577; 2025-era servers use them"
)]

use std::time::Duration;

use rmcp::model::{
    ArgumentInfo, ClientCapabilities, ClientConfig, CompleteRequestParams, GetPromptRequestParams,
    Implementation, LoggingLevel, LoggingMessageNotificationParam, ProtocolVersion,
    ReadResourceRequestParams, Reference, ResourceContents, ResourceUpdatedNotificationParam,
    SetLevelRequestParams, SubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::common::{Companion, call, demo, everything_js, peers_dir, tool_names};

/// What the test client heard, as text: `updated <uri>` and `log <level> <data>`.
#[derive(Clone)]
struct Recorder(mpsc::UnboundedSender<String>);

impl ClientHandler for Recorder {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("native-it", "0"),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_prompt_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.0.send("prompts changed".to_owned());
    }

    async fn on_resource_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.0.send("resources changed".to_owned());
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(format!("updated {}", params.uri));
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        let _ = self
            .0
            .send(format!("log {:?} {}", params.level, params.data));
    }
}

/// Waits (at most `timeout`) for a heard line starting with `prefix`.
async fn heard(
    rx: &mut mpsc::UnboundedReceiver<String>,
    prefix: &str,
    timeout: Duration,
) -> Option<String> {
    tokio::time::timeout(timeout, async {
        while let Some(line) = rx.recv().await {
            if line.starts_with(prefix) {
                return Some(line);
            }
        }
        None
    })
    .await
    .ok()
    .flatten()
}

/// Has server-everything send updates of the resources its agents subscribed to.
async fn toggle_updates<H: ClientHandler>(client: &RunningService<RoleClient, H>) {
    call(
        client,
        "mcp_everything_toggle-subscriber-updates",
        json!({}),
    )
    .await;
}

/// Asserts that the next update heard (within 30 s) is of `uri`.
async fn hears_update(c: &Companion, rx: &mut mpsc::UnboundedReceiver<String>, uri: &str) {
    let update = heard(rx, "updated ", Duration::from_secs(30)).await;
    assert_eq!(
        update.as_deref(),
        Some(&*format!("updated {uri}")),
        "{}",
        c.log()
    );
}

fn contents_text(contents: &[ResourceContents]) -> String {
    contents
        .iter()
        .map(|c| match c {
            ResourceContents::TextResourceContents { text, .. } => text.clone(),
            ResourceContents::BlobResourceContents { blob, .. } => blob.clone(),
            _ => String::new(),
        })
        .collect()
}

fn contents_uris(contents: &[ResourceContents]) -> Vec<String> {
    contents
        .iter()
        .filter_map(|c| serde_json::to_value(c).ok())
        .filter_map(|v| v["uri"].as_str().map(str::to_owned))
        .collect()
}

async fn read(
    client: &RunningService<RoleClient, Recorder>,
    uri: &str,
) -> Result<Vec<ResourceContents>, rmcp::service::ServiceError> {
    client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .map(|r| r.contents)
}

#[tokio::test]
async fn everything_and_demo_prompts_resources_completions_updates_and_logs_pass_through() {
    let Some(peers) = peers_dir() else { return };
    let c = Companion::start(json!({ "mcpServers": {
        "everything": { "command": "node", "args": [everything_js(&peers), "stdio"] },
        "demo": demo(&[]),
    } }));
    c.running().await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let client = c.client_with(Recorder(tx)).await;
    let caps = client
        .peer_info()
        .expect("initialized")
        .capabilities
        .clone();
    assert!(caps.prompts.is_some(), "{caps:?}");
    let resources = caps.resources.clone().expect("resources declared");
    assert_eq!(resources.subscribe, Some(true), "everything can subscribe");
    assert!(caps.completions.is_some(), "{caps:?}");

    // Prompts: <server>_<name>, filled at the server.
    let prompts = client.list_all_prompts().await.expect("prompts/list");
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    for want in [
        "everything_simple-prompt",
        "everything_args-prompt",
        "demo_greet",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    let args = json!({"city": "Paris"})
        .as_object()
        .cloned()
        .expect("object");
    let filled = client
        .get_prompt(GetPromptRequestParams::new("everything_args-prompt").with_arguments(args))
        .await
        .expect("prompts/get");
    assert!(
        serde_json::to_string(&filled.messages)
            .expect("json")
            .contains("Paris"),
        "{filled:?}"
    );
    let unknown = client
        .get_prompt(GetPromptRequestParams::new("args-prompt"))
        .await
        .expect_err("the raw name is not served");
    assert!(unknown.to_string().contains("unknown prompt"), "{unknown}");

    // Resources: URIs unique to one server stay as they are.
    let listed = client.list_all_resources().await.expect("resources/list");
    let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
    for want in [
        "demo://resource/static/document/architecture.md",
        "demo://static/hello",
    ] {
        assert!(uris.contains(&want), "{want} missing from {uris:?}");
    }
    let doc = read(&client, "demo://resource/static/document/architecture.md")
        .await
        .expect("read a listed resource of everything");
    assert!(!contents_text(&doc).is_empty());
    let hello = read(&client, "demo://static/hello")
        .await
        .expect("read demo's");
    assert_eq!(contents_uris(&hello), ["demo://static/hello"]);

    // Templates: listed as they are, their expansions routed by matching.
    let templates = client
        .list_all_resource_templates()
        .await
        .expect("resources/templates/list");
    let listed: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert!(
        listed.contains(&"demo://resource/dynamic/text/{resourceId}"),
        "{listed:?}"
    );
    assert!(listed.contains(&"demo://greeting/{name}"), "{listed:?}");
    let dynamic = read(&client, "demo://resource/dynamic/text/3")
        .await
        .expect("template read");
    assert!(contents_text(&dynamic).contains('3'), "{dynamic:?}");
    let greeting = read(&client, "demo://greeting/Ada")
        .await
        .expect("demo template read");
    assert_eq!(contents_text(&greeting), "Hello, Ada!");
    let nowhere = read(&client, "nothing://here").await.expect_err("no owner");
    assert!(
        nowhere.to_string().contains("resource not found"),
        "{nowhere}"
    );

    // Completions, by the served prompt name.
    let completion = client
        .complete(CompleteRequestParams::new(
            Reference::for_prompt("everything_completable-prompt"),
            ArgumentInfo::new("department", "E"),
        ))
        .await
        .expect("completion/complete");
    assert!(
        completion
            .completion
            .values
            .iter()
            .any(|v| v == "Engineering"),
        "{completion:?}"
    );

    // A resource link in a tool result is readable through us.
    let links = call(
        &client,
        "mcp_everything_get-resource-links",
        json!({"count": 2}),
    )
    .await;
    let linked: Vec<String> = links
        .content
        .iter()
        .filter_map(|c| c.as_resource_link().map(|link| link.uri.clone()))
        .collect();
    assert!(!linked.is_empty(), "{links:?}");
    for uri in &linked {
        let contents = read(&client, uri)
            .await
            .unwrap_or_else(|e| panic!("read {uri}: {e}"));
        assert!(!contents.is_empty(), "{uri}");
    }

    // Subscriptions: the server's updates reach the subscribed agent under its URI.
    let subscribed = "demo://resource/dynamic/text/1";
    client
        .subscribe(SubscribeRequestParams::new(subscribed))
        .await
        .expect("resources/subscribe");
    toggle_updates(&client).await;
    hears_update(&c, &mut rx, subscribed).await;

    // Log messages, at the level the agent set.
    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Debug))
        .await
        .expect("logging/setLevel");
    call(
        &client,
        "mcp_everything_toggle-simulated-logging",
        json!({}),
    )
    .await;
    let log = heard(&mut rx, "log ", Duration::from_secs(30)).await;
    assert!(
        log.is_some(),
        "no log message reached the agent\n{}",
        c.log()
    );

    // The wrapped forms are still there by default.
    let tools = tool_names(&client).await;
    assert!(
        tools
            .iter()
            .any(|t| t == "mcp_everything_prompt_simple-prompt"),
        "{tools:?}"
    );
}

#[tokio::test]
async fn shared_uris_are_rewritten_per_server_and_wrap_resources_false_drops_the_wrapped_tools() {
    let c = Companion::start(json!({
        "wrapResources": false,
        "mcpServers": { "a": demo(&[]), "b": demo(&[]) },
    }));
    c.running().await;
    let (tx, _rx) = mpsc::unbounded_channel();
    let client = c.client_with(Recorder(tx)).await;
    let tools = tool_names(&client).await;
    assert!(
        tools
            .iter()
            .all(|t| !t.contains("_resource_") && !t.contains("_prompt_")),
        "{tools:?}"
    );
    assert!(tools.iter().any(|t| t == "mcp_a_echo"), "{tools:?}");

    let listed = client.list_all_resources().await.expect("resources/list");
    let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
    assert!(
        uris.contains(&"mcp-companion://a/demo://static/hello"),
        "{uris:?}"
    );
    assert!(
        uris.contains(&"mcp-companion://b/demo://static/hello"),
        "{uris:?}"
    );
    assert!(!uris.contains(&"demo://static/hello"), "{uris:?}");
    let contents = read(&client, "mcp-companion://b/demo://static/hello")
        .await
        .expect("read a rewritten URI");
    assert_eq!(
        contents_uris(&contents),
        ["mcp-companion://b/demo://static/hello"]
    );
    let ambiguous = read(&client, "demo://static/hello")
        .await
        .expect_err("two owners");
    assert!(
        ambiguous.to_string().contains(
            "is served by \"a\" and \"b\": read it as \"mcp-companion://a/demo://static/hello\""
        ),
        "{ambiguous}"
    );

    let templates = client
        .list_all_resource_templates()
        .await
        .expect("resources/templates/list");
    let listed: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert!(
        listed.contains(&"mcp-companion://a/demo://greeting/{name}"),
        "{listed:?}"
    );
    let greeting = read(&client, "mcp-companion://a/demo://greeting/Bo")
        .await
        .expect("read an expansion of a rewritten template");
    assert_eq!(contents_text(&greeting), "Hello, Bo!");
    assert_eq!(
        contents_uris(&greeting),
        ["mcp-companion://a/demo://greeting/Bo"]
    );

    let prompts = client.list_all_prompts().await.expect("prompts/list");
    let mut names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["a_greet", "a_review_code", "b_greet", "b_review_code"]
    );
    let args = json!({"name": "Cy"}).as_object().cloned().expect("object");
    let filled = client
        .get_prompt(GetPromptRequestParams::new("b_greet").with_arguments(args))
        .await
        .expect("prompts/get");
    let text: Value = serde_json::to_value(&filled.messages).expect("json");
    assert!(text.to_string().contains("Cy"), "{text}");
}

fn app_server(label: &str) -> Value {
    let Some(peers) = peers_dir() else {
        return Value::Null;
    };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/app_server.py");
    json!({ "command": crate::common::python_sdk2(&peers), "args": [script, "--label", label] })
}

/// The UI URI tool `name` names in `_meta.ui.resourceUri`.
async fn ui_uri(client: &RunningService<RoleClient, Recorder>, name: &str) -> String {
    let tools = client.list_all_tools().await.expect("tools/list");
    let tool = tools
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no tool {name}"));
    let meta = serde_json::to_value(&tool.meta).expect("json");
    meta["ui"]["resourceUri"]
        .as_str()
        .unwrap_or_else(|| panic!("{name} names no UI: {meta}"))
        .to_owned()
}

#[tokio::test]
async fn an_app_ui_uri_stays_when_unique_and_is_rewritten_everywhere_when_two_servers_share_it() {
    if peers_dir().is_none() {
        return;
    }
    let one = Companion::start(json!({ "mcpServers": { "solo": app_server("S") } }));
    one.settled().await;
    let (tx, _rx) = mpsc::unbounded_channel();
    let client = one.client_with(Recorder(tx.clone())).await;
    assert_eq!(
        ui_uri(&client, "mcp_solo_show").await,
        "ui://widget/app.html"
    );
    let html = read(&client, "ui://widget/app.html")
        .await
        .expect("read the UI");
    assert_eq!(contents_text(&html), "<p>S</p>");

    let two = Companion::start(json!({ "mcpServers": {
        "a": app_server("A"),
        "b": app_server("B"),
    } }));
    for s in two.settled().await {
        assert_eq!(s.state.as_str(), "running", "{s:?}\n{}", two.log());
    }
    let client = two.client_with(Recorder(tx)).await;
    assert_eq!(
        ui_uri(&client, "mcp_a_show").await,
        "ui://a/widget/app.html"
    );
    assert_eq!(
        ui_uri(&client, "mcp_b_show").await,
        "ui://b/widget/app.html"
    );
    let listed = client.list_all_resources().await.expect("resources/list");
    let mut uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
    uris.sort_unstable();
    assert_eq!(uris, ["ui://a/widget/app.html", "ui://b/widget/app.html"]);
    let html = read(&client, "ui://b/widget/app.html")
        .await
        .expect("read b's UI");
    assert_eq!(contents_text(&html), "<p>B</p>");
    assert_eq!(contents_uris(&html), ["ui://b/widget/app.html"]);

    // The result's link and embedded resource carry the rewritten URI, and the link reads.
    let shown = call(&client, "mcp_b_show", json!({})).await;
    let result = serde_json::to_value(&shown).expect("json");
    assert_eq!(
        result["content"][0]["uri"],
        json!("ui://b/widget/app.html"),
        "{result}"
    );
    assert_eq!(
        result["content"][1]["resource"]["uri"],
        json!("ui://b/widget/app.html"),
        "{result}"
    );
    let linked = read(&client, "ui://b/widget/app.html")
        .await
        .expect("the link reads");
    assert_eq!(contents_text(&linked), "<p>B</p>");
}

#[tokio::test]
async fn a_server_leaving_announces_prompt_and_resource_list_changes() {
    let c = Companion::start(json!({ "mcpServers": { "a": demo(&[]), "b": demo(&[]) } }));
    c.running().await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let client = c.client_with(Recorder(tx)).await;
    let stop = c.cli(&["stop", "b"]);
    assert!(
        stop.status.success(),
        "{}",
        String::from_utf8_lossy(&stop.stderr)
    );
    let wait = Duration::from_secs(30);
    assert!(
        heard(&mut rx, "prompts changed", wait).await.is_some(),
        "{}",
        c.log()
    );
    assert!(
        heard(&mut rx, "resources changed", wait).await.is_some(),
        "{}",
        c.log()
    );
    let prompts = client.list_all_prompts().await.expect("prompts/list");
    let mut names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["a_greet", "a_review_code"]);
    // With b gone, a's URIs are unique again and served as they are.
    let listed = client.list_all_resources().await.expect("resources/list");
    assert!(
        listed.iter().any(|r| r.uri == "demo://static/hello"),
        "{listed:?}"
    );
}

#[tokio::test]
async fn subscribing_again_after_a_server_restart_resumes_its_updates() {
    let Some(peers) = peers_dir() else { return };
    let c = Companion::start(json!({ "mcpServers": {
        "everything": { "command": "node", "args": [everything_js(&peers), "stdio"] },
    } }));
    c.settled().await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let client = c.client_with(Recorder(tx)).await;
    let uri = "demo://resource/dynamic/text/2";
    client
        .subscribe(SubscribeRequestParams::new(uri))
        .await
        .expect("resources/subscribe");
    let restart = c.cli(&["restart", "everything"]);
    assert!(
        restart.status.success(),
        "{}",
        String::from_utf8_lossy(&restart.stderr)
    );
    c.settled().await;
    // The new process knows no subscription until the agent subscribes again.
    client
        .subscribe(SubscribeRequestParams::new(uri))
        .await
        .expect("resources/subscribe again");
    toggle_updates(&client).await;
    hears_update(&c, &mut rx, uri).await;
}

/// `enabledTools` that leaves a server's resources out is not read around: an unlisted URI
/// goes to the only resource server only when none of its resources or templates is withheld.
#[tokio::test]
async fn a_resource_left_out_by_enabled_tools_is_neither_read_nor_subscribed() {
    let c = Companion::start(json!({ "mcpServers": {
        "demo": demo(&[]).as_object().cloned().map(|mut e| {
            e.insert("enabledTools".into(), json!(["echo"]));
            Value::Object(e)
        }).expect("entry"),
    } }));
    c.running().await;
    let (tx, _rx) = mpsc::unbounded_channel();
    let client = c.client_with(Recorder(tx)).await;
    let listed = client.list_all_resources().await.expect("resources/list");
    assert!(listed.is_empty(), "{listed:?}");
    let refused = read(&client, "demo://static/hello")
        .await
        .expect_err("a withheld resource is not read");
    assert!(
        refused.to_string().contains("demo://static/hello"),
        "{refused}"
    );
    client
        .subscribe(SubscribeRequestParams::new("demo://static/hello"))
        .await
        .expect_err("nor subscribed");
    // The same server with every resource served still reads a URI it does not list.
    let open = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    for s in open.settled().await {
        assert_eq!(s.state.as_str(), "running", "{s:?}\n{}", open.log());
    }
    let (tx, _rx) = mpsc::unbounded_channel();
    let client = open.client_with(Recorder(tx)).await;
    let contents = read(&client, "demo://static/hello").await.expect("served");
    assert!(!contents.is_empty());
}

/// A reload that takes a resource out of a profile ends that profile's sessions' subscriptions
/// of it: the server's updates stop reaching them (while an agent that still sees the resource
/// keeps hearing them).
#[tokio::test]
async fn a_profile_that_loses_a_resource_stops_hearing_its_updates() {
    let Some(peers) = peers_dir() else { return };
    let doc = |resources: Value| {
        json!({
            "mcpServers": {
                "everything": { "command": "node", "args": [everything_js(&peers), "stdio"] },
            },
            "profiles": { "reader": { "servers": ["everything"], "resources": resources } },
        })
    };
    let c = Companion::start(doc(json!(["*"])));
    c.settled().await;
    let path = mcp_companion::ipc::paths::profile_socket(&c.socket, "reader");
    assert!(
        crate::common::eventually(Duration::from_secs(30), || path.exists()).await,
        "{}",
        c.log()
    );
    let stream = mcp_companion::ipc::socket::connect(&path)
        .await
        .expect("connect the profile's socket");
    let (tx, mut in_profile) = mpsc::unbounded_channel();
    let reader = rmcp::ServiceExt::serve(Recorder(tx), stream)
        .await
        .expect("handshake");
    let uri = "demo://resource/dynamic/text/2";
    reader
        .subscribe(SubscribeRequestParams::new(uri))
        .await
        .expect("resources/subscribe in the profile");
    let (tx, mut everything) = mpsc::unbounded_channel();
    let watcher = c.client_with(Recorder(tx)).await;
    watcher
        .subscribe(SubscribeRequestParams::new(uri))
        .await
        .expect("resources/subscribe on the main socket");
    toggle_updates(&watcher).await;
    let wait = Duration::from_secs(30);
    assert!(
        heard(&mut in_profile, "updated ", wait).await.is_some(),
        "{}",
        c.log()
    );

    std::fs::write(&c.config, doc(json!([])).to_string()).expect("write config");
    assert!(c.cli(&["reload"]).status.success());
    assert!(
        heard(&mut in_profile, "resources changed", wait)
            .await
            .is_some(),
        "{}",
        c.log()
    );
    while in_profile.try_recv().is_ok() {}
    // Two updates heard on the main socket after the reload: the profile's session got them
    // too unless its subscription ended.
    while everything.try_recv().is_ok() {}
    for _ in 0..2 {
        assert!(
            heard(&mut everything, "updated ", wait).await.is_some(),
            "{}",
            c.log()
        );
    }
    let late: Vec<String> = std::iter::from_fn(|| in_profile.try_recv().ok())
        .filter(|line| line.starts_with("updated "))
        .collect();
    assert!(
        late.is_empty(),
        "the profile's session still hears {late:?}"
    );
    drop(reader);
}
