//! A 2025-11-25 task in `input_required`, for a 2026-07-28 agent.
//!
//! The problem: such a server asks its questions (`elicitation/create`,
//! `sampling/createMessage`, `roots/list`) only while a `tasks/result` of the task waits, and a
//! 2026-07-28 agent never sends one: it polls `tasks/get`, reads the questions in the task's
//! `inputRequests` and answers them with `tasks/update` (the Tasks extension, SEP-2663).
//!
//! The strategy: the first `tasks/get` that finds the task `input_required` starts a
//! `tasks/result` upstream on the agent's behalf, with a relay ([`crate::upstream::relay`]) in
//! place of the agent, as for a parked call. Each question the server asks becomes an
//! `inputRequests` entry under a key of the companion's (`q<n>`, never reused); `tasks/update`
//! hands each answer to its question. That `tasks/result` ends when the task ends (its answer
//! is not kept: the next `tasks/get` asks for the result again), at the server's `toolTimeout`,
//! or when the agent's session ends (the task table is dropped).

use std::collections::BTreeMap;
use std::time::Duration;

use rmcp::model::{ClientCapabilities, InputRequests, InputResponses};
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use serde_json::json;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::{Entry, Tasks};
use crate::hub::Hub;
use crate::upstream::askers::Asker;
use crate::upstream::relay::{Question, Questions, Relay};

/// How long a `tasks/get` waits for the first question of a task that has just asked for
/// input; without one by then it reports the task `working`, and the next poll looks again.
const FIRST_QUESTION: Duration = Duration::from_secs(2);

/// The questions of one task, waiting for the agent.
#[derive(Debug)]
pub(super) struct Asking {
    questions: Questions,
    outstanding: BTreeMap<String, Question>,
    next: u32,
    /// Ends the `tasks/result` waiting upstream when this is dropped.
    _stop: DropGuard,
}

impl Tasks {
    fn take_asking(&self, served: &str) -> Option<Asking> {
        self.lock().asking.remove(served)
    }

    fn put_asking(&self, served: &str, asking: Asking) {
        self.lock().asking.insert(served.to_owned(), asking);
    }

    /// Forgets the questions of `served` (its task ended), ending their `tasks/result`.
    pub(super) fn done_asking(&self, served: &str) {
        drop(self.take_asking(served));
    }
}

impl Hub {
    /// The questions the task `served` (of `entry`, its server session `live`) waits on for the
    /// agent `peer` that declared `capabilities`, as `inputRequests` (module doc); empty when
    /// the server has not asked yet.
    pub(super) async fn asked(
        &self,
        tasks: &Tasks,
        served: &str,
        entry: &Entry,
        live: &std::sync::Arc<crate::supervisor::Live>,
        agent: (Peer<RoleServer>, ClientCapabilities),
    ) -> InputRequests {
        let mut asking = match tasks.take_asking(served) {
            Some(asking) => asking,
            None => self.start_asking(entry, live, agent),
        };
        if asking.outstanding.is_empty()
            && let Ok(Some(question)) =
                tokio::time::timeout(FIRST_QUESTION, asking.questions.next()).await
        {
            asking.keep(question);
        }
        while let Some(question) = asking.questions.ready() {
            asking.keep(question);
        }
        let requests = (asking.outstanding.iter())
            .map(|(key, question)| (key.clone(), question.request.clone()))
            .collect();
        tasks.put_asking(served, asking);
        requests
    }

    /// Starts the `tasks/result` that lets the server ask (module doc).
    fn start_asking(
        &self,
        entry: &Entry,
        live: &std::sync::Arc<crate::supervisor::Live>,
        (peer, capabilities): (Peer<RoleServer>, ClientCapabilities),
    ) -> Asking {
        let (relay, questions) = Relay::channel(capabilities);
        let stop = CancellationToken::new();
        let asker = Asker {
            peer,
            cancelled: stop.clone(),
            relay: Some(relay),
        };
        let (hub, live, server) = (self.clone(), live.clone(), entry.server.clone());
        let params = json!({ "taskId": entry.upstream });
        let ended = stop.clone();
        tokio::spawn(async move {
            let _asking = live.askers.enter(asker);
            tokio::select! {
                _ = hub.raw(&server, &live, "tasks/result", params) => {}
                () = ended.cancelled() => {}
            }
        });
        Asking {
            questions,
            outstanding: BTreeMap::new(),
            next: 1,
            _stop: stop.drop_guard(),
        }
    }

    /// `tasks/update`: each of `responses` handed to the outstanding question under its key;
    /// answers to keys not outstanding are ignored (the extension says so).
    ///
    /// # Errors
    /// -32602 when an answer is not of the kind its question asked for (nothing of that
    /// update is delivered).
    pub(super) fn answer_asked(
        tasks: &Tasks,
        served: &str,
        responses: &InputResponses,
    ) -> Result<(), McpError> {
        let Some(mut asking) = tasks.take_asking(served) else {
            return Ok(());
        };
        let mut answers = Vec::new();
        for (key, value) in responses {
            let Some(question) = asking.outstanding.get(key) else {
                continue;
            };
            match question.read(value) {
                Ok(result) => answers.push((key.clone(), result)),
                Err(why) => {
                    let method = question.method();
                    tasks.put_asking(served, asking);
                    return Err(McpError::invalid_params(
                        format!("inputResponses[\"{key}\"] is no answer to {method}: {why}"),
                        None,
                    ));
                }
            }
        }
        for (key, result) in answers {
            if let Some(question) = asking.outstanding.remove(&key) {
                question.answer(result);
            }
        }
        tasks.put_asking(served, asking);
        Ok(())
    }
}

impl Asking {
    fn keep(&mut self, question: Question) {
        self.outstanding.insert(format!("q{}", self.next), question);
        self.next += 1;
    }
}
