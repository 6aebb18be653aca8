//! Parking rounds without processes: a call task that asks through its relay.
#![expect(
    deprecated,
    reason = "roots/list is deprecated by SEP-2577 but servers still ask for it"
)]

use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock, ListRootsRequest, ServerRequest};
use serde_json::json;

use super::*;
use crate::upstream::relay::Relay;

/// A call that asks `roots/list` `rounds` times, then says how many roots each answer had.
fn asking_call(rounds: usize) -> Running {
    let (relay, questions) = Relay::channel(rmcp::model::ClientCapabilities::default());
    let task = tokio::spawn(async move {
        let mut heard = Vec::new();
        for _ in 0..rounds {
            let due = tokio::time::Instant::now() + Duration::from_secs(30);
            let request = ServerRequest::ListRootsRequest(ListRootsRequest::default());
            match relay.ask(request, due).await {
                Ok(ClientResult::ListRootsResult(r)) => heard.push(r.roots.len()),
                other => return Err(McpError::internal_error(format!("{other:?}"), None)),
            }
        }
        Ok(ServerResult::CallToolResult(CallToolResult::success(vec![
            ContentBlock::text(format!("heard {heard:?}")),
        ])))
    });
    Running {
        task,
        questions,
        cancel: CancellationToken::new(),
    }
}

fn text(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Done(done) => match &**done {
            Ok(ServerResult::CallToolResult(r)) => serde_json::to_value(&r.content)
                .map(|v| v.to_string())
                .unwrap_or_default(),
            other => panic!("not a tool result: {other:?}"),
        },
        Outcome::Failed(why) => why.clone(),
        other => panic!("not a result: {other:?}"),
    }
}

/// Answers every round with `roots` entries until the call completes; the response and the
/// number of rounds.
async fn answer_all(parks: &Arc<Parks>, running: Running, call: [u8; 32]) -> (Outcome, usize) {
    let never = CancellationToken::new();
    let mut response = parks.wait(running, 0, call, &never).await.expect("first");
    let mut rounds = 0;
    while let Outcome::InputRequired(asked) = &response {
        rounds += 1;
        let requests = asked.input_requests.clone().expect("requests");
        let responses: InputResponses = requests
            .keys()
            .map(|k| (k.clone(), json!({ "roots": [{ "uri": "file:///a/" }] })))
            .collect();
        let state = asked.request_state.clone().expect("state");
        response = parks
            .resume(&state, call, &responses, &never)
            .await
            .expect("resumed");
    }
    (response, rounds)
}

#[tokio::test]
async fn each_question_is_a_round_and_its_answer_reaches_the_call() {
    let parks = Arc::new(Parks::default());
    let call = seal::request_digest("tools/call", "mcp_x_roots", None);
    let (response, rounds) = answer_all(&parks, asking_call(2), call).await;
    assert_eq!(rounds, 2);
    assert!(
        text(&response).contains("heard [1, 1]"),
        "{}",
        text(&response)
    );
    assert!(parks.lock().is_empty(), "nothing stays parked");
}

#[tokio::test]
async fn a_call_that_keeps_asking_fails_after_the_last_round_and_is_cancelled() {
    let parks = Arc::new(Parks::default());
    let call = seal::request_digest("tools/call", "mcp_x_roots", None);
    let running = asking_call(MAX_ROUNDS + 5);
    let cancel = running.cancel.clone();
    let (response, rounds) = answer_all(&parks, running, call).await;
    assert_eq!(rounds, MAX_ROUNDS);
    assert!(
        text(&response).contains(&format!("more than {MAX_ROUNDS} requests for input")),
        "{}",
        text(&response)
    );
    assert!(cancel.is_cancelled());
}
