//! What an agent is told when it names a URI, template or prompt the way a server wrote it, but
//! two servers share it, so the companion serves each server's copy under another name: a
//! `resources/read` or `resources/subscribe` of a shared URI (or of an expansion of a shared
//! template), a `completion/complete` referring to a shared template, a `prompts/get` or
//! completion of a prompt name two prompts would take: each is refused naming the servers and
//! the names to use instead, and those names work.

use serde_json::{Value, json};

use crate::common::{Companion, demo, everything_js, peers_dir};
use crate::raw::RawAgent;

async fn agent(c: &Companion) -> RawAgent {
    let mut agent = RawAgent::connect_only(&c.socket).await;
    agent.handshake_on("2025-11-25").await;
    agent
}

async fn request(agent: &mut RawAgent, id: u64, method: &str, params: Value) -> Value {
    agent.request(id, method, params).await.0
}

/// `"<a's>" or "<b's>"` of `forms`.
fn either(forms: &[String]) -> String {
    let quoted: Vec<String> = forms.iter().map(|f| format!("\"{f}\"")).collect();
    quoted.join(" or ")
}

#[tokio::test]
async fn a_uri_or_template_two_servers_share_is_refused_naming_the_forms_to_use() {
    let Some(peers) = peers_dir() else { return };
    let everything = json!({ "command": "node", "args": [everything_js(&peers), "stdio"] });
    let c = Companion::start(json!({ "wrapResources": false, "mcpServers": {
        "ev1": everything.clone(),
        "ev2": everything,
    } }));
    c.running().await;
    let mut agent = agent(&c).await;
    let forms = |uri: &str| -> Vec<String> {
        ["ev1", "ev2"]
            .iter()
            .map(|s| format!("mcp-companion://{s}/{uri}"))
            .collect()
    };

    // A URI both list, as they wrote it.
    let listed = request(&mut agent, 1, "resources/list", json!({})).await;
    let resources = listed["result"]["resources"].as_array().cloned();
    let ev1_uri = (resources.unwrap_or_default().iter())
        .filter_map(|r| r["uri"].as_str().map(str::to_owned))
        .find(|u| u.starts_with("mcp-companion://ev1/demo://resource/static/"));
    let ev1_uri = ev1_uri.unwrap_or_else(|| panic!("a rewritten static URI: {listed}"));
    let raw = ev1_uri
        .trim_start_matches("mcp-companion://ev1/")
        .to_owned();
    let read = request(&mut agent, 2, "resources/read", json!({ "uri": raw })).await;
    assert_eq!(read["error"]["code"], json!(-32002), "{read}");
    assert_eq!(
        read["error"]["message"],
        json!(format!(
            "resource \"{raw}\" is served by \"ev1\" and \"ev2\": read it as {}",
            either(&forms(&raw))
        )),
        "{read}"
    );
    // A 2026-07-28 agent is told the same, under that revision's code for a resource not
    // found.
    let mut modern = RawAgent::connect_only(&c.socket).await;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "raw-2026", "version": "0" },
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let params = json!({ "uri": raw, "_meta": meta });
    let modern_read = request(&mut modern, 1, "resources/read", params).await;
    assert_eq!(modern_read["error"]["code"], json!(-32602), "{modern_read}");
    let message = &modern_read["error"]["message"];
    assert_eq!(message, &read["error"]["message"], "{modern_read}");
    for (id, form) in (3..).zip(forms(&raw)) {
        let read = request(&mut agent, id, "resources/read", json!({ "uri": form })).await;
        assert_eq!(read["result"]["contents"][0]["uri"], json!(form), "{read}");
    }
    let subscribe = request(&mut agent, 10, "resources/subscribe", json!({ "uri": raw })).await;
    assert_eq!(subscribe["error"]["code"], json!(-32002), "{subscribe}");
    assert_eq!(
        subscribe["error"]["message"],
        json!(format!(
            "resource \"{raw}\" is served by \"ev1\" and \"ev2\": subscribe to it as {}",
            either(&forms(&raw))
        )),
        "{subscribe}"
    );
    let subscribed = request(
        &mut agent,
        11,
        "resources/subscribe",
        json!({ "uri": ev1_uri }),
    )
    .await;
    assert!(subscribed["result"].is_object(), "{subscribed}");

    // An expansion of a template both list.
    let expansion = "demo://resource/dynamic/text/1";
    let read = request(
        &mut agent,
        20,
        "resources/read",
        json!({ "uri": expansion }),
    )
    .await;
    assert_eq!(
        read["error"]["message"],
        json!(format!(
            "resource \"{expansion}\" is served by \"ev1\" and \"ev2\": read it as {}",
            either(&forms(expansion))
        )),
        "{read}"
    );
    let ev2_expansion = &forms(expansion)[1];
    let read = request(
        &mut agent,
        21,
        "resources/read",
        json!({ "uri": ev2_expansion }),
    )
    .await;
    assert_eq!(
        read["result"]["contents"][0]["uri"],
        json!(ev2_expansion),
        "{read}"
    );

    // A completion that refers to that template as they wrote it.
    let template = "demo://resource/dynamic/text/{resourceId}";
    let complete = |uri: &str| {
        json!({ "ref": { "type": "ref/resource", "uri": uri },
            "argument": { "name": "resourceId", "value": "1" } })
    };
    let refused = request(&mut agent, 30, "completion/complete", complete(template)).await;
    assert_eq!(refused["error"]["code"], json!(-32602), "{refused}");
    assert_eq!(
        refused["error"]["message"],
        json!(format!(
            "resource template \"{template}\" is served by \"ev1\" and \"ev2\": refer to it as {}",
            either(&forms(template))
        )),
        "{refused}"
    );
    let completed = request(
        &mut agent,
        31,
        "completion/complete",
        complete(&forms(template)[0]),
    )
    .await;
    assert!(
        completed["result"]["completion"]["values"].is_array(),
        "{completed}"
    );
}

