//! Both MCP protocol eras through the companion: a 2026-07-28 agent (no `initialize`, the
//! modern `_meta` on every request) on the raw wire, and the Python SDK 2.x in auto mode.

use serde_json::{Value, json};

use crate::common::{Companion, auto_approved, demo};
use crate::raw::RawAgent;

/// The `_meta` a 2026-07-28 request carries, asking for `version`.
fn modern_meta(version: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": { "name": "raw-2026", "version": "0" },
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

async fn request(agent: &mut RawAgent, id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = modern_meta("2026-07-28");
    agent.request(id, method, params).await.0
}

#[tokio::test]
async fn a_2026_agent_lists_and_calls_without_initialize() {
    let c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    c.settled().await;
    let mut agent = RawAgent::connect_only(&c.socket).await;

    let discover = request(&mut agent, 1, "server/discover", json!({})).await;
    assert!(
        discover["result"]["supportedVersions"]
            .as_array()
            .is_some_and(|v| v.contains(&json!("2026-07-28"))),
        "{discover}"
    );

    let list = request(&mut agent, 2, "tools/list", json!({})).await;
    assert_eq!(list["result"]["resultType"], json!("complete"), "{list}");
    assert!(list["result"]["ttlMs"].is_u64(), "cache hints: {list}");
    let tools = list["result"]["tools"].as_array().expect("tools");
    assert!(tools.iter().any(|t| t["name"] == "mcp_demo_echo"), "{list}");

    // Twice: the first call and the next (the fast path takes calls once a session is
    // set up; a 2026-07-28 call must still get rmcp's answer, with `resultType`).
    for id in [3, 4] {
        let call = request(
            &mut agent,
            id,
            "tools/call",
            json!({ "name": "mcp_demo_echo", "arguments": { "message": "modern" } }),
        )
        .await;
        assert_eq!(
            call["result"]["content"][0]["text"],
            json!("modern"),
            "{call}"
        );
        assert_eq!(call["result"]["resultType"], json!("complete"), "{call}");
    }

    // Once the session is of the 2026-07-28 era, a request without the envelope is refused.
    agent
        .send(&json!({ "jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": { "name": "mcp_demo_echo", "arguments": { "message": "bare" } } }))
        .await;
    let bare = agent.until_response(&json!(5)).await.0;
    assert_eq!(bare["error"]["code"], json!(-32602), "{bare}");

    // A version the endpoint does not serve: -32022 naming the ones it does.
    let mut params = json!({});
    params["_meta"] = modern_meta("2099-01-01");
    agent
        .send(&json!({ "jsonrpc": "2.0", "id": 6, "method": "tools/list", "params": params }))
        .await;
    let future = agent.until_response(&json!(6)).await.0;
    assert_eq!(future["error"]["code"], json!(-32022), "{future}");

    // `ping` belongs to the `initialize` era.
    let ping = request(&mut agent, 7, "ping", json!({})).await;
    assert_eq!(ping["error"]["code"], json!(-32601), "{ping}");
}

#[tokio::test]
async fn a_2026_agent_hears_tool_changes_on_its_subscription() {
    let c = Companion::start(json!({ "mcpServers": { "demo": auto_approved(demo(&[])) } }));
    c.settled().await;
    let mut agent = RawAgent::connect_only(&c.socket).await;
    let mut params = json!({ "notifications": { "toolsListChanged": true } });
    params["_meta"] = modern_meta("2026-07-28");
    agent
        .send(&json!({ "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": params }))
        .await;
    let ack = loop {
        let message = agent.recv().await;
        if message["method"] == "notifications/subscriptions/acknowledged" {
            break message;
        }
    };
    assert_eq!(
        ack["params"]["notifications"]["toolsListChanged"],
        json!(true),
        "{ack}"
    );
    let toggled = request(
        &mut agent,
        2,
        "tools/call",
        json!({ "name": "mcp_demo_toggle_extra", "arguments": {} }),
    )
    .await;
    assert_eq!(
        toggled["result"]["content"][0]["text"],
        json!("extra added"),
        "{toggled}"
    );
    let changed = loop {
        let message = agent.recv().await;
        if message["method"] == "notifications/tools/list_changed" {
            break message;
        }
    };
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        json!(1),
        "{changed}"
    );
}

/// Runs the scripted SDK agent (`tests/peers/agent.py`) with `python` against `bridge` on
/// `c`'s socket, off the async runtime.
async fn sdk_agent(python: &std::path::Path, args: &[&str], c: &Companion) -> Value {
    let python = python.to_owned();
    let home = c.home.clone();
    let mut args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    args.extend([
        "--".into(),
        crate::common::BIN.into(),
        "bridge".into(),
        "--socket".into(),
        c.socket.display().to_string(),
    ]);
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        crate::common::run_agent(&python, &args, &home, std::time::Duration::from_secs(60))
    })
    .await
    .expect("join agent")
}

