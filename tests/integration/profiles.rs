//! Profiles (`docs/src/profiles.md`) over real processes: two demo servers and two valid
//! profiles plus a broken one. A session on a profile's socket (directly, or through
//! `bridge --profile`) sees only that profile's tools, prompts and resources; a call or read
//! outside it is refused exactly as an unknown name is, on both call paths; a profile edit
//! reaches a connected session as `list_changed`; a broken profile serves nothing while the
//! servers and the other profiles run.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, GetPromptRequestParams, ReadResourceRequestParams,
    Reference,
};
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::common::{
    BIN, CallPath, Companion, call, demo, eventually, everything_js, on_both_paths, peers_dir,
    text, tool_names,
};

fn config() -> Value {
    json!({
        "mcpServers": { "a": demo(&[]), "b": demo(&[]) },
        "profiles": {
            "alpha": {
                "servers": ["a"],
                "tools": ["echo", "mcp_a_add"],
                "prompts": ["greet"],
                "resources": ["hello"],
                "naming": "raw",
                "clients": ["rule-agent*"]
            },
            "beta": { "servers": ["b"], "tools": ["sl*", "nothing_here"], "prompts": [], "resources": [], "naming": "server" },
            "broken": { "servers": ["a", "ghost"] }
        }
    })
}

fn profile_socket(c: &Companion, name: &str) -> PathBuf {
    mcp_companion::ipc::paths::profile_socket(&c.socket, name)
}

/// Counts `notifications/tools/list_changed`.
#[derive(Clone)]
struct Heard(Arc<AtomicUsize>);

impl rmcp::ClientHandler for Heard {
    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Counts `notifications/tools/list_changed`, introducing itself as `name`.
#[derive(Clone)]
struct Named {
    name: &'static str,
    heard: Arc<AtomicUsize>,
}

impl rmcp::ClientHandler for Named {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new(self.name, "0"),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        self.heard.fetch_add(1, Ordering::SeqCst);
    }
}

async fn a_profile_by_client_name_on_the_main_socket(path: CallPath) {
    let c = Companion::start_on(config(), path);
    c.settled().await;
    let heard = Arc::new(AtomicUsize::new(0));
    let ruled = c
        .client_with(Named {
            name: "rule-agent-7",
            heard: heard.clone(),
        })
        .await;
    assert_eq!(
        sorted(tool_names(&ruled).await),
        ["add", "echo", "prompt_greet", "resource_hello"],
        "clientInfo.name matched alpha's `clients`"
    );
    assert_eq!(
        text(&call(&ruled, "echo", json!({ "message": "r" })).await),
        "r"
    );
    let refused = call(&ruled, "sleep", json!({ "seconds": 0 })).await;
    assert_eq!(text(&refused), "unknown tool \"sleep\"");

    let other = c
        .client_with(Named {
            name: "someone-else",
            heard: Arc::new(AtomicUsize::new(0)),
        })
        .await;
    let every = tool_names(&other).await;
    assert!(every.contains(&"mcp_b_sleep".to_owned()), "{every:?}");

    // The socket comes first: a matching agent on beta's socket gets beta.
    let beta_socket = profile_socket(&c, "beta");
    assert!(eventually(Duration::from_secs(30), || beta_socket.exists()).await);
    let stream = mcp_companion::ipc::socket::connect(&profile_socket(&c, "beta"))
        .await
        .expect("beta socket");
    let on_beta = Named {
        name: "rule-agent-7",
        heard: Arc::new(AtomicUsize::new(0)),
    }
    .serve(stream)
    .await
    .expect("handshake");
    let names = tool_names(&on_beta).await;
    assert!(names.iter().all(|n| n.starts_with("b_sl")), "{names:?}");
    // Choosing a profile at initialize is not a change the agent is told about.
    assert_eq!(heard.load(Ordering::SeqCst), 0);
    let _ = ruled.cancel().await;
    let _ = other.cancel().await;
    let _ = on_beta.cancel().await;
}

on_both_paths!(
    a_profile_by_client_name_on,
    a_profile_by_client_name_on_the_main_socket
);

