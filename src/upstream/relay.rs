//! [`Relay`]: how a server's request reaches a calling agent of the 2026-07-28 era, which
//! cannot be sent requests (MCP 2026-07-28, "Multi Round-Trip Requests"). The request becomes
//! a [`Question`] on the call's relay; the endpoint answers the agent's `tools/call` with an
//! `InputRequiredResult` carrying it, and when the agent calls again with `inputResponses`, the
//! endpoint hands each answer back through [`Question::answer`].
//!
//! The asking side ([`super::ask`]) waits for the answer at most the entry's `toolTimeout`, as
//! for a request sent to an agent; a question whose [`Question`] is dropped unanswered (the
//! agent's call ended, its state expired) reads as the call having ended.
#![expect(
    deprecated,
    reason = "sampling and roots are deprecated by SEP-2577 but 2025-era servers use them"
)]

use rmcp::model::{
    ClientCapabilities, ClientResult, CreateMessageResult, ElicitResult, InputRequest,
    ListRootsResult, ServerRequest,
};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// How many questions may wait for the endpoint to pick them up; the asking side waits when
/// that many are queued (a server asks one or a few at a time).
const QUEUE: usize = 16;

/// One request of a server for the agent: what it asks, until when, and where the answer goes.
#[derive(Debug)]
pub struct Question {
    /// The server's request, as it goes into `inputRequests`.
    pub request: InputRequest,
    /// When the asking side stops waiting (the entry's `toolTimeout` after the server asked).
    pub due: Instant,
    reply: oneshot::Sender<ClientResult>,
}

impl Question {
    /// Checks that `value` (one entry of the agent's `inputResponses`) is a result of the kind
    /// this question asked for, and returns it decoded.
    ///
    /// # Errors
    /// What does not fit, in serde's words (e.g. "missing field `action`").
    pub fn read(&self, value: &Value) -> Result<ClientResult, String> {
        let decoded = match &self.request {
            InputRequest::Elicitation(_) => serde_json::from_value::<ElicitResult>(value.clone())
                .map(ClientResult::ElicitResult),
            InputRequest::CreateMessage(_) => {
                serde_json::from_value::<CreateMessageResult>(value.clone())
                    .map(|r| ClientResult::CreateMessageResult(Box::new(r)))
            }
            InputRequest::ListRoots(_) => serde_json::from_value::<ListRootsResult>(value.clone())
                .map(ClientResult::ListRootsResult),
            _ => return Err("a request of a kind this build does not know".into()),
        };
        decoded.map_err(|e| e.to_string())
    }

    /// The method the question asks (`elicitation/create`, …), for error texts.
    pub fn method(&self) -> &'static str {
        match &self.request {
            InputRequest::Elicitation(_) => "elicitation/create",
            InputRequest::CreateMessage(_) => "sampling/createMessage",
            InputRequest::ListRoots(_) => "roots/list",
            _ => "an unknown request",
        }
    }

    /// Hands the agent's answer (checked by [`Question::read`]) to the asking side; nothing
    /// happens when it stopped waiting.
    pub fn answer(self, result: ClientResult) {
        let _ = self.reply.send(result);
    }
}

/// The asking end of one call's relay, held by the call while it runs. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Relay {
    questions: mpsc::Sender<Question>,
    /// What the agent declared in the request's `_meta` `clientCapabilities`.
    capabilities: ClientCapabilities,
}

/// The endpoint's end of a call's relay: the questions its server asked.
#[derive(Debug)]
pub struct Questions {
    inbox: mpsc::Receiver<Question>,
}

impl Questions {
    /// The next question; `None` once every [`Relay`] of the call is gone.
    pub async fn next(&mut self) -> Option<Question> {
        self.inbox.recv().await
    }

    /// A question already waiting, without waiting for one.
    pub fn ready(&mut self) -> Option<Question> {
        self.inbox.try_recv().ok()
    }
}

