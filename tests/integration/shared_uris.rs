//! Proves that rewritten URIs never read alike, with real servers: two servers whose names
//! sanitise alike (`x.y`, `x_y`) get distinct rewritten URIs and each read reaches its own
//! server; a rewritten URI never takes another server's native URI; and the links and embedded
//! resources of a server whose templates are rewritten (server-everything twice) come rewritten
//! in tool results and prompt messages, and read, also on the fast path.

use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams, ResourceContents};
use rmcp::service::RunningService;
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Value, json};

use crate::common::activity::{default_db, wait_for_calls};
use crate::common::{Companion, call, everything_js, peers_dir, python_sdk2};
use crate::raw::RawAgent;

/// The MCP Apps fixture (`tests/peers/app_server.py`): its UI reads `<p>label</p>`.
fn app_server(peers: &std::path::Path, label: &str, ui: Option<&str>) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/app_server.py");
    let mut args = vec![script, "--label", label];
    if let Some(ui) = ui {
        args.extend(["--ui", ui]);
    }
    json!({ "command": python_sdk2(peers), "args": args })
}

/// The text of the first contents of a read of `uri`, and the URI those contents carry.
async fn read<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    uri: &str,
) -> (String, String) {
    let read = client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .unwrap_or_else(|e| panic!("read {uri}: {e}"));
    let first = read
        .contents
        .first()
        .unwrap_or_else(|| panic!("{uri}: no contents"));
    let text = match first {
        ResourceContents::TextResourceContents { text, .. } => text.clone(),
        ResourceContents::BlobResourceContents { blob, .. } => blob.clone(),
        _ => String::new(),
    };
    let json = serde_json::to_value(first).expect("json");
    (text, json["uri"].as_str().unwrap_or_default().to_owned())
}

/// `_meta.ui.resourceUri` of each served tool that names one: wrapped name → URI.
async fn ui_uris<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
) -> Vec<(String, String)> {
    let tools = client.list_all_tools().await.expect("tools/list");
    let mut out: Vec<(String, String)> = tools
        .iter()
        .filter_map(|t| {
            let meta = serde_json::to_value(&t.meta).ok()?;
            Some((
                t.name.to_string(),
                meta["ui"]["resourceUri"].as_str()?.to_owned(),
            ))
        })
        .collect();
    out.sort();
    out
}

async fn listed_uris<H: ClientHandler>(client: &RunningService<RoleClient, H>) -> Vec<String> {
    let listed = client.list_all_resources().await.expect("resources/list");
    listed.iter().map(|r| r.uri.clone()).collect()
}

#[tokio::test]
async fn servers_whose_names_sanitise_alike_get_distinct_uris_and_each_read_reaches_its_own() {
    let Some(peers) = peers_dir() else { return };
    let c = Companion::start(json!({ "wrapResources": false, "mcpServers": {
        "x.y": app_server(&peers, "DOT", None),
        "x_y": app_server(&peers, "UNDERSCORE", None),
    } }));
    c.running().await;
    let client = c.client().await;
    let uris = listed_uris(&client).await;
    assert_eq!(uris.len(), 2, "{uris:?}");
    assert_ne!(uris[0], uris[1], "two servers' UIs read alike");
    let tools = ui_uris(&client).await;
    let [(dot_tool, dot_ui), (underscore_tool, underscore_ui)] = tools.as_slice() else {
        panic!("two tools with a UI: {tools:?}");
    };
    // Both tools sanitise to `mcp_x_y_show`: the tool names carry their own suffixes.
    assert_ne!(dot_tool, underscore_tool);
    assert_ne!(dot_ui, underscore_ui, "{tools:?}");
    for uri in [dot_ui, underscore_ui] {
        assert!(uris.contains(uri), "{uri} is not listed: {uris:?}");
        assert!(uri.starts_with("ui://"), "{uri}");
    }
    // Each tool's UI, and each listed URI, reads its own server's HTML.
    let mut seen = Vec::new();
    for (tool, ui) in [(dot_tool, dot_ui), (underscore_tool, underscore_ui)] {
        let (html, read_uri) = read(&client, ui).await;
        assert_eq!(&read_uri, ui);
        let shown = serde_json::to_value(call(&client, tool, json!({})).await).expect("json");
        assert_eq!(shown["content"][0]["uri"], json!(ui), "{shown}");
        assert_eq!(shown["content"][1]["resource"]["uri"], json!(ui), "{shown}");
        assert_eq!(
            shown["content"][1]["resource"]["text"],
            json!(html),
            "{shown}"
        );
        seen.push(html);
    }
    seen.sort();
    assert_eq!(seen, ["<p>DOT</p>", "<p>UNDERSCORE</p>"]);
}