/// A client session on `name`'s socket, once it is open.
async fn profile_client(
    c: &Companion,
    name: &str,
    heard: &Arc<AtomicUsize>,
) -> RunningService<RoleClient, Heard> {
    let path = profile_socket(c, name);
    assert!(
        eventually(Duration::from_secs(30), || path.exists()).await,
        "no socket for profile {name} at {}; log:\n{}",
        path.display(),
        c.log()
    );
    let stream = mcp_companion::ipc::socket::connect(&path)
        .await
        .expect("connect profile socket");
    Heard(heard.clone()).serve(stream).await.expect("handshake")
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

async fn a_profile_sees_only_its_catalog(path: CallPath) {
    let c = Companion::start_on(config(), path);
    c.settled().await;
    let heard = Arc::new(AtomicUsize::new(0));
    let alpha = profile_client(&c, "alpha", &heard).await;

    assert_eq!(
        sorted(tool_names(&alpha).await),
        ["add", "echo", "prompt_greet", "resource_hello"],
        "raw naming, only the profile's globs"
    );
    let echoed = call(&alpha, "echo", json!({ "message": "hi" })).await;
    assert_eq!(text(&echoed), "hi");
    assert_ne!(echoed.is_error, Some(true));
    let added = call(&alpha, "add", json!({ "a": 2, "b": 3 })).await;
    assert_eq!(text(&added), "5");

    // Outside the profile: the same answer as for a name nothing serves.
    for name in [
        "sleep",
        "mcp_a_sleep",
        "mcp_a_echo",
        "mcp_b_echo",
        "no_such_tool",
    ] {
        let refused = call(&alpha, name, json!({ "message": "x", "ms": 1 })).await;
        assert_eq!(refused.is_error, Some(true), "{name}");
        assert_eq!(text(&refused), format!("unknown tool \"{name}\""), "{name}");
    }

    // Prompts and resources served as themselves follow the profile too.
    let prompts: Vec<String> = alpha
        .list_all_prompts()
        .await
        .expect("prompts/list")
        .into_iter()
        .map(|p| p.name)
        .collect();
    // A raw-named profile (one server) serves prompts under the server's own names.
    assert_eq!(prompts, ["greet"]);
    let outside = alpha
        .get_prompt(
            GetPromptRequestParams::new("review_code").with_arguments(
                json!({ "code": "x" })
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        )
        .await
        .expect_err("a prompt outside the profile");
    let unknown = alpha
        .get_prompt(GetPromptRequestParams::new("nope"))
        .await
        .expect_err("an unknown prompt");
    assert_eq!(
        outside.to_string().replace("review_code", "X"),
        unknown.to_string().replace("nope", "X")
    );
    // Completion for a prompt outside the profile: as for an unknown prompt.
    let complete = |prompt: &str| {
        CompleteRequestParams::new(
            Reference::for_prompt(prompt),
            ArgumentInfo::new("code", "x"),
        )
    };
    let outside = alpha
        .complete(complete("review_code"))
        .await
        .expect_err("completion outside the profile");
    let unknown = alpha
        .complete(complete("nope"))
        .await
        .expect_err("completion of an unknown prompt");
    assert_eq!(
        outside.to_string().replace("review_code", "X"),
        unknown.to_string().replace("nope", "X")
    );
    let resources: Vec<String> = alpha
        .list_all_resources()
        .await
        .expect("resources/list")
        .into_iter()
        .map(|r| r.uri.clone())
        .collect();
    assert_eq!(resources, ["demo://static/hello"]);
    let read = alpha
        .read_resource(ReadResourceRequestParams::new("demo://static/hello"))
        .await
        .expect("read inside");
    assert!(format!("{read:?}").contains("Hello from the demo server"));
    let pixel = alpha
        .read_resource(ReadResourceRequestParams::new("demo://static/pixel"))
        .await
        .expect_err("a resource outside the profile");
    let nowhere = alpha
        .read_resource(ReadResourceRequestParams::new("demo://nowhere"))
        .await
        .expect_err("an unknown resource");
    assert_eq!(
        pixel.to_string().replace("demo://static/pixel", "X"),
        nowhere.to_string().replace("demo://nowhere", "X")
    );
    assert!(
        alpha
            .list_all_resource_templates()
            .await
            .expect("templates")
            .is_empty()
    );

    // The other profile: its server's tools under `<server>_<tool>`, nothing of "a".
    let beta_heard = Arc::new(AtomicUsize::new(0));
    let beta = profile_client(&c, "beta", &beta_heard).await;
    let names = tool_names(&beta).await;
    assert!(names.contains(&"b_sleep".to_owned()), "{names:?}");
    assert!(names.iter().all(|n| n.starts_with("b_sl")), "{names:?}");
    let slept = call(&beta, "b_sleep", json!({ "seconds": 0 })).await;
    assert_ne!(slept.is_error, Some(true), "{}", text(&slept));
    let refused = call(&beta, "echo", json!({ "message": "x" })).await;
    assert_eq!(text(&refused), "unknown tool \"echo\"");

    // The main socket still serves everything.
    let all = c.client().await;
    let every = tool_names(&all).await;
    for name in ["mcp_a_echo", "mcp_a_sleep", "mcp_b_echo", "mcp_b_sleep"] {
        assert!(every.contains(&name.to_owned()), "{name} in {every:?}");
    }
    let _ = alpha.cancel().await;
    let _ = beta.cancel().await;
    let _ = all.cancel().await;
}

on_both_paths!(
    a_profile_sees_only_its_catalog_on,
    a_profile_sees_only_its_catalog
);

#[tokio::test]
async fn a_broken_profile_is_reported_and_the_rest_is_served() {
    let c = Companion::start(config());
    c.running().await;
    let report = c.status().await;
    let names: Vec<&str> = report.profiles.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["alpha", "beta", "broken"]);
    let broken = &report.profiles[2];
    let why = broken.error.as_deref().expect("broken has its error");
    assert!(why.contains("unknown server(s): ghost"), "{why}");
    assert!(report.profiles[0].error.is_none());
    assert_eq!(report.profiles[0].servers, ["a"]);
    assert!(report.profiles[0].unmatched.is_empty());
    assert_eq!(report.profiles[1].unmatched, ["tools \"nothing_here\""]);
    assert!(
        eventually(Duration::from_secs(30), || profile_socket(&c, "beta")
            .exists())
        .await,
        "beta's socket"
    );
    assert!(!profile_socket(&c, "broken").exists());

    // `status` and `tools` print the table; `tools --profile` lists what the profile sees.
    let status = c.cli(&["status"]);
    let said = String::from_utf8_lossy(&status.stdout);
    assert!(
        said.contains("PROFILE") && said.contains("invalid: profile \"broken\""),
        "{said}"
    );
    assert!(
        said.contains("(match nothing: tools \"nothing_here\")"),
        "{said}"
    );
    let tools = c.cli(&["tools", "--profile", "alpha"]);
    let said = String::from_utf8_lossy(&tools.stdout);
    assert!(
        tools.status.success(),
        "{}",
        String::from_utf8_lossy(&tools.stderr)
    );
    let listed: Vec<&str> = said
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(
        sorted(listed.iter().map(|s| s.to_string()).collect()),
        ["add", "echo", "prompt_greet", "resource_hello"]
    );
    let all = c.cli(&["tools"]);
    let said = String::from_utf8_lossy(&all.stdout);
    assert!(
        said.contains("mcp_b_sleep") && said.contains("PROFILE"),
        "{said}"
    );
    let broken_tools = c.cli(&["tools", "--profile", "broken"]);
    assert!(!broken_tools.status.success());
    let err = String::from_utf8_lossy(&broken_tools.stderr);
    assert!(
        err.contains("profile \"broken\" is not served") && err.contains("ghost"),
        "{err}"
    );
}

#[tokio::test]
async fn connect_with_a_profile_writes_it_into_the_clients_entry() {
    let c = Companion::start(config());
    let file = c.dir.path().join("cursor-mcp.json");
    let connect = |profile: &str| {
        Command::new(BIN)
            .args(["connect", "cursor", "--file"])
            .arg(&file)
            .args(["--profile", profile, "--config"])
            .arg(&c.config)
            .env("HOME", &c.home)
            .env_remove("XDG_DATA_HOME")
            .output()
            .expect("connect")
    };
    let out = connect("alpha");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("written")).expect("json");
    assert_eq!(
        written["mcpServers"]["mcp-companion"]["args"],
        json!(["bridge", "--profile", "alpha"])
    );
    for (name, says) in [
        ("nosuch", "unknown profile \"nosuch\""),
        ("broken", "unknown server(s): ghost"),
    ] {
        let out = connect(name);
        assert!(!out.status.success(), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{err}");
    }
}

/// Runs `bridge --profile NAME` with piped stdio, sends the opening, `tools/list`, and a call
/// of `echo` and of `sleep`; returns the names listed and the two calls' results.
fn bridge_session(c: &Companion, profile: &str) -> (Vec<String>, Value, Value) {
    let mut child = Command::new(BIN)
        .args(["bridge", "--profile", profile, "--socket"])
        .arg(&c.socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bridge");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    for m in [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "b", "version": "0" } } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }),
        json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "name": "echo", "arguments": { "message": "through" } } }),
        json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": { "name": "sleep", "arguments": { "seconds": 0 } } }),
    ] {
        writeln!(stdin, "{m}").expect("write");
    }
    let mut answers = std::collections::HashMap::new();
    while answers.len() < 3 {
        let mut line = String::new();
        if stdout.read_line(&mut line).expect("read") == 0 {
            break;
        }
        let answer: Value = serde_json::from_str(&line).expect("json");
        if let Some(id) = answer["id"].as_i64().filter(|id| *id > 1) {
            answers.insert(id, answer);
        }
    }
    drop(stdin);
    let _ = child.wait();
    let names = answers[&2]["result"]["tools"]
        .as_array()
        .expect("tools/list answered")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    (
        names,
        answers[&3]["result"].clone(),
        answers[&4]["result"].clone(),
    )
}