#[tokio::test]
async fn a_2026_only_server_serves_agents_of_both_eras() {
    let c = Companion::start(json!({ "mcpServers": {
        "modern": demo(&["--stateless"]),
        "classic": demo(&[]),
    } }));
    c.settled().await;
    // Each server in its own era, shown in status.
    let modern = c.server("modern").await;
    assert_eq!(modern.state.as_str(), "running", "{modern:?}");
    assert_eq!(modern.protocol.as_deref(), Some("2026-07-28"), "{modern:?}");
    let classic = c.server("classic").await;
    assert_eq!(
        classic.protocol.as_deref(),
        Some("2025-11-25"),
        "{classic:?}"
    );

    // A 2025-era agent (initialize, no `_meta`) uses the 2026-07-28-only server.
    let mut agent = RawAgent::connect(&c.socket).await;
    for (id, tool) in [(1, "mcp_modern_echo"), (2, "mcp_classic_echo")] {
        agent
            .send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": { "name": tool, "arguments": { "message": "old agent" } } }))
            .await;
        let call = agent.until_response(&json!(id)).await.0;
        assert_eq!(
            call["result"]["content"][0]["text"],
            json!("old agent"),
            "{tool}: {call}"
        );
        assert!(call["result"].get("resultType").is_none(), "{tool}: {call}");
    }
    // And a 2026-07-28 agent uses both.
    let mut modern_agent = RawAgent::connect_only(&c.socket).await;
    for (id, tool) in [(1, "mcp_modern_echo"), (2, "mcp_classic_echo")] {
        let call = request(
            &mut modern_agent,
            id,
            "tools/call",
            json!({ "name": tool, "arguments": { "message": "new agent" } }),
        )
        .await;
        assert_eq!(
            call["result"]["content"][0]["text"],
            json!("new agent"),
            "{tool}: {call}"
        );
        assert_eq!(
            call["result"]["resultType"],
            json!("complete"),
            "{tool}: {call}"
        );
    }

    let Some(peers) = crate::common::peers_dir() else {
        return;
    };
    // The Python SDK 1.30 (initialize only) through `bridge`.
    let v1 = sdk_agent(
        &crate::common::python_sdk1(&peers),
        &[
            "--list",
            "--call",
            "mcp_modern_echo",
            r#"{"message":"sdk1"}"#,
        ],
        &c,
    )
    .await;
    assert_eq!(v1["exit"], json!(0), "{v1:#}");
    let echo = crate::common::agent_call(&v1, "mcp_modern_echo");
    assert_eq!(echo["content"][0]["text"], json!("sdk1"), "{v1:#}");
    // The Python SDK 2.x probing server/discover: it gets 2026-07-28 and uses the 2025-era server.
    let auto = sdk_agent(
        &crate::common::python_sdk2(&peers),
        &[
            "--mode",
            "auto",
            "--call",
            "mcp_classic_echo",
            r#"{"message":"sdk2"}"#,
        ],
        &c,
    )
    .await;
    assert_eq!(auto["exit"], json!(0), "{auto:#}");
    assert_eq!(auto["negotiated_via"], json!("server/discover"), "{auto:#}");
    assert_eq!(auto["protocolVersion"], json!("2026-07-28"), "{auto:#}");
    let echo = crate::common::agent_call(&auto, "mcp_classic_echo");
    assert_eq!(echo["content"][0]["text"], json!("sdk2"), "{auto:#}");
}

#[tokio::test]
async fn a_server_answering_initialize_with_an_unknown_version_is_refused() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/eras/future_server.py"
    );
    let c = Companion::start(json!({ "mcpServers": {
        "future": { "command": "python3", "args": [script] },
    } }));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        let s = c.server("future").await;
        if s.last_error.is_some() {
            break s;
        }
        assert!(std::time::Instant::now() < deadline, "no error: {s:?}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_ne!(status.state.as_str(), "running", "{status:?}");
    let error = status.last_error.unwrap_or_default();
    assert!(
        error.contains("\"2099-01-01\"") && error.contains("does not know"),
        "{error}"
    );
    assert_eq!(status.tools, 0);
}

/// `initialize` (2025-06-18) declaring `capabilities`, then `notifications/initialized`.
async fn initialize_with(agent: &mut RawAgent, capabilities: Value) {
    agent
        .send(
            &json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": capabilities,
            "clientInfo": { "name": "raw-2025", "version": "0" } } }),
        )
        .await;
    let init = agent.until_response(&json!(0)).await.0;
    assert!(init["result"]["serverInfo"].is_object(), "{init}");
    agent
        .send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
        .await;
}

