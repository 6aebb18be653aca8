//! What passes through the companion unchanged that a typed relay would lose: JSON-RPC errors
//! the agent must act on, `_meta`, numbers, unknown content, server instructions, and secrets
//! masked in error results and log messages. Each scenario runs on both call paths against
//! `tests/peers/fidelity_server.py`, with a line-level agent.

use serde_json::json;

use crate::common::fidelity::{agent, ask, call, companion, text_json};
use crate::common::{CallPath, on_both_paths};

/// -32042 (URL Elicitation Required) reaches the agent as that JSON-RPC error with its
/// `data.elicitations`, not as an `isError` text: the agent must open the URL.
async fn url_elicitation_required_passes_as_a_json_rpc_error(path: CallPath) {
    let c = companion(path).await;
    let (mut agent, _) = agent(&c).await;
    let (answer, _) = call(&mut agent, 1, "urlerror", json!({})).await;
    assert!(answer.get("result").is_none(), "{path:?}: {answer}");
    assert_eq!(answer["error"]["code"], -32042, "{path:?}: {answer}");
    let elicitation = &answer["error"]["data"]["elicitations"][0];
    assert_eq!(elicitation["mode"], "url", "{answer}");
    assert_eq!(elicitation["elicitationId"], "e-1", "{answer}");
    assert_eq!(
        elicitation["url"], "https://auth.example/authorize?state=abc",
        "{answer}"
    );
}
on_both_paths!(
    url_elicitation_required,
    url_elicitation_required_passes_as_a_json_rpc_error
);

/// The agent's `_meta` keys other than `progressToken` reach the server, with and without a
/// progress token (the two take different paths through the companion).
async fn request_meta_reaches_the_server(path: CallPath) {
    let c = companion(path).await;
    let (mut agent, _) = agent(&c).await;
    let meta = json!({"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "vendor.example/trace": {"a": 1}});
    let (answer, _) = call(&mut agent, 1, "meta", json!({"_meta": meta})).await;
    let got = text_json(&answer);
    assert_eq!(
        got["traceparent"], meta["traceparent"],
        "{path:?}: {answer}"
    );
    assert_eq!(
        got["vendor.example/trace"], meta["vendor.example/trace"],
        "{path:?}: {answer}"
    );

    let with_progress = json!({"progressToken": "tok-A", "vendor.example/trace": "abc"});
    let (answer, _) = call(&mut agent, 2, "meta", json!({"_meta": with_progress})).await;
    let got = text_json(&answer);
    assert_eq!(got["vendor.example/trace"], "abc", "{path:?}: {answer}");
}
on_both_paths!(request_meta, request_meta_reaches_the_server);

/// A server's sampling and elicitation requests reach the agent with the server's `_meta`,
/// and the agent's answers reach the server.
async fn server_requests_keep_their_meta(path: CallPath) {
    let c = companion(path).await;
    let (mut agent, _) = agent(&c).await;
    let (asked, _, answer) = ask(&mut agent, 1).await;
    assert_eq!(asked.len(), 2, "{path:?}: {asked:?}");
    for request in &asked {
        assert_eq!(
            request["params"]["_meta"]["srv/key"], "v",
            "{path:?}: {request}"
        );
    }
    let got = text_json(&answer);
    assert_eq!(got["elicitation"]["result"]["content"]["n"], 5, "{got}");
}
on_both_paths!(server_request_meta, server_requests_keep_their_meta);

/// The agent's `instructions` carry each running server's own, labelled with its name.
#[tokio::test]
async fn server_instructions_reach_the_agent() {
    let c = companion(CallPath::Fast).await;
    let (_agent, init) = agent(&c).await;
    let instructions = init["result"]["instructions"].as_str().unwrap_or("");
    assert!(instructions.starts_with("MCP Companion"), "{instructions}");
    assert!(
        instructions
            .contains("Server \"f\":\nFidelity server: call urlerror to see a URL elicitation."),
        "{instructions}"
    );
}

/// A content block of a type this build does not know and a top-level key it does not know
/// reach the agent as the server sent them (forward compatibility).
async fn unknown_content_and_keys_pass_through(path: CallPath) {
    let c = companion(path).await;
    let (mut agent, _) = agent(&c).await;
    let (answer, _) = call(&mut agent, 1, "future", json!({})).await;
    let result = &answer["result"];
    assert_ne!(result["isError"], true, "{answer}");
    assert_eq!(result["content"][0]["type"], "future_kind", "{answer}");
    assert_eq!(result["content"][0]["payload"]["x"], 1, "{answer}");
    assert_eq!(result["content"][1]["text"], "known", "{answer}");
    assert_eq!(result["extraTopLevel"]["kept"], true, "{answer}");
}
on_both_paths!(unknown_content, unknown_content_and_keys_pass_through);

/// A secret of the server's entry that the server quotes in an `isError` result or a log
/// message reaches the agent masked.
async fn secrets_are_masked_in_error_results_and_log_messages(path: CallPath) {
    const SECRET: &str = "sekrit-fidelity-TOKEN-999";
    let c = companion(path).await;
    let (mut agent, _) = agent(&c).await;
    let (answer, mut seen) = call(&mut agent, 1, "secret", json!({})).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("");
    assert_eq!(text, "bad token <redacted>", "{path:?}: {answer}");
    // The log message may arrive after the result: wait for it, within a deadline.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    while !seen.iter().any(|m| m["method"] == "notifications/message") {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match agent.recv_within(left).await {
            Some(msg) => seen.push(msg),
            None => panic!("{path:?}: no log message within 20 s: {seen:?}"),
        }
    }
    for msg in &seen {
        assert!(!msg.to_string().contains(SECRET), "{path:?}: {msg}");
    }
    let log = seen.iter().find(|m| m["method"] == "notifications/message");
    assert_eq!(
        log.map(|m| m["params"]["data"].clone()),
        Some(json!("log token <redacted>")),
        "{path:?}: {seen:?}"
    );
}
on_both_paths!(
    masked_secrets,
    secrets_are_masked_in_error_results_and_log_messages
);
