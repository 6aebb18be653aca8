//! [`Hub::call`]: from a wrapped tool name to an upstream request, and back to exactly one
//! `tools/call` result (DESIGN §6, §7).
//!
//! ```text
//! route by wrapped name (catalog, else the server's last known routes)
//!        │ unknown ─▶ isError "unknown tool"
//!        ▼
//! server has a session? ─no─▶ removed / stopped / failed / needs sign-in ─▶ isError at once
//!        │ yes                 restarting (restart, crash backoff, reload) ─▶ wait ≤ connectTimeout
//!        ▼
//! call policy (approve.rs) ─ deny / declined ─▶ isError, never sent
//!        │ allow / approved
//!        ▼
//! call on session g ──ok / JSON-RPC error / timeout──▶ result (never retried)
//!        │ session broke
//!        ▼
//! retry safe? ─no─▶ isError "the connection was lost … the call may or may not have run"
//!        │ yes: not delivered, or the tool is readOnlyHint / idempotentHint
//!        ▼
//! reconnect(g), shared by every caller that saw g fail ──▶ call once more ──▶ result
//! ```
//!
//! **The retry rule** and the texts of failed calls live in [`Forward`] (`forward.rs`), which
//! the fast path drives too; this file routes the call and finds it a session. A failed
//! attempt is judged once it is explained: a session that broke because the stdio process
//! exited is named so, with the exit status and the last stderr line ([`ending::explain`],
//! as on the fast path).
//!
//! **Restarts.** While a server restarts (the `restart` command, a crash and its backoff, a
//! `reload` that changed its entry) its tools leave `tools/list`, but the hub keeps their last
//! routes: a call waits for the server, up to its `connectTimeout`, and then runs. Only a
//! server that was removed, stopped by the user, has failed or needs sign-in answers at once,
//! saying which.

use rmcp::model::{CallToolResult, JsonObject};
use std::sync::Arc;

use super::Hub;
use super::approve::Approval;
use super::forward::{Forward, Verdict, error_result};
use super::ready::NotReady;
use super::record::{self, CallRecord};
use super::search::SearchCall;
use crate::activity::Agent;
use crate::catalog::{Target, search};
use crate::supervisor::{Live, ServerHandle};
use crate::upstream::call::{self, CallError, Downstream};
use crate::upstream::ending;

