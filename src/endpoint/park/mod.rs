//! Parked calls: how a server's `elicitation/create`, `sampling/createMessage` or `roots/list`
//! reaches an agent of the 2026-07-28 era, which cannot be sent requests (MCP 2026-07-28,
//! "Multi Round-Trip Requests").
//!
//! 1. The agent's `tools/call`, `prompts/get` or `resources/read` ([`kinds`]) runs as a task of
//!    its own, with a [`Relay`] in place of requests to the agent.
//! 2. When the server asks during the request, it is **parked** (kept open upstream, the
//!    server's request waiting) and the agent is answered with an `InputRequiredResult`:
//!    `inputRequests` keyed `r<round>-<n>`, and a `requestState` [`seal`]ed with this process's
//!    key, naming this session, the parked request, the round, an expiry and the request
//!    (method, and tool and arguments, prompt and arguments, or URI).
//! 3. The agent sends the same request again, with `inputResponses` and that
//!    `requestState`. The state is verified (signature, session, request, expiry) and every
//!    answer checked against what was asked before any is delivered; then the server's
//!    requests get their answers and the request goes on: its result, or another round.
//!
//! Bounds: a state expires when the first of its questions stops waiting (the entry's
//! `toolTimeout` after the server asked); then the parked call is cancelled upstream
//! (`notifications/cancelled`) and the server's requests get `cancel` (elicitation) or a
//! JSON-RPC error. At most
//! [`MAX_ROUNDS`] rounds per call, then the call fails and is cancelled. A parked call ends
//! with its agent's session and when the companion shuts down. A state is good for one retry:
//! the park it names is gone after.
//!
//! Refusals (never delivering anything) are -32602 with the reason: a state this companion
//! did not sign or that was changed, another session's, another request's (another kind,
//! tool, prompt, URI or arguments), an expired one, one already used, or `inputResponses`
//! missing an answer or holding one of the wrong kind.
//!
//! What the companion ends (too many rounds, no key) is an `isError` result for a tool call
//! and -32603 for the others.

pub mod kinds;
pub mod seal;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{SystemTime, UNIX_EPOCH};

use std::future::Future;

use rmcp::model::{ClientResult, InputRequests, InputRequiredResult, InputResponses, ServerResult};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::hub::Hub;
use crate::upstream::call::Downstream;
use crate::upstream::mrtr::MAX_ROUNDS;
use crate::upstream::relay::{Question, Questions, Relay};
use seal::{Claim, Expect, Sealer};

/// What a parked request's task ends with: the server's result (a `tools/call` result
/// always, for a tool call), or the error the agent gets.
pub type Done = Result<ServerResult, McpError>;

/// What one round gives the agent ([`kinds`] turns it into the answer of its request).
#[derive(Debug)]
pub enum Outcome {
    /// The request's own answer (boxed: a result is large beside the other variants).
    Done(Box<Done>),
    /// The server asked: the agent answers these and sends the request again.
    InputRequired(InputRequiredResult),
    /// The companion ended the request (too many rounds, no key, the task stopped): why.
    Failed(String),
}

/// One agent request running as its own task, with the questions its server asks.
#[derive(Debug)]
pub struct Running {
    /// The routed request.
    pub task: JoinHandle<Done>,
    /// The server's requests during the call.
    pub questions: Questions,
    /// Cancels the call (upstream too) when fired.
    pub cancel: CancellationToken,
}

/// What a parked call needs of the agent's session.
#[derive(Clone, Copy, Debug)]
pub struct Agent<'a> {
    /// The hub the call is routed through.
    pub hub: &'a Hub,
    /// Fires when the agent's connection is gone.
    pub gone: &'a CancellationToken,
    /// Fires when the companion shuts down.
    pub shutdown: &'a CancellationToken,
}

/// A call waiting for its agent's answers.
#[derive(Debug)]
struct Parked {
    running: Running,
    /// The questions, under the keys the agent was given.
    asked: Vec<(String, Question)>,
    round: u32,
}

/// The parked calls of one agent session.
#[derive(Debug)]
pub struct Parks {
    /// This session's id, unique in the process.
    session: u64,
    next: AtomicU64,
    parked: Mutex<HashMap<u64, Parked>>,
}