/// Why a relayed question got no answer.
#[derive(Debug, PartialEq, Eq)]
pub enum NoAnswer {
    /// Nothing by the question's due time.
    TimedOut,
    /// The endpoint dropped the question: the agent's call ended or its state expired.
    CallEnded,
}

impl Relay {
    /// A relay for a call whose agent declared `capabilities`, and the endpoint's end of it.
    pub fn channel(capabilities: ClientCapabilities) -> (Relay, Questions) {
        let (questions, inbox) = mpsc::channel(QUEUE);
        (
            Relay {
                questions,
                capabilities,
            },
            Questions { inbox },
        )
    }

    /// What the agent declared.
    pub fn capabilities(&self) -> &ClientCapabilities {
        &self.capabilities
    }

    /// Puts `request` to the agent and waits for its answer until `due`.
    ///
    /// # Errors
    /// [`NoAnswer`]; a request that is not elicitation, sampling or roots is
    /// [`NoAnswer::CallEnded`] (no agent can be asked it this way).
    pub async fn ask(
        &self,
        request: ServerRequest,
        due: Instant,
    ) -> Result<ClientResult, NoAnswer> {
        let request = match request {
            ServerRequest::ElicitRequest(r) => InputRequest::Elicitation(r),
            ServerRequest::CreateMessageRequest(r) => InputRequest::CreateMessage(r),
            ServerRequest::ListRootsRequest(r) => InputRequest::ListRoots(r),
            _ => return Err(NoAnswer::CallEnded),
        };
        let (reply, answer) = oneshot::channel();
        let question = Question {
            request,
            due,
            reply,
        };
        let asked = async {
            self.questions
                .send(question)
                .await
                .map_err(|_| NoAnswer::CallEnded)?;
            answer.await.map_err(|_| NoAnswer::CallEnded)
        };
        tokio::time::timeout_at(due, asked)
            .await
            .unwrap_or(Err(NoAnswer::TimedOut))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ElicitRequest, ElicitRequestParams, ElicitationAction, ListRootsRequest};
    use std::time::Duration;

    fn form() -> ServerRequest {
        let params: ElicitRequestParams = serde_json::from_value(serde_json::json!({
            "message": "name?", "requestedSchema": { "type": "object", "properties": {} }
        }))
        .expect("form params");
        ServerRequest::ElicitRequest(ElicitRequest::new(params))
    }

    #[tokio::test]
    async fn an_answer_of_the_asked_kind_reaches_the_asking_side() {
        let (relay, mut questions) = Relay::channel(ClientCapabilities::default());
        let due = Instant::now() + Duration::from_secs(30);
        let asking = tokio::spawn(async move { relay.ask(form(), due).await });
        let question = questions.next().await.expect("a question");
        assert_eq!(question.method(), "elicitation/create");
        // Another kind's result, or a malformed one, is refused before anything is handed on.
        assert!(question.read(&serde_json::json!({ "roots": [] })).is_err());
        let answer = question
            .read(&serde_json::json!({ "action": "accept", "content": { "name": "Ada" } }))
            .expect("an elicitation result");
        question.answer(answer);
        match asking.await.expect("join") {
            Ok(ClientResult::ElicitResult(r)) => assert_eq!(r.action, ElicitationAction::Accept),
            other => panic!("not the answer: {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_dropped_question_ends_the_wait_and_a_silent_one_times_out() {
        let (relay, mut questions) = Relay::channel(ClientCapabilities::default());
        let due = Instant::now() + Duration::from_secs(30);
        let roots = ServerRequest::ListRootsRequest(ListRootsRequest::default());
        let asking = tokio::spawn({
            let relay = relay.clone();
            async move { relay.ask(roots, due).await }
        });
        drop(questions.next().await.expect("a question"));
        assert_eq!(asking.await.expect("join").err(), Some(NoAnswer::CallEnded));

        let soon = Instant::now() + Duration::from_millis(20);
        assert_eq!(
            relay.ask(form(), soon).await.err(),
            Some(NoAnswer::TimedOut)
        );
    }
}
