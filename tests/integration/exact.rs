//! What the companion passes on exactly as it was sent, on both call paths, against
//! `tests/peers/fidelity_server.py` with a line-level agent: `_meta.progressToken` only where
//! the sender set one; the number text of a server's requests and tool results, and of an
//! agent's tool arguments, and of a server's progress.

use serde_json::{Value, json};

use crate::common::fidelity::{agent, ask, call, companion, text_json};
use crate::common::{CallPath, on_both_paths};

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

    let (asked, _, answer) = ask(&mut agent, 3).await;
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

/// The numbers of a server's sampling and elicitation requests reach the agent as the server
/// wrote them: no 32-bit float, no integer bound turned into a float.
async fn request_numbers_pass_as_the_server_wrote_them(path: CallPath) {
    let c = companion(path).await;
    let (mut agent, _) = agent(&c).await;

    let (_, lines, answer) = ask(&mut agent, 1).await;
    assert_eq!(lines.len(), 2, "{path:?}: {lines:?} {answer}");
    assert!(
        lines[0].contains(r#""temperature": 0.7"#),
        "{path:?}: {}",
        lines[0]
    );
    assert!(
        lines[0].contains(r#""costPriority": 0.3"#),
        "{path:?}: {}",
        lines[0]
    );
    assert!(
        lines[1].contains(r#""maximum": 1000}"#),
        "{path:?}: {}",
        lines[1]
    );
}
on_both_paths!(
    request_numbers,
    request_numbers_pass_as_the_server_wrote_them
);

/// The numbers and the members no revision has of a server's tool result reach the agent as the
/// server wrote them: no integer beyond 64 bits turned into a float.
async fn result_numbers_pass_as_the_server_wrote_them(path: CallPath) {
    let c = companion(path).await;
    let (mut agent, _) = agent(&c).await;
    agent
        .send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "mcp_f_nums", "arguments": {}}}))
        .await;
    let line = loop {
        let line = agent.recv_line().await;
        let msg: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        if msg["id"] == 2 && msg.get("method").is_none() {
            break line;
        }
    };
    for number in [
        r#""big": 123456789012345678901234567890"#,
        r#""f": 0.1"#,
        r#""one": 1.0"#,
        r#""neg0": -0.0"#,
        r#""e": 1e-07"#,
    ] {
        assert!(line.contains(number), "{path:?}: {number} in {line}");
    }
    let answer: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
    assert_eq!(
        answer["result"]["extraTopLevel"]["kept"], true,
        "{path:?}: {line}"
    );
    assert!(answer["result"].get("_meta").is_none(), "{path:?}: {line}");
}
on_both_paths!(result_numbers, result_numbers_pass_as_the_server_wrote_them);

/// The numbers of an agent's `tools/call` arguments reach the server as the agent wrote them.
async fn argument_numbers_pass_as_the_agent_wrote_them(path: CallPath) {
    let c = companion(path).await;
    let (mut agent, _) = agent(&c).await;
    let arguments = r#"{"big":123456789012345678901234567890,"f":0.1,"one":1.0,"neg0":-0.0}"#;
    agent
        .send_line(&format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"mcp_f_args","arguments":{arguments}}}}}"#
        ))
        .await;
    let (answer, _) = agent.until_response(&json!(1)).await;
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("");
    assert_eq!(
        text, r#"{"big": 123456789012345678901234567890, "f": 0.1, "one": 1.0, "neg0": -0.0}"#,
        "{path:?}: {answer}"
    );
}
on_both_paths!(
    argument_numbers,
    argument_numbers_pass_as_the_agent_wrote_them
);

/// A server's progress reaches the agent with its numbers as the server wrote them (an integer
/// stays one), under the agent's token.
async fn progress_numbers_pass_as_the_server_wrote_them(path: CallPath) {
    let c = companion(path).await;
    let (mut agent, _) = agent(&c).await;
    agent
        .call_with_progress(1, "mcp_f_prog", json!({}), "agent-tok")
        .await;
    let (answer, before) = agent.until_response(&json!(1)).await;
    assert_eq!(answer["result"]["content"][0]["text"], "done", "{answer}");
    let progress: Vec<&Value> = before
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| &m["params"])
        .collect();
    assert_eq!(progress.len(), 2, "{before:?}");
    assert!(progress[0]["progress"].is_u64(), "{:?}", progress[0]);
    assert!(progress[0]["total"].is_u64(), "{:?}", progress[0]);
    assert_eq!(
        progress[1]["progress"].as_f64(),
        Some(1.5),
        "{:?}",
        progress[1]
    );
    assert!(progress[1]["total"].is_f64(), "{:?}", progress[1]);
    for p in &progress {
        assert_eq!(p["progressToken"], "agent-tok", "{p}");
        assert!(p.get("_meta").is_none(), "{p}");
    }
}

on_both_paths!(
    progress_numbers,
    progress_numbers_pass_as_the_server_wrote_them
);
