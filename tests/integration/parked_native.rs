//! A server that asks for input during `prompts/get` or `resources/read`, in both eras on both
//! sides: the demo server's `ask_name` prompt and `demo://asking/name` resource (`--asking`)
//! ask for a name by `elicitation/create` (the `initialize` era) or by `InputRequiredResult`
//! (`--stateless`, 2026-07-28). Driven by the Python SDK 2.x in both of its modes through
//! `mcp-companion bridge`, and on the raw wire, where a `requestState` is bound to its request
//! kind, prompt, arguments and URI.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::asking::{asked_each, asking_agent};
use crate::common::{Companion, agent_call, peers_dir, python_sdk2};
use crate::raw::RawAgent;

const PROMPT: &str = "demo_ask_name";
const URI: &str = "demo://asking/name";

fn companion(stateless: bool) -> Companion {
    let mut args = vec!["--asking"];
    if stateless {
        args.push("--stateless");
    }
    Companion::start(json!({ "mcpServers": { "demo": crate::common::demo(&args) } }))
}

/// The Python SDK agent in `mode` through the bridge: gets the prompt and reads the resource,
/// answering elicitation with the name Ada.
async fn sdk_agent(c: &Companion, peers: &Path, mode: &str) -> Value {
    let args = [
        "--mode",
        mode,
        "--elicit",
        r#"{"name":"Ada"}"#,
        "--get-prompt",
        PROMPT,
        r#"{"greeting":"Hi"}"#,
        "--read",
        URI,
    ];
    asking_agent(&python_sdk2(peers), c, &args, Duration::from_secs(90)).await
}

/// Asserts the agent was asked twice and both answers carry its name (and `note`).
fn both_answered(run: &Value, note: &str) {
    assert_eq!(run["exit"], json!(0), "{run:#}");
    assert_eq!(
        asked_each(run, "method"),
        ["elicitation/create"; 2],
        "{run:#}"
    );
    let prompt = agent_call(run, &format!("prompt:{PROMPT}"));
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        json!(format!("Hi, Ada!{note}")),
        "{run:#}"
    );
    let read = agent_call(run, &format!("resource:{URI}"));
    assert_eq!(
        read["contents"][0]["text"],
        json!(format!("Hello, Ada!{note}")),
        "{run:#}"
    );
    assert_eq!(read["contents"][0]["uri"], json!(URI), "{run:#}");
}

#[tokio::test]
async fn a_2025_servers_elicitation_during_a_prompt_or_read_reaches_either_eras_agent() {
    let Some(peers) = peers_dir() else { return };
    let c = companion(false);
    c.settled().await;
    // The calling agent is asked, not the companion's headless stand-in (which cancels).
    both_answered(&sdk_agent(&c, &peers, "legacy").await, "");
    // A 2026-07-28 agent gets it in an InputRequiredResult and sends the request again.
    let run = sdk_agent(&c, &peers, "2026-07-28").await;
    assert_eq!(run["protocolVersion"], json!("2026-07-28"), "{run:#}");
    both_answered(&run, "");
}

#[tokio::test]
async fn a_2026_servers_input_required_prompt_or_read_reaches_either_eras_agent() {
    let Some(peers) = peers_dir() else { return };
    let c = companion(true);
    c.settled().await;
    // The companion answers the server's rounds by asking the agent, and keeps its state.
    both_answered(&sdk_agent(&c, &peers, "legacy").await, " (state kept)");
    both_answered(&sdk_agent(&c, &peers, "2026-07-28").await, " (state kept)");
}

/// A 2026-07-28 request `method` (id `id`) with `params` and the modern `_meta`; the response.
async fn request(agent: &mut RawAgent, id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "raw-2026", "version": "0" },
        "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} }
    });
    agent.request(id, method, params).await.0
}

/// The only key of an `InputRequiredResult`'s `inputRequests`, and its `requestState`.
fn asked(response: &Value) -> (String, String) {
    let result = &response["result"];
    assert_eq!(result["resultType"], json!("input_required"), "{response}");
    let requests = result["inputRequests"].as_object().expect("inputRequests");
    let (key, request) = requests.iter().next().expect("one request");
    assert_eq!(request["method"], json!("elicitation/create"), "{response}");
    let state = result["requestState"].as_str().expect("requestState");
    assert!(state.starts_with("mcs1."), "{response}");
    (key.clone(), state.to_owned())
}

fn refused(response: &Value) {
    assert_eq!(response["error"]["code"], json!(-32602), "{response}");
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("another tool, prompt or resource"),
        "{response}"
    );
}

#[tokio::test]
async fn a_parked_prompts_request_state_is_bound_to_its_prompt_arguments_and_kind() {
    let c = companion(false);
    c.settled().await;
    let mut agent = RawAgent::connect_only(&c.socket).await;
    let get = |greeting: &str| json!({ "name": PROMPT, "arguments": { "greeting": greeting } });
    let (key, state) = asked(&request(&mut agent, 1, "prompts/get", get("Hi")).await);
    let answer = |mut params: Value, name: &str| {
        params["inputResponses"] =
            json!({ key.clone(): { "action": "accept", "content": { "name": name } } });
        params["requestState"] = json!(state);
        params
    };
    // Other arguments, another prompt, another kind of request: refused, nothing delivered.
    refused(&request(&mut agent, 2, "prompts/get", answer(get("Yo"), "Eve")).await);
    refused(
        &request(
            &mut agent,
            3,
            "prompts/get",
            answer(
                json!({ "name": "demo_greet", "arguments": { "greeting": "Hi" } }),
                "Eve",
            ),
        )
        .await,
    );
    refused(
        &request(
            &mut agent,
            4,
            "resources/read",
            answer(json!({ "uri": URI }), "Eve"),
        )
        .await,
    );
    refused(
        &request(
            &mut agent,
            5,
            "tools/call",
            answer(
                json!({ "name": PROMPT, "arguments": { "greeting": "Hi" } }),
                "Eve",
            ),
        )
        .await,
    );
    let done = request(&mut agent, 6, "prompts/get", answer(get("Hi"), "Ada")).await;
    assert_eq!(done["result"]["resultType"], json!("complete"), "{done}");
    assert_eq!(
        done["result"]["messages"][0]["content"]["text"],
        json!("Hi, Ada!"),
        "{done}"
    );

    // A read's state names its URI.
    let (key, state) =
        asked(&request(&mut agent, 7, "resources/read", json!({ "uri": URI })).await);
    let done = request(
        &mut agent,
        8,
        "resources/read",
        json!({
            "uri": URI,
            "inputResponses": { key: { "action": "accept", "content": { "name": "Bo" } } },
            "requestState": state,
        }),
    )
    .await;
    assert_eq!(
        done["result"]["contents"][0]["text"],
        json!("Hello, Bo!"),
        "{done}"
    );
}
