//! Proves the naming and allowlist rules end to end: sanitised names, the 64-character limit
//! (stable across restarts), collision suffixes that still route to the right server, and
//! `enabledTools` filtering with its single warning.

use serde_json::json;

use crate::common::{Companion, call, demo, text, tool_names};

#[tokio::test]
async fn long_server_names_give_64_char_tool_names_stable_across_restarts() {
    let long = "a-very-long-server-name-that-goes-on-and-on-and-on-and-on";
    let config = json!({ "mcpServers": { long: demo(&[]) } });
    let first = {
        let c = Companion::start(config.clone());
        c.settled().await;
        tool_names(&c.client().await).await
    };
    let c = Companion::start(config);
    c.settled().await;
    let client = c.client().await;
    let second = tool_names(&client).await;
    assert_eq!(first, second, "names are stable across restarts");
    assert!(first.iter().all(|n| n.len() <= 64), "{first:?}");
    let shortened: Vec<_> = first.iter().filter(|n| n.len() == 64).collect();
    assert!(!shortened.is_empty(), "{first:?}");
    // Shortened names still route by stored ownership, not by prefix.
    let echo = client
        .list_all_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .find(|t| t.description.as_deref() == Some("Return the message unchanged"))
        .expect("echo tool")
        .name
        .into_owned();
    assert_eq!(echo.len(), 64, "{echo}");
    assert_eq!(
        text(&call(&client, &echo, json!({ "message": "routed" })).await),
        "routed"
    );
}

#[tokio::test]
async fn colliding_names_are_both_listed_and_each_reaches_its_own_server() {
    // "x.y" and "x y" both sanitise to "x_y": every tool of the two servers collides.
    let c = Companion::start(json!({ "mcpServers": { "x.y": demo(&[]), "x y": demo(&[]) } }));
    let servers = c.settled().await;
    let client = c.client().await;
    let names = tool_names(&client).await;
    let pids: Vec<_> = names
        .iter()
        .filter(|n| n.starts_with("mcp_x_y_pid_"))
        .cloned()
        .collect();
    assert_eq!(
        pids.len(),
        2,
        "both pid tools listed with suffixes: {names:?}"
    );
    assert_ne!(pids[0], pids[1]);
    let mut answered = Vec::new();
    for name in &pids {
        answered.push(
            text(&call(&client, name, json!({})).await)
                .parse::<u32>()
                .expect("pid"),
        );
    }
    let mut expected: Vec<u32> = servers.iter().filter_map(|s| s.pid).collect();
    answered.sort_unstable();
    expected.sort_unstable();
    assert_eq!(
        answered, expected,
        "each suffixed name routes to its own server"
    );
    assert!(c.log().contains("x_y"), "collision warned about");
}

#[tokio::test]
async fn enabled_tools_filters_tools_resources_and_prompts() {
    let entry = |list: serde_json::Value| {
        let mut e = demo(&[]);
        e["enabledTools"] = list;
        e
    };
    let c = Companion::start(json!({ "mcpServers": {
        "none": entry(json!([])),
        "one": entry(json!(["echo"])),
        "wrapped": entry(json!(["mcp_wrapped_add", "mcp_wrapped_resource_hello"])),
        "typo": entry(json!(["ehco"])),
        "all": entry(json!(["*"])),
    } }));
    let servers = c.settled().await;
    assert!(
        servers.iter().all(|s| s.state.as_str() == "running"),
        "connections still open: {servers:?}"
    );
    let names = tool_names(&c.client().await).await;
    let of = |server: &str| -> Vec<String> {
        let prefix = format!("mcp_{server}_");
        names
            .iter()
            .filter(|n| n.starts_with(&prefix))
            .cloned()
            .collect()
    };
    assert!(of("none").is_empty(), "{:?}", of("none"));
    assert_eq!(of("one"), vec!["mcp_one_echo"]);
    assert_eq!(
        of("wrapped"),
        vec!["mcp_wrapped_add", "mcp_wrapped_resource_hello"]
    );
    assert!(of("typo").is_empty());
    assert!(of("all").contains(&"mcp_all_prompt_greet".to_owned()));
    let log = c.log();
    let warnings: Vec<_> = log
        .lines()
        .filter(|l| l.contains("enabledTools entries not found: ehco"))
        .collect();
    assert!(!warnings.is_empty(), "warning logged:\n{log}");
    assert!(
        warnings[0].contains("mcp_typo_echo"),
        "lists available names: {}",
        warnings[0]
    );
}
