//! Proves that the official Python MCP SDK, as a real agent would use it, works through
//! `mcp-companion bridge` spawned with a minimal environment (only PATH and HOME, the SDK's
//! default env): the bridge finds `serve`'s socket by the default path rules alone. Covered: SDK
//! 2.x in legacy mode (initialize), SDK 2.x in auto mode (probes `server/discover` and speaks
//! 2026-07-28 with the companion, which speaks `initialize` with the demo server), SDK 1.30
//! (request ids from 0); each lists tools, echoes text unchanged, gets an image block and an `isError` result; an
//! SDK 2.x agent hears `notifications/tools/list_changed`; and the third-party servers' tools
//! work through the same path.
//!
//! The default socket path is per user, so every scenario here runs sequentially in ONE test.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{
    BIN, Companion, agent_call, demo, everything_js, peers_dir, python_sdk1, python_sdk2,
    run_agent, time_server,
};

const AGENT_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs agent.py with `python` against `<BIN> bridge` (no `--socket`), off the async runtime.
async fn agent(python: &Path, args: &[&str], home: &Path) -> Value {
    let (python, home) = (python.to_owned(), home.to_owned());
    let mut args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    args.extend(["--".into(), BIN.into(), "bridge".into()]);
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_agent(&python, &args, &home, AGENT_TIMEOUT)
    })
    .await
    .expect("join agent")
}

fn tools(run: &Value) -> Vec<&str> {
    run["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tool list: {run:#}"))
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

/// The three demo calls every agent makes, as agent.py arguments.
const DEMO_CALLS: [&str; 10] = [
    "--list",
    "--call",
    "mcp_demo_echo",
    r#"{"message":"hi"}"#,
    "--call",
    "mcp_demo_image",
    "{}",
    "--call",
    "mcp_demo_fail",
    r#"{"message":"boom"}"#,
];

/// Asserts what every SDK generation must see from the demo server through the bridge.
fn assert_demo_session(label: &str, run: &Value) {
    assert_eq!(run["exit"], json!(0), "{label}: {run:#}");
    assert!(run.get("error").is_none(), "{label}: {run:#}");
    let names = tools(run);
    assert!(names.contains(&"mcp_demo_echo"), "{label}: {names:?}");

    let echo = agent_call(run, "mcp_demo_echo");
    assert_eq!(
        echo["content"],
        json!([{ "type": "text", "text": "hi" }]),
        "{label}: {echo:#}"
    );
    assert_ne!(echo["isError"], json!(true), "{label}: {echo:#}");

    let image = agent_call(run, "mcp_demo_image");
    let block = image["content"]
        .as_array()
        .and_then(|c| c.iter().find(|b| b["type"] == "image"))
        .unwrap_or_else(|| panic!("{label}: an image block in {image:#}"));
    assert_eq!(block["mimeType"], json!("image/png"), "{label}: {block:#}");
    assert!(
        block["data"]
            .as_str()
            .is_some_and(|d| d.starts_with("iVBORw0KGgo")),
        "{label}: {block:#}"
    );

    let fail = agent_call(run, "mcp_demo_fail");
    assert_eq!(fail["isError"], json!(true), "{label}: {fail:#}");
    assert_eq!(
        fail["content"][0]["text"],
        json!("boom"),
        "{label}: {fail:#}"
    );
}

#[tokio::test]
async fn python_sdk_agents_work_through_bridge_with_a_minimal_environment() {
    let Some(peers) = peers_dir() else { return };
    let (sdk2, sdk1) = (python_sdk2(&peers), python_sdk1(&peers));

    // Part 1: our demo server only (fast), every SDK generation and mode.
    let mut c = Companion::start_with(
        json!({ "mcpServers": { "demo": crate::common::auto_approved(demo(&[])) } }),
        false,
    );
    c.settled().await;

    let legacy = agent(
        &sdk2,
        &[&["--mode", "legacy"][..], &DEMO_CALLS].concat(),
        &c.home,
    )
    .await;
    assert!(
        legacy["sdk"].as_str().is_some_and(|v| v.starts_with("2.")),
        "{legacy:#}"
    );
    assert_demo_session("SDK 2.x legacy", &legacy);
    assert_eq!(legacy["negotiated_via"], json!("initialize"));

    let auto = agent(
        &sdk2,
        &[&["--mode", "auto"][..], &DEMO_CALLS].concat(),
        &c.home,
    )
    .await;
    assert_demo_session("SDK 2.x auto", &auto);
    assert_eq!(
        auto["negotiated_via"],
        json!("server/discover"),
        "the companion answers server/discover, so the client speaks 2026-07-28: {auto:#}"
    );
    assert_eq!(auto["protocolVersion"], json!("2026-07-28"), "{auto:#}");

    let v1 = agent(&sdk1, &DEMO_CALLS, &c.home).await;
    assert!(
        v1["sdk"].as_str().is_some_and(|v| v.starts_with("1.")),
        "{v1:#}"
    );
    assert_demo_session("SDK 1.30 (ids from 0)", &v1);

    let toggled = agent(
        &sdk2,
        &["--toggle-and-wait", "mcp_demo_toggle_extra", "10"],
        &c.home,
    )
    .await;
    assert_eq!(toggled["exit"], json!(0), "{toggled:#}");
    assert_eq!(
        toggled["toggle_result"]["content"][0]["text"],
        json!("extra added"),
        "{toggled:#}"
    );
    assert!(
        toggled["list_changed_count"].as_u64().unwrap_or(0) >= 1,
        "the agent hears tools/list_changed: {toggled:#}"
    );
    let status = c.terminate(Duration::from_secs(30));
    assert!(status.success(), "{status:?}\n{}", c.log());

    // Part 2: the third-party servers through the same default-socket path.
    let mut c = Companion::start_with(
        json!({ "mcpServers": {
            "everything": { "command": "node", "args": [everything_js(&peers), "stdio"] },
            "time": { "command": time_server(&peers), "args": ["--local-timezone", "UTC"] },
        } }),
        false,
    );
    c.settled().await;
    let calls = [
        "--list",
        "--call",
        "mcp_everything_echo",
        r#"{"message":"hi"}"#,
        "--call",
        "mcp_time_get_current_time",
        r#"{"timezone":"UTC"}"#,
    ];
    for (label, python, mode) in [
        ("SDK 2.x auto", &sdk2, "auto"),
        ("SDK 1.30", &sdk1, "legacy"),
    ] {
        let run = agent(python, &[&["--mode", mode][..], &calls].concat(), &c.home).await;
        assert_eq!(run["exit"], json!(0), "{label}: {run:#}");
        let names = tools(&run);
        for expected in [
            "mcp_everything_echo",
            "mcp_everything_get-tiny-image",
            "mcp_time_get_current_time",
        ] {
            assert!(
                names.contains(&expected),
                "{label}: {expected} in {names:?}"
            );
        }
        assert_eq!(
            agent_call(&run, "mcp_everything_echo")["content"],
            json!([{ "type": "text", "text": "Echo: hi" }]),
            "{label}: {run:#}"
        );
        let now = agent_call(&run, "mcp_time_get_current_time");
        assert_ne!(now["isError"], json!(true), "{label}: {now:#}");
        assert_eq!(
            now["structuredContent"]["timezone"],
            json!("UTC"),
            "{label}: {now:#}"
        );
    }
    let status = c.terminate(Duration::from_secs(30));
    assert!(status.success(), "{status:?}\n{}", c.log());
}