impl Default for Parks {
    fn default() -> Self {
        static SESSIONS: AtomicU64 = AtomicU64::new(1);
        Parks {
            session: SESSIONS.fetch_add(1, Ordering::Relaxed),
            next: AtomicU64::new(1),
            parked: Mutex::default(),
        }
    }
}

impl Drop for Parks {
    /// The session is over: nobody can resume its parked calls, so they are cancelled.
    fn drop(&mut self) {
        for (_, parked) in self.lock().drain() {
            parked.running.cancel.cancel();
        }
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

fn refused(why: impl std::fmt::Display) -> McpError {
    McpError::invalid_params(format!("requestState refused: {why}"), None)
}

impl Parks {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Parked>> {
        // One insert or remove per critical section: a poisoned map is consistent.
        self.parked.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A request of an agent of the 2026-07-28 era: `run` (given the hub and the agent side,
    /// with a [`Relay`] in place of requests to the agent) runs as its own task, and a server's
    /// request during it parks it and answers `InputRequiredResult`; a request carrying
    /// `state` resumes its parked request instead. `request` is the [`seal::request_digest`]
    /// of the agent's request.
    ///
    /// # Errors
    /// As [`Parks::wait`] and [`Parks::resume`].
    pub async fn start<F, Fut>(
        self: &Arc<Self>,
        agent: Agent<'_>,
        request: [u8; 32],
        retry: Option<(&str, InputResponses)>,
        cx: RequestContext<RoleServer>,
        run: F,
    ) -> Result<Outcome, McpError>
    where
        F: FnOnce(Hub, Downstream) -> Fut,
        Fut: Future<Output = Done> + Send + 'static,
    {
        if let Some((state, responses)) = retry {
            return self.resume(state, request, &responses, &cx.ct).await;
        }
        let capabilities = cx.client_capabilities().unwrap_or_default();
        let (relay, questions) = Relay::channel(capabilities);
        // Not the request's token: the call outlives the request that started it. It ends with
        // the agent's connection or the companion.
        let cancel = agent.gone.child_token();
        let downstream = Downstream {
            progress_token: cx.meta.get_progress_token(),
            meta: crate::upstream::call::forwarded_meta(&cx.meta),
            arguments: None,
            peer: cx.peer,
            cancelled: cancel.clone(),
            shutdown: agent.shutdown.clone(),
            relay: Some(relay),
        };
        let shutdown = agent.shutdown.clone();
        let cancelled = cancel.clone();
        let work = run(agent.hub.clone(), downstream);
        let task = tokio::spawn(async move {
            let mut work = Box::pin(work);
            tokio::select! {
                result = &mut work => result,
                () = shutdown.cancelled() => {
                    cancelled.cancel();
                    work.await
                }
            }
        });
        let running = Running {
            task,
            questions,
            cancel,
        };
        self.wait(running, 0, request, &cx.ct).await
    }

    /// Waits for `running`'s result or its server's first question, whichever comes first:
    /// the result as the answer, or the call parked and an `InputRequiredResult`. `call` is
    /// the [`seal::request_digest`] of the agent's request, `round` how many rounds it had.
    ///
    /// # Errors
    /// -32603 when the agent cancelled `request` (the call is cancelled upstream too).
    pub async fn wait(
        self: &Arc<Self>,
        mut running: Running,
        round: u32,
        call: [u8; 32],
        request: &CancellationToken,
    ) -> Result<Outcome, McpError> {
        let first = tokio::select! {
            biased;
            result = &mut running.task => return Ok(finished(result)),
            question = running.questions.next() => question,
            () = request.cancelled() => return Err(cancelled(&running)),
        };
        let Some(first) = first else {
            // The call let go of its relay: its result is on the way.
            return tokio::select! {
                result = &mut running.task => Ok(finished(result)),
                () = request.cancelled() => Err(cancelled(&running)),
            };
        };
        let mut asked = vec![first];
        while let Some(more) = running.questions.ready() {
            asked.push(more);
        }
        let Some(sealer) = Sealer::process() else {
            running.cancel.cancel();
            return Ok(Outcome::Failed("no key to sign a requestState with".into()));
        };
        if round as usize >= MAX_ROUNDS {
            running.cancel.cancel();
            return Ok(Outcome::Failed(format!(
                "more than {MAX_ROUNDS} requests for input in one request"
            )));
        }
        let due = asked
            .iter()
            .map(|q| q.due)
            .min()
            .unwrap_or_else(tokio::time::Instant::now);
        let left = due.saturating_duration_since(tokio::time::Instant::now());
        let park = self.next.fetch_add(1, Ordering::Relaxed);
        let claim = Claim {
            session: self.session,
            park,
            round,
            expires_ms: now_ms().saturating_add(u64::try_from(left.as_millis()).unwrap_or(0)),
            call,
        };
        let keyed: Vec<(String, Question)> = asked
            .into_iter()
            .enumerate()
            .map(|(n, q)| (format!("r{round}-{}", n + 1), q))
            .collect();
        let requests: InputRequests = keyed
            .iter()
            .map(|(key, q)| (key.clone(), q.request.clone()))
            .collect();
        self.lock().insert(
            park,
            Parked {
                running,
                asked: keyed,
                round,
            },
        );
        tokio::spawn(expire(Arc::downgrade(self), park, due));
        Ok(Outcome::InputRequired(InputRequiredResult::new(
            Some(requests),
            Some(sealer.seal(&claim)),
        )))
    }

    /// The agent's retry of a parked call: verifies `state` against this session and `call`,
    /// checks `responses` against what was asked, delivers them, and waits as [`Parks::wait`].
    ///
    /// # Errors
    /// -32602 naming why the state or the responses were refused (nothing was delivered then);
    /// as [`Parks::wait`].
    pub async fn resume(
        self: &Arc<Self>,
        state: &str,
        call: [u8; 32],
        responses: &InputResponses,
        request: &CancellationToken,
    ) -> Result<Outcome, McpError> {
        let Some(sealer) = Sealer::process() else {
            return Err(refused("this companion has no key to verify it with"));
        };
        let expect = Expect {
            session: self.session,
            call,
            now_ms: now_ms(),
        };
        let claim = sealer.open(state, expect).map_err(refused)?;
        let (parked, answers) = {
            let mut parks = self.lock();
            let Some(parked) = parks.get(&claim.park) else {
                return Err(refused(
                    "the call it names was already resumed with it, or has ended",
                ));
            };
            let answers = read(&parked.asked, responses)?;
            let parked = parks.remove(&claim.park);
            (parked, answers)
        };
        let Some(parked) = parked else {
            return Err(refused("the call it names has ended"));
        };
        for ((_, question), answer) in parked.asked.into_iter().zip(answers) {
            question.answer(answer);
        }
        self.wait(parked.running, parked.round + 1, call, request)
            .await
    }
}

/// Each question's answer from `responses`, in the order of `asked`.
fn read(
    asked: &[(String, Question)],
    responses: &InputResponses,
) -> Result<Vec<ClientResult>, McpError> {
    if let Some(extra) = responses
        .keys()
        .find(|k| !asked.iter().any(|(key, _)| key == *k))
    {
        return Err(McpError::invalid_params(
            format!("inputResponses has \"{extra}\", which was not asked"),
            None,
        ));
    }
    asked
        .iter()
        .map(|(key, question)| {
            let value = responses.get(key).ok_or_else(|| {
                McpError::invalid_params(format!("inputResponses has no answer to \"{key}\""), None)
            })?;
            question.read(value).map_err(|why| {
                McpError::invalid_params(
                    format!(
                        "inputResponses \"{key}\" is not a valid {} result: {why}",
                        question.method()
                    ),
                    None,
                )
            })
        })
        .collect()
}

/// At `due`, a call still parked under `park` is dropped: cancelled upstream, its questions
/// unanswered (the server's requests get an error).
async fn expire(parks: Weak<Parks>, park: u64, due: tokio::time::Instant) {
    tokio::time::sleep_until(due).await;
    let Some(parks) = parks.upgrade() else { return };
    let parked = parks.lock().remove(&park);
    if let Some(parked) = parked {
        tracing::info!(
            round = parked.round,
            "an agent did not come back with the input a server asked for: its call is cancelled"
        );
        parked.running.cancel.cancel();
    }
}

fn finished(result: Result<Done, tokio::task::JoinError>) -> Outcome {
    match result {
        Ok(done) => Outcome::Done(Box::new(done)),
        Err(e) => Outcome::Failed(format!("the request stopped unexpectedly: {e}")),
    }
}

fn cancelled(running: &Running) -> McpError {
    running.cancel.cancel();
    McpError::internal_error("the request was cancelled by the client", None)
}

#[cfg(test)]
mod tests;