#[tokio::test]
async fn a_2026_servers_request_for_input_reaches_a_2025_agent_as_elicitation() {
    let c = Companion::start(json!({ "mcpServers": { "modern": demo(&["--stateless"]) } }));
    c.settled().await;

    // An agent that declared elicitation is asked, and its answer goes back with the state.
    let mut asked = RawAgent::connect_only(&c.socket).await;
    initialize_with(&mut asked, json!({ "elicitation": {} })).await;
    asked
        .send(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": { "name": "mcp_modern_confirm", "arguments": {} } }))
        .await;
    let request = loop {
        let message = asked.recv().await;
        if message["method"] == "elicitation/create" {
            break message;
        }
    };
    assert_eq!(
        request["params"]["message"],
        json!("Go ahead?"),
        "{request}"
    );
    asked
        .send(&json!({ "jsonrpc": "2.0", "id": request["id"],
            "result": { "action": "accept", "content": { "ok": true } } }))
        .await;
    let call = asked.until_response(&json!(1)).await.0;
    assert_eq!(
        call["result"]["content"][0]["text"],
        json!("confirm: accept (state kept)"),
        "{call}"
    );

    // One that did not declare it is not asked: the server hears `cancel`.
    let mut plain = RawAgent::connect(&c.socket).await;
    plain
        .send(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": { "name": "mcp_modern_confirm", "arguments": {} } }))
        .await;
    let (call, before) = plain.until_response(&json!(1)).await;
    assert!(
        before.iter().all(|m| m["method"] != "elicitation/create"),
        "{before:?}"
    );
    assert_eq!(
        call["result"]["content"][0]["text"],
        json!("confirm: cancel (state kept)"),
        "{call}"
    );
}

/// A 2026-07-28 agent never sends `initialize`: the name it gives in each request's `_meta`
/// is what `agents` and the activity log call it.
#[tokio::test]
async fn a_2026_agent_is_named_by_its_meta_in_agents_and_the_activity_log() {
    let c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    c.settled().await;
    let mut agent = RawAgent::connect_only(&c.socket).await;
    let called = request(
        &mut agent,
        1,
        "tools/call",
        json!({ "name": "mcp_demo_echo", "arguments": { "message": "hi" } }),
    )
    .await;
    assert_eq!(called["result"]["isError"], json!(false), "{called}");

    let out = c.cli(&["agents", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).expect("agents json");
    let named: Vec<&Value> = report["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .filter(|a| a["client"] == json!("raw-2026"))
        .collect();
    assert_eq!(named.len(), 1, "{report:#}");
    assert_eq!(
        named[0]["protocolVersion"],
        json!("2026-07-28"),
        "{report:#}"
    );

    let logged = crate::common::eventually(std::time::Duration::from_secs(30), || {
        let out = c.cli(&["activity", "--json", "--agent", "raw-2026"]);
        String::from_utf8_lossy(&out.stdout).contains("mcp_demo_echo")
    })
    .await;
    assert!(
        logged,
        "the call is in the activity log under the agent's name"
    );
}

/// The Tasks extension's methods while no served tool takes tasks (so the extension is not
/// declared), and the 2025-era task methods the extension does not have: each a -32601 that
/// says why, never the bare method name; so does `ping`, which the revision removed.
#[tokio::test]
async fn a_2026_agent_asking_for_tasks_that_are_not_offered_is_told_why() {
    let c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    c.settled().await;
    let mut agent = RawAgent::connect_only(&c.socket).await;
    for (id, method) in [(1, "tasks/get"), (2, "tasks/cancel"), (3, "tasks/update")] {
        let params = json!({ "taskId": "demo:1", "inputResponses": {} });
        let answer = request(&mut agent, id, method, params).await;
        assert_eq!(answer["error"]["code"], json!(-32601), "{answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!("\"{method}\" is not offered now"))
                && message.contains("io.modelcontextprotocol/tasks"),
            "{answer}"
        );
        assert_eq!(answer["error"]["data"]["method"], json!(method), "{answer}");
    }
    let ping = request(&mut agent, 6, "ping", json!({})).await;
    assert_eq!(
        ping["error"]["message"],
        json!("method \"ping\" is not part of the 2026-07-28 protocol revision, which removed it"),
        "{ping}"
    );
    for (id, method) in [(4, "tasks/list"), (5, "tasks/result")] {
        let answer = request(&mut agent, id, method, json!({ "taskId": "demo:1" })).await;
        assert_eq!(answer["error"]["code"], json!(-32601), "{answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("not part of the 2026-07-28 Tasks extension"),
            "{answer}"
        );
    }
}