impl Hub {
    /// Calls the wrapped tool `name` and always returns a `tools/call` result: upstream answers
    /// are passed through; every failure (unknown tool, server down, timeout, JSON-RPC error,
    /// lost connection) becomes `isError: true` with a readable message naming the server.
    ///
    /// Waits for a restarting server (up to its `connectTimeout`); retries a call whose session
    /// broke only when that cannot run it twice ([`Forward`], see the module docs).
    ///
    /// The call is recorded in the activity log (`record.rs`) as made by the agent of
    /// `downstream`, or by the control API when there is none.
    ///
    /// Under `toolSearch`, `search_tools` is answered from the session's catalog and
    /// `call_tool` is this call of the tool it names (`search.rs`).
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        downstream: Option<&Downstream>,
    ) -> CallToolResult {
        let agent = || downstream.map_or_else(Agent::control, |d| self.agent_of(&d.peer));
        self.call_as(name, arguments, downstream, agent).await
    }

    /// [`Hub::call`], recorded as made by `agent` (the fast path's calls it hands over
    /// before sending anything).
    pub async fn call_as(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        downstream: Option<&Downstream>,
        agent: impl Fn() -> Agent + Sync,
    ) -> CallToolResult {
        let catalog = self.catalog();
        let (name, arguments) = if catalog.searching() && search::is_search_tool(name) {
            match Hub::search_call(&catalog, name, arguments.as_ref()) {
                SearchCall::Call(inner, arguments) => (std::borrow::Cow::Owned(inner), arguments),
                SearchCall::Answer(answer) => {
                    let record = CallRecord::start(self, "rmcp", &agent, name, || {
                        record::object_arguments(arguments.as_ref())
                    });
                    record.answered(&answer, None);
                    return answer;
                }
            }
        } else {
            (std::borrow::Cow::Borrowed(name), arguments)
        };
        drop(catalog);
        let record = CallRecord::start(self, "rmcp", &agent, &name, || {
            record::object_arguments(arguments.as_ref())
        });
        self.routed_call(&name, arguments, downstream, &agent, record)
            .await
    }

    /// The call of `name` once its search-tool form is unwrapped: routed, approved
    /// (`approve.rs`), forwarded, recorded.
    async fn routed_call(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        downstream: Option<&Downstream>,
        agent: &(dyn Fn() -> Agent + Sync),
        mut record: CallRecord,
    ) -> CallToolResult {
        let (route, server, live) = match self.ready(name, downstream).await {
            Ok(ready) => ready,
            Err(NotReady {
                withheld: Some(server),
                message,
                ..
            }) => {
                record.routed(&server);
                record.withheld(&message);
                return error_result(message);
            }
            Err(not) => {
                record.unavailable(&not.detail, &not.message);
                return error_result(not.message);
            }
        };
        record.routed(&route.server);
        record.wrapped_as(&route.base);
        match self
            .approve(name, &route, &server, arguments.as_ref(), agent, downstream)
            .await
        {
            Approval::Run(note) => record.approval(note),
            Approval::Refused(refused) => {
                let answer = error_result(refused.message);
                record.refused(refused.outcome, refused.kind, &answer);
                return answer;
            }
        }
        let forward = Forward::new(name, &route, &server);
        let attempted = self
            .attempts(
                name,
                &route.target,
                &server,
                live,
                forward,
                arguments,
                downstream,
            )
            .await;
        record.attempted(attempted.attempts);
        let answer =
            super::native::to_agent(self.catalog().native(), &route.server, attempted.result);
        record.answered(&answer, attempted.failure.as_ref());
        answer
    }

    /// Sends a call again on the rmcp path after an attempt on session `generation` of
    /// `server` ended in [`Verdict::Retry`] with `e` (the fast path's lost or unwritable
    /// attempts): a new session, then the attempts [`Hub::call`] makes, with the retry already
    /// spent in `forward`. Returns the answer, the failure that ended the call when the
    /// companion made the answer, and the attempts sent (for the call's [`CallRecord`]).
    pub async fn resend(
        &self,
        name: &str,
        target: &Target,
        server: &ServerHandle,
        generation: u64,
        (forward, e): (Forward, &CallError),
        arguments: Option<JsonObject>,
    ) -> Attempted {
        match self
            .fresh_session(name, server, generation, &forward, e, None)
            .await
        {
            Ok(live) => {
                self.attempts(name, target, server, live, forward, arguments, None)
                    .await
            }
            Err(result) => Attempted {
                result,
                failure: Some(e.clone()),
                attempts: 0,
            },
        }
    }

    /// Attempts the call on `live`, and on a new session each time `forward` says
    /// [`Verdict::Retry`], until it answers.
    #[expect(
        clippy::too_many_arguments,
        reason = "one call's parts, borrowed from the two callers that hold them"
    )]
    async fn attempts(
        &self,
        name: &str,
        target: &Target,
        server: &ServerHandle,
        mut live: Arc<Live>,
        mut forward: Forward,
        arguments: Option<JsonObject>,
        downstream: Option<&Downstream>,
    ) -> Attempted {
        let mut attempts = 0;
        loop {
            attempts += 1;
            let attempt = call::call(
                live.upstream(),
                target,
                forward.arguments(arguments.clone()),
                forward.clock(),
                downstream,
            )
            .await;
            let attempt = match attempt {
                Err(e) => Err(ending::explain(e, live.ending.as_ref(), server.log()).await),
                ok => ok,
            };
            let (result, failure) = match attempt {
                Ok(result) => (super::forward::masked(result), None),
                Err(e) => match forward.judge(&e) {
                    Verdict::Fail(answer) => (answer, Some(e)),
                    Verdict::Retry => {
                        match self
                            .fresh_session(name, server, live.generation, &forward, &e, downstream)
                            .await
                        {
                            Ok(fresh) => {
                                live = fresh;
                                continue;
                            }
                            Err(answer) => (answer, Some(e)),
                        }
                    }
                },
            };
            return Attempted {
                result,
                failure,
                attempts,
            };
        }
    }

    /// A session to send a retried call on, after session `generation` broke with `e`: the
    /// reconnect every caller that saw `generation` fail shares, or — when that fails (the
    /// server is down or backing off) — whatever a call for a restarting server waits for.
    async fn fresh_session(
        &self,
        name: &str,
        server: &ServerHandle,
        generation: u64,
        forward: &Forward,
        e: &CallError,
        downstream: Option<&Downstream>,
    ) -> Result<Arc<Live>, CallToolResult> {
        match server.reconnect(generation).await {
            Ok(fresh) => Ok(fresh),
            Err(why) => match self.ready(name, downstream).await {
                Ok((_, _, fresh)) => Ok(fresh),
                Err(not) => Err(forward.no_session(e, &why.to_string(), &not.message)),
            },
        }
    }
}

/// How a forwarded call ended ([`Hub::resend`] and the attempts behind [`Hub::call`]).
#[derive(Debug)]
pub struct Attempted {
    /// The agent's answer.
    pub result: CallToolResult,
    /// The failure that ended the call, when the companion made the answer.
    pub failure: Option<CallError>,
    /// How many attempts were sent to the server (or a send was tried).
    pub attempts: u32,
}
