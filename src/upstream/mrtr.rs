//! Multi round-trip requests (MCP 2026-07-28, "Multi Round-Trip Requests", SEP-2322) from a
//! 2026-07-28 server: instead of sending us `elicitation/create`, `sampling/createMessage` or
//! `roots/list` in the middle of a `tools/call`, `prompts/get` or `resources/read`, the server
//! answers the request with an
//! `InputRequiredResult` (`inputRequests` keyed by its own ids, an opaque `requestState`). We
//! answer each request and send the call again with `inputResponses` and the `requestState`
//! unchanged ([`super::call::rounds`] loops, at most [`MAX_ROUNDS`] times).
//!
//! Who answers each input request:
//!
//! | request | calling agent that declared the capability | otherwise |
//! |---|---|---|
//! | `elicitation/create` | `initialize` era: sent to it as a server-initiated request; 2026-07-28: put to it through the call's [`Relay`](super::relay::Relay), in the endpoint's own `InputRequiredResult` with the endpoint's signed `requestState`; its answer is the response | `{"action":"cancel"}` (nobody was asked) |
//! | `sampling/createMessage` | as above | the call fails: no model is available through the companion |
//! | `roots/list` | as above | `{"roots":[]}` |
//!
//! The server's own `requestState` never reaches the agent: the companion keeps it with the
//! call and sends it back unchanged.
#![expect(
    deprecated,
    reason = "sampling and roots are deprecated by SEP-2577 but servers still ask for them"
)]

use std::time::Duration;

use rmcp::model::{
    ClientRequest, ElicitResult, ElicitationAction, InputRequest, InputRequiredResult,
    InputResponses, ListRootsResult, ProtocolVersion, ServerRequest,
};
use rmcp::service::{PeerRequestOptions, ServiceError};

use super::call::{CallError, Downstream};
use super::relay::NoAnswer;

/// The most `InputRequiredResult`s one call may get before it fails.
pub const MAX_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

/// What the next round of a call carries: our responses and the server's `requestState`.
#[derive(Debug)]
pub struct Answers {
    responses: InputResponses,
    state: Option<String>,
}

impl Answers {
    /// The responses by the server's keys (a task's `tasks/update` carries them, MCP
    /// 2026-07-28 Tasks extension; it has no `requestState`).
    pub fn into_responses(self) -> InputResponses {
        self.responses
    }
}

/// Puts `answers` into the retried `request` (`tools/call`, `prompts/get` or
/// `resources/read`, the requests MCP 2026-07-28 lets a server answer this way); other
/// requests are left as they are.
pub fn attach(request: &mut ClientRequest, answers: Answers) {
    let responses = (!answers.responses.is_empty()).then_some(answers.responses);
    match request {
        ClientRequest::CallToolRequest(call) => {
            call.params.input_responses = responses;
            call.params.request_state = answers.state;
        }
        ClientRequest::GetPromptRequest(get) => {
            get.params.input_responses = responses;
            get.params.request_state = answers.state;
        }
        ClientRequest::ReadResourceRequest(read) => {
            read.params.input_responses = responses;
            read.params.request_state = answers.state;
        }
        _ => {}
    }
}

/// Answers every request of `asked`, asking `downstream`'s agent where it can (each within
/// `timeout`, the server's `toolTimeout`).
///
/// # Errors
/// [`CallError::Cancelled`] when the agent's call ended first; [`CallError::Unexpected`] for a
/// request nobody can answer (sampling without a capable agent) or an agent that failed it.
pub async fn answer(
    asked: InputRequiredResult,
    downstream: Option<&Downstream>,
    timeout: Duration,
) -> Result<Answers, CallError> {
    let mut responses = InputResponses::new();
    for (key, request) in asked.input_requests.unwrap_or_default() {
        let value = answer_one(request, downstream, timeout).await?;
        responses.insert(key, value);
    }
    Ok(Answers {
        responses,
        state: asked.request_state,
    })
}

async fn answer_one(
    request: InputRequest,
    downstream: Option<&Downstream>,
    timeout: Duration,
) -> Result<serde_json::Value, CallError> {
    // An agent that started with `initialize` is sent requests; one of the 2026-07-28 era gets
    // them through its call's relay, in the endpoint's own `InputRequiredResult`.
    let capabilities = downstream.and_then(|d| {
        if let Some(relay) = &d.relay {
            return Some((d, relay.capabilities().clone()));
        }
        let info = d.peer.peer_info()?;
        (info.protocol_version.as_str() < ProtocolVersion::V_2026_07_28.as_str())
            .then(|| (d, info.capabilities.clone()))
    });
    let (server_request, fallback) = match request {
        InputRequest::Elicitation(elicit) => (
            capabilities
                .as_ref()
                .filter(|(_, c)| c.elicitation.is_some())
                .map(|(d, _)| (*d, ServerRequest::ElicitRequest(elicit))),
            Some(json(&ElicitResult::new(ElicitationAction::Cancel))),
        ),
        InputRequest::CreateMessage(sample) => (
            capabilities
                .as_ref()
                .filter(|(_, c)| c.sampling.is_some())
                .map(|(d, _)| (*d, ServerRequest::CreateMessageRequest(sample))),
            None,
        ),
        InputRequest::ListRoots(roots) => (
            capabilities
                .as_ref()
                .filter(|(_, c)| c.roots.is_some())
                .map(|(d, _)| (*d, ServerRequest::ListRootsRequest(roots))),
            Some(json(&ListRootsResult::new(Vec::new()))),
        ),
        _ => (None, None),
    };
    match (server_request, fallback) {
        (Some((agent, request)), _) => forward(agent, request, timeout).await,
        (None, Some(fallback)) => Ok(fallback),
        (None, None) => Err(CallError::Unexpected {
            what: "a request for input nobody can answer (sampling/createMessage needs a calling agent that declared sampling; no model is available through MCP Companion)".into(),
        }),
    }
}

/// Sends `request` to the calling agent (or puts it through the call's relay) and returns its
/// result as JSON.
async fn forward(
    agent: &Downstream,
    request: ServerRequest,
    timeout: Duration,
) -> Result<serde_json::Value, CallError> {
    if let Some(relay) = &agent.relay {
        let due = tokio::time::Instant::now() + timeout;
        return tokio::select! {
            answer = relay.ask(request, due) => match answer {
                Ok(result) => Ok(json(&result)),
                Err(NoAnswer::TimedOut) => Err(CallError::Unexpected {
                    what: format!("a request for input the agent did not answer within {} s", timeout.as_secs_f64()),
                }),
                Err(NoAnswer::CallEnded) => Err(CallError::Cancelled),
            },
            () = agent.cancelled.cancelled() => Err(CallError::Cancelled),
        };
    }
    let handle = agent
        .peer
        .send_request_with_option(request, PeerRequestOptions::with_timeout(timeout))
        .await
        .map_err(|e| CallError::Unexpected {
            what: format!(
                "a request for input the agent could not be sent: {}",
                super::error_text::describe(&e)
            ),
        })?;
    tokio::select! {
        answer = handle.await_response() => match answer {
            Ok(result) => Ok(json(&result)),
            Err(ServiceError::McpError(e)) => Err(CallError::Unexpected {
                what: format!("a request for input the agent refused: {}", e.message),
            }),
            Err(e) => Err(CallError::Unexpected {
                what: format!(
                    "a request for input the agent did not answer: {}",
                    super::error_text::describe(&e)
                ),
            }),
        },
        () = agent.cancelled.cancelled() => Err(CallError::Cancelled),
    }
}

fn json<T: serde::Serialize>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}