async fn bridge_with_a_profile_serves_it_and_an_unknown_one_is_named(path: CallPath) {
    let c = Companion::start_on(config(), path);
    c.settled().await;
    assert!(
        eventually(Duration::from_secs(30), || profile_socket(&c, "alpha")
            .exists())
        .await,
        "alpha's socket"
    );
    let (names, inside, outside) = tokio::task::block_in_place(|| bridge_session(&c, "alpha"));
    assert_eq!(
        sorted(names),
        ["add", "echo", "prompt_greet", "resource_hello"]
    );
    assert_eq!(inside["content"][0]["text"], json!("through"), "{inside}");
    assert_eq!(outside["isError"], json!(true), "{outside}");
    assert_eq!(
        outside["content"][0]["text"],
        json!("unknown tool \"sleep\"")
    );

    for (name, says) in [
        (
            "nosuch",
            "unknown profile \"nosuch\": the companion's profiles are alpha, beta, broken",
        ),
        (
            "broken",
            "profile \"broken\" is not served: profile \"broken\" names unknown server(s): ghost",
        ),
    ] {
        let out = Command::new(BIN)
            .args(["bridge", "--profile", name, "--socket"])
            .arg(&c.socket)
            .stdin(Stdio::null())
            .output()
            .expect("bridge");
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{err}");
    }
}