#[tokio::test]
async fn a_prompt_name_two_prompts_would_take_is_refused_naming_the_names_to_get() {
    // `x.y` and `x_y` both sanitise to `x_y`: their `greet` would both be `x_y_greet`.
    let c = Companion::start(json!({ "mcpServers": { "x.y": demo(&[]), "x_y": demo(&[]) } }));
    c.running().await;
    let mut agent = agent(&c).await;
    let listed = request(&mut agent, 1, "prompts/list", json!({})).await;
    let names: Vec<String> = (listed["result"]["prompts"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|p| p["name"].as_str().map(str::to_owned))
        .filter(|n| n.starts_with("x_y_greet_"))
        .collect();
    assert_eq!(names.len(), 2, "{listed}");
    let args = json!({ "name": "Ann" });
    let get = json!({ "name": "x_y_greet", "arguments": args });
    let refused = request(&mut agent, 2, "prompts/get", get).await;
    assert_eq!(refused["error"]["code"], json!(-32602), "{refused}");
    assert_eq!(
        refused["error"]["message"],
        json!(format!(
            "prompt \"x_y_greet\" is served by \"x.y\" and \"x_y\": get it as {}",
            either(&names)
        )),
        "{refused}"
    );
    for (id, name) in (3..).zip(&names) {
        let got = request(
            &mut agent,
            id,
            "prompts/get",
            json!({ "name": name, "arguments": args }),
        )
        .await;
        assert!(got["result"]["messages"].is_array(), "{got}");
    }
    let complete = json!({ "ref": { "type": "ref/prompt", "name": "x_y_greet" },
        "argument": { "name": "style", "value": "f" } });
    let refused = request(&mut agent, 10, "completion/complete", complete).await;
    assert_eq!(
        refused["error"]["message"],
        json!(format!(
            "prompt \"x_y_greet\" is served by \"x.y\" and \"x_y\": refer to it as {}",
            either(&names)
        )),
        "{refused}"
    );
}
