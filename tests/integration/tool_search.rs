//! Tool search (`docs/src/tool-search.md`) over real processes: two demo servers, tool
//! search on for the default view with one tool pinned, a profile that inherits it, and a
//! companion with it off. The agent lists only the search tools and the pinned one, finds a
//! tool by a paraphrase, and `call_tool` answers exactly as a direct call does, on both call
//! paths; a profile's search and `call_tool` never reach a tool outside the profile.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_companion::activity::query::{self, Filter, Record};
use mcp_companion::activity::store;
use rmcp::model::CallToolResult;
use rmcp::service::NotificationContext;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::common::{
    CallPath, Companion, call, client_config, demo, eventually, on_both_paths, text, tool_names,
};

fn config(tool_search: bool) -> Value {
    json!({
        "mcpServers": { "a": demo(&[]), "b": demo(&[]) },
        "toolSearch": tool_search,
        "alwaysList": ["mcp_a_add"],
        "profiles": {
            "alpha": {
                "servers": ["a"], "tools": ["echo", "add"], "prompts": [], "resources": [], "naming": "raw"
            }
        }
    })
}

/// The names `search_tools` returned, best first, from its structured content.
fn found(result: &CallToolResult) -> Vec<String> {
    assert_ne!(result.is_error, Some(true), "{}", text(result));
    let tools = result
        .structured_content
        .as_ref()
        .and_then(|s| s.get("tools"))
        .and_then(Value::as_array)
        .expect("structuredContent.tools");
    for tool in tools {
        assert!(
            tool.get("inputSchema").is_some_and(Value::is_object),
            "{tool}"
        );
        assert!(text(result).contains(tool["name"].as_str().unwrap_or("?")));
    }
    tools
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

fn profile_socket(c: &Companion, name: &str) -> PathBuf {
    mcp_companion::ipc::paths::profile_socket(&c.socket, name)
}

async fn search_finds_and_call_tool_calls_it(path: CallPath) {
    let c = Companion::start_on(config(true), path);
    c.settled().await;
    let agent = c.client().await;
    assert_eq!(
        tool_names(&agent).await,
        ["search_tools", "call_tool", "mcp_a_add"],
        "only the search tools and the pinned tool are listed"
    );

    let hits = found(
        &call(
            &agent,
            "search_tools",
            json!({ "query": "repeat a message back unchanged" }),
        )
        .await,
    );
    assert!(
        hits[..2].contains(&"mcp_a_echo".to_owned()),
        "a paraphrase finds echo first: {hits:?}"
    );
    let limited = call(
        &agent,
        "search_tools",
        json!({ "query": "numbers", "limit": 1 }),
    )
    .await;
    assert_eq!(found(&limited).len(), 1);

    let args = json!({ "message": "through search" });
    let direct = call(&agent, "mcp_a_echo", args.clone()).await;
    let through = call(
        &agent,
        "call_tool",
        json!({ "name": "mcp_a_echo", "arguments": args }),
    )
    .await;
    assert_eq!(text(&direct), "through search");
    assert_eq!(
        serde_json::to_value(&through).ok(),
        serde_json::to_value(&direct).ok(),
        "call_tool answers exactly as the direct call"
    );
    let added = call(
        &agent,
        "call_tool",
        json!({ "name": "mcp_b_add", "arguments": { "a": 2, "b": 3 } }),
    )
    .await;
    assert_eq!(
        added,
        call(&agent, "mcp_b_add", json!({ "a": 2, "b": 3 })).await
    );

    let unknown = call(&agent, "call_tool", json!({ "name": "no_such_tool" })).await;
    assert_eq!(unknown.is_error, Some(true));
    assert_eq!(text(&unknown), "unknown tool \"no_such_tool\"");
    let _ = agent.cancel().await;

    // The activity log has each call_tool as the call of the tool it named.
    let db = c.home.join(".local/share/mcp-companion/activity.db");
    let calls = || -> Vec<Record> {
        let Ok(conn) = store::open_read_only(&db) else {
            return Vec::new();
        };
        query::read(&conn, &Filter::default(), 0)
            .unwrap_or_default()
            .into_iter()
            .filter(|r| r.kind == "call")
            .collect()
    };
    assert!(
        eventually(Duration::from_secs(30), || calls().len() >= 7).await,
        "{:#?}",
        calls()
    );
    let records = calls();
    let tools: Vec<&str> = records.iter().filter_map(|r| r.tool.as_deref()).collect();
    assert!(!tools.contains(&"call_tool"), "{tools:?}");
    assert_eq!(tools.iter().filter(|t| **t == "search_tools").count(), 2);
    let echoes: Vec<&Record> = records
        .iter()
        .filter(|r| r.tool.as_deref() == Some("mcp_a_echo"))
        .collect();
    assert_eq!(echoes.len(), 2, "{records:#?}");
    for r in &echoes {
        assert_eq!(r.server.as_deref(), Some("a"));
        assert_eq!(r.outcome, echoes[0].outcome);
    }
}

on_both_paths!(search_finds_and_calls, search_finds_and_call_tool_calls_it);

async fn a_profile_searches_and_calls_only_its_own_tools(path: CallPath) {
    let c = Companion::start_on(config(true), path);
    c.settled().await;
    let socket = profile_socket(&c, "alpha");
    assert!(eventually(Duration::from_secs(30), || socket.exists()).await);
    let stream = mcp_companion::ipc::socket::connect(&socket)
        .await
        .expect("alpha socket");
    let alpha = client_config().serve(stream).await.expect("handshake");
    assert_eq!(
        tool_names(&alpha).await,
        ["search_tools", "call_tool", "add"],
        "the profile inherits toolSearch and alwaysList; the pin matches by wrapped name"
    );
    let hits = found(
        &call(
            &alpha,
            "search_tools",
            json!({ "query": "sleep reporting progress, or echo a message", "limit": 20 }),
        )
        .await,
    );
    assert_eq!(hits, ["echo"], "nothing outside the profile is found");

    for name in ["sleep", "mcp_a_sleep", "mcp_b_echo"] {
        let through = call(
            &alpha,
            "call_tool",
            json!({ "name": name, "arguments": { "seconds": 0 } }),
        )
        .await;
        let direct = call(&alpha, name, json!({ "seconds": 0 })).await;
        assert_eq!(through.is_error, Some(true), "{name}");
        assert_eq!(text(&through), format!("unknown tool \"{name}\""));
        assert_eq!(through, direct, "{name}");
    }
    let echoed = call(
        &alpha,
        "call_tool",
        json!({ "name": "echo", "arguments": { "message": "in profile" } }),
    )
    .await;
    assert_eq!(text(&echoed), "in profile");
    let _ = alpha.cancel().await;

    let report = c.status().await;
    assert!(
        report
            .profiles
            .iter()
            .any(|p| p.name == "alpha" && p.tool_search)
    );
    let status = c.cli(&["status"]);
    let said = String::from_utf8_lossy(&status.stdout);
    assert!(said.contains("(tool search)"), "{said}");
}

on_both_paths!(
    a_profile_searches_only,
    a_profile_searches_and_calls_only_its_own_tools
);

/// Counts `notifications/tools/list_changed`.
#[derive(Clone)]
struct Heard(Arc<AtomicUsize>);

impl rmcp::ClientHandler for Heard {
    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn off_nothing_changes_and_turning_it_on_reaches_a_connected_agent() {
    let c = Companion::start(config(false));
    c.settled().await;
    let heard = Arc::new(AtomicUsize::new(0));
    let agent = c.client_with(Heard(heard.clone())).await;
    let names = tool_names(&agent).await;
    assert!(names.contains(&"mcp_a_echo".to_owned()), "{names:?}");
    assert!(names.contains(&"mcp_b_sleep".to_owned()), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n == "search_tools" || n == "call_tool"),
        "{names:?}"
    );
    let refused = call(&agent, "search_tools", json!({ "query": "echo" })).await;
    assert_eq!(text(&refused), "unknown tool \"search_tools\"");

    std::fs::write(&c.config, config(true).to_string()).expect("write");
    let out = c.cli(&["reload"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        eventually(Duration::from_secs(30), || heard.load(Ordering::SeqCst)
            >= 1)
        .await,
        "the agent heard list_changed"
    );
    assert_eq!(
        tool_names(&agent).await,
        ["search_tools", "call_tool", "mcp_a_add"]
    );
    let _ = agent.cancel().await;
}