on_both_paths!(
    bridge_with_a_profile_on,
    bridge_with_a_profile_serves_it_and_an_unknown_one_is_named,
    multi_thread
);

#[tokio::test]
async fn a_profile_edit_reaches_its_connected_sessions_only() {
    let c = Companion::start(config());
    c.settled().await;
    let alpha_heard = Arc::new(AtomicUsize::new(0));
    let alpha = profile_client(&c, "alpha", &alpha_heard).await;
    let beta_heard = Arc::new(AtomicUsize::new(0));
    let beta = profile_client(&c, "beta", &beta_heard).await;
    assert_eq!(tool_names(&alpha).await.len(), 4);
    let before_beta = tool_names(&beta).await;

    let mut edited = config();
    edited["profiles"]["alpha"]["tools"] = json!(["echo"]);
    std::fs::write(&c.config, edited.to_string()).expect("write");
    let out = c.cli(&["reload"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        eventually(Duration::from_secs(30), || alpha_heard
            .load(Ordering::SeqCst)
            >= 1)
        .await,
        "alpha heard list_changed"
    );
    assert_eq!(
        sorted(tool_names(&alpha).await),
        ["echo", "prompt_greet", "resource_hello"]
    );
    let refused = call(&alpha, "add", json!({ "a": 1, "b": 1 })).await;
    assert_eq!(text(&refused), "unknown tool \"add\"");
    assert_eq!(beta_heard.load(Ordering::SeqCst), 0, "beta did not change");
    assert_eq!(tool_names(&beta).await, before_beta);
    let _ = alpha.cancel().await;
    let _ = beta.cancel().await;

    // A reload that adds a profile opens its socket; one that breaks a profile closes its.
    let mut next = edited;
    next["profiles"]["gamma"] =
        json!({ "servers": ["a"], "tools": ["add"], "prompts": [], "resources": [] });
    next["profiles"]["beta"]["servers"] = json!(["ghost"]);
    std::fs::write(&c.config, next.to_string()).expect("write");
    let out = c.cli(&["reload"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let gamma = profile_socket(&c, "gamma");
    assert!(
        eventually(Duration::from_secs(30), || gamma.exists()).await,
        "gamma's socket"
    );
    let beta_socket = profile_socket(&c, "beta");
    assert!(
        eventually(Duration::from_secs(30), || !beta_socket.exists()).await,
        "beta's socket closed"
    );
    let gamma_heard = Arc::new(AtomicUsize::new(0));
    let gamma_client = profile_client(&c, "gamma", &gamma_heard).await;
    assert_eq!(tool_names(&gamma_client).await, ["mcp_a_add"]);
    let _ = gamma_client.cancel().await;
}

#[tokio::test]
async fn shutdown_removes_the_profile_sockets() {
    let mut c = Companion::start(config());
    let alpha = profile_socket(&c, "alpha");
    assert!(
        eventually(Duration::from_secs(30), || alpha.exists()).await,
        "alpha's socket"
    );
    let status = c.terminate(Duration::from_secs(30));
    assert!(status.success(), "{status:?}");
    assert!(!alpha.exists() && !profile_socket(&c, "beta").exists());
}

/// server-everything beside a demo server: a profile of a few of its tools by glob.
#[tokio::test]
async fn a_profile_over_server_everything() {
    let Some(peers) = peers_dir() else { return };
    let c = Companion::start(json!({
        "mcpServers": {
            "everything": { "command": "node", "args": [everything_js(&peers), "stdio"] },
            "demo": demo(&[])
        },
        "profiles": {
            "tiny": { "servers": ["everything", "demo"], "tools": ["echo", "get-sum", "mcp_demo_add"], "prompts": [], "resources": [] }
        }
    }));
    c.settled().await;
    let heard = Arc::new(AtomicUsize::new(0));
    let tiny = profile_client(&c, "tiny", &heard).await;
    let names = sorted(tool_names(&tiny).await);
    assert_eq!(
        names,
        [
            "mcp_demo_add",
            "mcp_demo_echo",
            "mcp_everything_echo",
            "mcp_everything_get-sum"
        ]
    );
    let echoed = call(
        &tiny,
        "mcp_everything_echo",
        json!({ "message": "via profile" }),
    )
    .await;
    assert!(text(&echoed).contains("via profile"), "{}", text(&echoed));
    let refused = call(&tiny, "mcp_everything_get-env", json!({})).await;
    assert_eq!(text(&refused), "unknown tool \"mcp_everything_get-env\"");
    let _ = tiny.cancel().await;
}

/// A valid profile whose socket cannot be opened (a regular file holds its path) is shown as
/// not served by `status`, and `bridge --profile` says why at once instead of waiting for a
/// socket that never comes.
#[tokio::test(flavor = "multi_thread")]
async fn a_profile_whose_socket_cannot_be_opened_is_reported_not_served() {
    let c = Companion::start(config());
    c.settled().await;
    let gamma = profile_socket(&c, "gamma");
    std::fs::write(&gamma, "not a socket").expect("plant a file");
    let mut doc = config();
    doc["profiles"]["gamma"] = json!({ "servers": ["a"] });
    std::fs::write(&c.config, doc.to_string()).expect("write config");
    assert!(c.cli(&["reload"]).status.success());
    let mut why = None;
    assert!(
        eventually(Duration::from_secs(30), || {
            let out = c.cli(&["status", "--json"]);
            let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            why = report["profiles"]
                .as_array()
                .and_then(|ps| ps.iter().find(|p| p["name"] == "gamma"))
                .and_then(|p| p["socket_error"].as_str().map(str::to_owned));
            why.is_some()
        })
        .await,
        "status names gamma's socket error"
    );
    let why = why.unwrap_or_default();
    assert!(why.contains(&*gamma.to_string_lossy()), "{why}");
    let shown = String::from_utf8_lossy(&c.cli(&["status"]).stdout).into_owned();
    assert!(
        shown.contains("not served: cannot open its socket"),
        "{shown}"
    );

    let out = tokio::task::block_in_place(|| {
        Command::new(BIN)
            .args(["bridge", "--profile", "gamma", "--socket"])
            .arg(&c.socket)
            .stdin(Stdio::null())
            .output()
            .expect("bridge")
    });
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("profile \"gamma\" is not served: the companion cannot open its socket"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&gamma).expect("kept"),
        "not a socket"
    );
}
