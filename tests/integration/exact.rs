//! What the companion passes on exactly as it was sent, on both call paths, against
//! `tests/peers/fidelity_server.py` with a line-level agent: `_meta.progressToken` only where
//! the sender set one.

use serde_json::{Value, json};

use crate::common::{CallPath, on_both_paths};
use crate::fidelity::{agent, call, companion};
use crate::raw::RawAgent;

/// The JSON in the first text block of `answer`'s result.
fn text_json(answer: &Value) -> Value {
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("");
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {answer}"))
}

/// Calls `mcp_f_ask` as request `id`, answering the server's sampling and elicitation requests;
/// returns those two requests as the agent got them and the call's answer.
async fn ask(agent: &mut RawAgent, id: u64) -> (Vec<Value>, Value) {
    agent
        .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "mcp_f_ask", "arguments": {}}}))
        .await;
    let mut asked = Vec::new();
    loop {
        let msg = agent.recv().await;
        match msg["method"].as_str() {
            Some("sampling/createMessage") => {
                agent
                    .send(&json!({"jsonrpc": "2.0", "id": msg["id"], "result": {
                        "role": "assistant", "content": {"type": "text", "text": "ok"},
                        "model": "m", "stopReason": "endTurn"}}))
                    .await;
                asked.push(msg);
            }
            Some("elicitation/create") => {
                agent
                    .send(&json!({"jsonrpc": "2.0", "id": msg["id"], "result": {
                        "action": "accept", "content": {"n": 5}}}))
                    .await;
                asked.push(msg);
            }
            Some(_) => {}
            None if msg["id"] == id => return (asked, msg),
            None => {}
        }
    }
}

/// rmcp puts a `progressToken` on every request it sends: none may reach a server the agent
/// did not give one, nor an agent the server did not give one; the server's own token reaches
/// the agent as the server set it.
async fn progress_tokens_only_where_the_sender_set_one(path: CallPath) {
    let c = companion(path).await;
    let (mut agent, _) = agent(&c).await;

    let (answer, _) = call(&mut agent, 1, "meta", json!({})).await;
    assert_eq!(text_json(&answer), Value::Null, "{path:?}: {answer}");
    let (answer, _) = call(&mut agent, 2, "meta", json!({"_meta": {"k": 1}})).await;
    assert_eq!(text_json(&answer), json!({"k": 1}), "{path:?}: {answer}");

    let (asked, answer) = ask(&mut agent, 3).await;
    assert_eq!(asked.len(), 2, "{path:?}: {asked:?} {answer}");
    let sampling = &asked[0]["params"]["_meta"];
    assert_eq!(sampling, &json!({"srv/key": "v"}), "{path:?}: {asked:?}");
    let elicitation = &asked[1]["params"]["_meta"];
    assert_eq!(
        elicitation,
        &json!({"srv/key": "v", "progressToken": "srv-tok"}),
        "{path:?}: {asked:?}"
    );

    agent
        .send(
            &json!({"jsonrpc": "2.0", "id": 4, "method": "resources/subscribe",
            "params": {"uri": "x://a"}}),
        )
        .await;
    let (answer, _) = agent.until_response(&json!(4)).await;
    assert!(answer.get("result").is_some(), "{path:?}: {answer}");
    let (answer, _) = call(&mut agent, 5, "subscribed", json!({})).await;
    assert_eq!(
        text_json(&answer),
        json!({"uri": "x://a"}),
        "{path:?}: {answer}"
    );
}
on_both_paths!(
    progress_tokens,
    progress_tokens_only_where_the_sender_set_one
);