#[tokio::test]
async fn a_rewritten_uri_never_takes_another_servers_own_uri() {
    let Some(peers) = peers_dir() else { return };
    // ui1 and ui2 share ui://widget/app.html; ui3's own UI is what ui1's would be rewritten to.
    let c = Companion::start(json!({ "wrapResources": false, "mcpServers": {
        "ui1": app_server(&peers, "ONE", None),
        "ui2": app_server(&peers, "TWO", None),
        "ui3": app_server(&peers, "THREE", Some("ui://ui1/widget/app.html")),
    } }));
    c.running().await;
    let client = c.client().await;
    let uris = listed_uris(&client).await;
    let mut distinct = uris.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 3, "{uris:?}");
    // ui3's URI is unique, so it stays as the server wrote it, and reads ui3's.
    assert!(
        uris.contains(&"ui://ui1/widget/app.html".to_owned()),
        "{uris:?}"
    );
    assert_eq!(
        read(&client, "ui://ui1/widget/app.html").await.0,
        "<p>THREE</p>"
    );
    let tools = ui_uris(&client).await;
    let ui_of = |tool: &str| {
        tools
            .iter()
            .find(|(t, _)| t == tool)
            .map(|(_, u)| u.clone())
            .unwrap_or_else(|| panic!("{tool}: {tools:?}"))
    };
    assert_eq!(ui_of("mcp_ui3_show"), "ui://ui1/widget/app.html");
    assert_eq!(ui_of("mcp_ui2_show"), "ui://ui2/widget/app.html");
    let one = ui_of("mcp_ui1_show");
    assert_ne!(one, "ui://ui1/widget/app.html", "ui1's took ui3's URI");
    assert!(uris.contains(&one), "{one} is not listed: {uris:?}");
    assert_eq!(
        read(&client, &one).await,
        ("<p>ONE</p>".to_owned(), one.clone())
    );
    assert_eq!(
        read(&client, "ui://ui2/widget/app.html").await.0,
        "<p>TWO</p>"
    );
}

#[tokio::test]
async fn links_and_embedded_resources_of_a_rewritten_template_are_rewritten_and_read() {
    let Some(peers) = peers_dir() else { return };
    let everything = json!({ "command": "node", "args": [everything_js(&peers), "stdio"] });
    let c = Companion::start(json!({ "wrapResources": false, "mcpServers": {
        "ev1": everything.clone(),
        "ev2": everything,
    } }));
    c.running().await;
    let client = c.client().await;
    let templates = client
        .list_all_resource_templates()
        .await
        .expect("resources/templates/list");
    let listed: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    let ev2_blob = "mcp-companion://ev2/demo://resource/dynamic/blob/{resourceId}";
    assert!(listed.contains(&ev2_blob), "{listed:?}");

    // A link to an expansion of the rewritten template, in a tool result.
    let links = serde_json::to_value(
        call(
            &client,
            "mcp_ev2_get-resource-links",
            json!({ "count": 10 }),
        )
        .await,
    )
    .expect("json");
    let uris: Vec<&str> = links["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter(|c| c["type"] == "resource_link")
        .filter_map(|c| c["uri"].as_str())
        .collect();
    let dynamic = "mcp-companion://ev2/demo://resource/dynamic/blob/1";
    assert!(uris.contains(&dynamic), "{links}");
    assert!(
        uris.iter().all(|u| u.starts_with("mcp-companion://ev2/")),
        "every link of ev2 names a URI two servers share: {links}"
    );
    for uri in uris {
        assert_eq!(read(&client, uri).await.1, uri);
    }

    // An embedded resource in a tool result.
    let reference = serde_json::to_value(
        call(
            &client,
            "mcp_ev1_get-resource-reference",
            json!({ "resourceType": "Text", "resourceId": 4 }),
        )
        .await,
    )
    .expect("json");
    let embedded = reference["content"]
        .as_array()
        .expect("content")
        .iter()
        .find(|c| c["type"] == "resource")
        .unwrap_or_else(|| panic!("no embedded resource: {reference}"));
    let text4 = "mcp-companion://ev1/demo://resource/dynamic/text/4";
    assert_eq!(embedded["resource"]["uri"], json!(text4), "{reference}");
    assert_eq!(read(&client, text4).await.1, text4);

    // An embedded resource in a prompt's messages.
    let args = json!({ "resourceType": "Blob", "resourceId": "3" });
    let prompt = client
        .get_prompt(
            GetPromptRequestParams::new("ev2_resource-prompt")
                .with_arguments(args.as_object().cloned().expect("object")),
        )
        .await
        .expect("prompts/get");
    let messages = serde_json::to_value(&prompt.messages).expect("json");
    let blob3 = "mcp-companion://ev2/demo://resource/dynamic/blob/3";
    assert!(
        messages
            .to_string()
            .contains(&format!("\"uri\":\"{blob3}\"")),
        "{messages}"
    );
    assert_eq!(read(&client, blob3).await.1, blob3);

    // An agent that asks for no progress takes the fast path, also to a server whose URIs
    // are rewritten: results that may name a URI are decoded and rewritten there.
    let mut agent = RawAgent::connect(&c.socket).await;
    let echo = agent
        .call_tool(1, "mcp_ev1_echo", json!({ "message": "hi" }))
        .await;
    assert_eq!(echo["result"]["content"][0]["text"], "Echo: hi", "{echo}");
    let links = agent
        .call_tool(2, "mcp_ev2_get-resource-links", json!({ "count": 3 }))
        .await;
    let uris: Vec<&str> = links["result"]["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter(|c| c["type"] == "resource_link")
        .filter_map(|c| c["uri"].as_str())
        .collect();
    assert!(!uris.is_empty(), "{links}");
    assert!(
        uris.iter().all(|u| u.starts_with("mcp-companion://ev2/")),
        "{links}"
    );
    let db = default_db(&c);
    let recorded = wait_for_calls(&db, 4).await;
    for tool in ["mcp_ev1_echo", "mcp_ev2_get-resource-links"] {
        let entry = recorded
            .iter()
            .find(|r| r.tool.as_deref() == Some(tool) && r.agent.as_deref() == Some("raw-agent"))
            .unwrap_or_else(|| panic!("{tool} not recorded: {recorded:#?}"));
        assert_eq!(entry.path.as_deref(), Some("fast"), "{entry:?}");
    }
}
