//! [`Relay`]: the fast path's [`Tap`] on one agent connection. It takes the lines the module
//! table ([`super`]) lists, runs each taken call on its own task, and writes the call's one
//! answer on the connection, under the same bounds as rmcp's answers ([`super::super::bounded`]):
//!
//! - a taken call is in flight in the connection's [`Budget`] from the moment its line is
//!   taken until its answer is written (or the agent cancels it), so it counts against
//!   `MAX_IN_FLIGHT` like a request rmcp reads;
//! - its answer's bytes are queued in the budget until written, so an agent that does not
//!   read its answers pauses the reading of its requests (`MAX_QUEUED_BYTES`);
//! - when the agent is gone (`gone` fires: it hung up, a write to it failed), every call the
//!   relay forwarded ends, with `notifications/cancelled` upstream, and nothing more is
//!   written to it.

use std::sync::{Arc, OnceLock};

use rmcp::model::RequestId;
use rmcp::{Peer, RoleServer};
use serde_json::value::RawValue;
use tokio::io::AsyncWrite;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::call::{FastCall, Forget};
use super::envelope::{self, CallParams, CancelledParams, Incoming, Reply};
use super::{InFlight, lock};
use crate::endpoint::limits::Budget;
use crate::endpoint::line::{SharedWrite, Tap};
use crate::hub::Hub;
use crate::upstream::notice::Delivery;

/// The fast path of one agent connection. Dropping it (the connection ended) cancels every
/// call it forwarded.
pub struct Relay<W> {
    hub: Hub,
    shutdown: CancellationToken,
    agent: Arc<OnceLock<Peer<RoleServer>>>,
    in_flight: InFlight,
    /// The parent of every call's cancel token: fires when the agent is gone or the relay is
    /// dropped.
    session: CancellationToken,
    calls: u64,
    budget: Arc<Budget>,
    gone: CancellationToken,
    write: SharedWrite<W>,
    /// Set once the session's first `tools/list` has waited for the servers to settle.
    first_list: Arc<tokio::sync::OnceCell<()>>,
    /// Whether the fast path is on: off, only the Tasks lines are taken.
    fast: bool,
    /// The tasks this session created ([`crate::hub::Tasks`]).
    tasks: crate::hub::Tasks,
    /// The session's notice delivery: an answer is written after the notices queued before it.
    delivery: Arc<Delivery>,
    _cancel_on_drop: DropGuard,
}

/// Where the connection's serving code puts the agent's session once it is initialized; the
/// relay takes nothing before.
#[derive(Clone, Debug, Default)]
pub struct AgentCell(Arc<OnceLock<Peer<RoleServer>>>);

impl AgentCell {
    /// Records the initialized session (first call wins).
    pub fn set(&self, peer: Peer<RoleServer>) {
        let _ = self.0.set(peer);
    }
}

impl<W> Relay<W>
where
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// A relay for one connection to `hub`, answering on `write`, counting its calls in
    /// `budget` and ending them when `gone` fires; calls cut short by `shutdown` say so.
    /// `endpoint` is the session's handler, whose first-listing latch
    /// ([`crate::endpoint::Endpoint::first_list`]) and notice count the relay shares; `tasks`
    /// is the session's task table. With the fast path off ([`crate::upstream::lane::enabled`])
    /// only the Tasks lines are taken.
    pub fn new(
        hub: Hub,
        shutdown: CancellationToken,
        write: SharedWrite<W>,
        budget: Arc<Budget>,
        gone: CancellationToken,
        endpoint: &crate::endpoint::Endpoint,
        tasks: crate::hub::Tasks,
    ) -> (Relay<W>, AgentCell) {
        let first_list = endpoint.first_list();
        let delivery = endpoint.delivery();
        let cell = AgentCell::default();
        let session = gone.child_token();
        let relay = Relay {
            hub,
            shutdown,
            agent: cell.0.clone(),
            in_flight: InFlight::default(),
            calls: 0,
            budget,
            gone,
            write,
            first_list,
            fast: crate::upstream::lane::enabled(),
            tasks,
            delivery,
            _cancel_on_drop: session.clone().drop_guard(),
            session,
        };
        (relay, cell)
    }

    /// A `notifications/cancelled` for a fast-path call cancels it; others go to rmcp.
    fn cancel(&self, params: &str) -> bool {
        let Ok(params) = serde_json::from_str::<CancelledParams>(params) else {
            return false;
        };
        let key = envelope::id_key(&params.request_id);
        let token = lock(&self.in_flight).get(&key).map(|(_, t)| t.clone());
        let Some(token) = token else {
            return false;
        };
        token.cancel();
        // No answer will be written: the request leaves the budget now, as on the slow path.
        if let Ok(id) = serde_json::from_value::<RequestId>(params.request_id) {
            self.budget.cancelled(&id);
        }
        true
    }

    /// Forwards a `tools/call` the fast path can take; `false` leaves it to rmcp.
    fn forward(&mut self, agent: Peer<RoleServer>, id: &str, params: &str) -> bool {
        let Ok(params) = serde_json::from_str::<CallParams<'_>>(params) else {
            return false;
        };
        // Only arguments the rmcp path would forward: an object it can read (not too deep,
        // no lone surrogate…) or `null`. It answers the others at once; a server might not
        // answer them at all.
        if !crate::endpoint::era::is_initialize_session(&agent)
            || params.meta.is_some_and(envelope::needs_slow_path)
            || params
                .arguments
                .is_some_and(|a| a.get() != "null" && !crate::io::json::is_object(a.get()))
        {
            return false;
        }
        let Some(target) = self.hub.fast_target(&params.name) else {
            return false;
        };
        let (Ok(id_value), Ok(request_id)) = (
            serde_json::from_str::<serde_json::Value>(id),
            serde_json::from_str::<RequestId>(id),
        ) else {
            return false;
        };
        let key = envelope::id_key(&id_value);
        let cancel = self.session.child_token();
        self.calls += 1;
        lock(&self.in_flight).insert(key.clone(), (self.calls, cancel.clone()));
        self.budget.requested(request_id.clone());
        let call = FastCall {
            hub: self.hub.clone(),
            agent,
            wrapped: params.name.into_owned(),
            agent_id: id.to_owned(),
            arguments: params.arguments.map(|a| a.to_owned()),
            meta: params.meta.map(|m| m.to_owned()),
            target,
            cancel,
            shutdown: self.shutdown.clone(),
            _done: Forget {
                in_flight: self.in_flight.clone(),
                key,
                number: self.calls,
            },
        };
        // Boxed: the call's future is large, and the spawned task is moved three times before
        // it runs; a pointer moves instead (2 800 fewer instructions per call under callgrind).
        self.answer_with(request_id, Box::pin(call.run()));
        true
    }

    /// Writes the answer `reply` gives (none: the agent cancelled) to request `id`, on a
    /// task of its own.
    fn answer_with<F>(&self, id: RequestId, reply: F)
    where
        F: Future<Output = Option<Reply>> + Send + 'static,
    {
        self.answer_then(id, reply, || {});
    }

    /// [`Self::answer_with`], then `after` once the answer is written (or not to be).
    fn answer_then<F, A>(&self, id: RequestId, reply: F, after: A)
    where
        F: Future<Output = Option<Reply>> + Send + 'static,
        A: FnOnce() + Send + 'static,
    {
        let write = self.write.clone();
        let budget = self.budget.clone();
        let gone = self.gone.clone();
        let delivery = self.delivery.clone();
        tokio::spawn(async move {
            if let Some(reply) = reply.await {
                // The server's log messages sent before its answer are written first.
                tokio::select! {
                    () = delivery.settle() => {}
                    () = gone.cancelled() => return,
                }
                write_reply(&reply, id, &write, &budget, &gone).await;
            }
            after();
        });
    }

    /// Takes a Tasks line (MCP 2025-11-25 utilities/tasks): a task-augmented `tools/call`
    /// (answered by a `CreateTaskResult`, never run as an ordinary call) or `tasks/get`,
    /// `tasks/result`, `tasks/cancel`, `tasks/list`, answered by the hub ([`crate::hub::Tasks`])
    /// with the JSON the server sent. rmcp's model has no room for these (module doc of
    /// [`crate::upstream::raw`]). `false` for a 2026-07-28 session (whose tasks are the later
    /// extension's) or params that are not an object, which rmcp then answers.
    fn task(
        &mut self,
        agent: &Peer<RoleServer>,
        method: &str,
        id: &str,
        params: Option<&RawValue>,
    ) -> bool {
        if !crate::endpoint::era::is_initialize_session(agent) {
            return false;
        }
        let Ok(request_id) = serde_json::from_str::<RequestId>(id) else {
            return false;
        };
        let mut params = match params.map(|p| serde_json::from_str::<serde_json::Value>(p.get())) {
            None => serde_json::json!({}),
            Some(Ok(params @ serde_json::Value::Object(_))) => params,
            Some(_) => return false,
        };
        if method == "tools/call" {
            let catalog = self.hub.catalog();
            let budget = crate::endpoint::client_names::budget_of(agent);
            let name = params.get("name").and_then(serde_json::Value::as_str);
            if let Some(name) = name {
                let wrapped = crate::endpoint::client_names::wrapped_of(&catalog, name, budget);
                params["name"] = serde_json::Value::from(wrapped.as_ref());
            }
        }
        let (hub, tasks) = (self.hub.clone(), self.tasks.clone());
        let (method, agent_id) = (method.to_owned(), id.to_owned());
        // The server's questions during a `tasks/result` go to this agent.
        let asker = crate::upstream::askers::Asker {
            peer: agent.clone(),
            cancelled: self.session.child_token(),
            relay: None,
        };
        self.budget.requested(request_id.clone());
        // Status notifications held for a new task go out once the agent has its id.
        let released = self.tasks.clone();
        let reply = async move {
            let answer = match method.as_str() {
                "tools/call" => {
                    let caller = Some(&asker.peer);
                    Box::pin(hub.call_tool_as_task(&tasks, params, caller)).await
                }
                "tasks/list" => Box::pin(hub.list_tasks(&tasks)).await,
                _ => Box::pin(hub.task_request(&tasks, &method, params, Some(asker))).await,
            };
            Some(match answer {
                Ok(result) => Reply::with_result_json(&agent_id, &result.to_string()),
                Err(e) => Reply::error(&agent_id, &e),
            })
        };
        self.answer_then(request_id, reply, move || released.release());
        true
    }

    /// Answers a `tools/list` from the catalog's page JSON ([`crate::catalog::Catalog::page_json`])
    /// on a session whose protocol version is before 2026-07-28 (the JSON's shape), once its
    /// first listing has waited for the servers, or when they have all settled (then this one
    /// is that first listing); `false` leaves it to rmcp, which also answers every bad cursor.
    fn list(&mut self, agent: &Peer<RoleServer>, id: &str, params: Option<&RawValue>) -> bool {
        // rmcp's test (`context.protocol_version()` without a request `_meta`).
        if !crate::endpoint::era::is_initialize_session(agent) {
            return false;
        }
        let Some(start) = envelope::list_start(params) else {
            return false;
        };
        let waited = self.first_list.initialized()
            || (self.hub.is_settled() && self.first_list.set(()).is_ok());
        if !waited {
            return false;
        }
        let catalog = self.hub.catalog();
        // The page JSON has the full names: a session that sees some shortened is rmcp's.
        let budget = crate::endpoint::client_names::budget_of(agent);
        if crate::endpoint::client_names::any_shortened(&catalog, budget) {
            return false;
        }
        let Some(page) = catalog.page_json(start) else {
            return false;
        };
        let Ok(request_id) = serde_json::from_str::<RequestId>(id) else {
            return false;
        };
        let reply = Reply::with_result_json(id, page);
        let items = catalog
            .len()
            .saturating_sub(start)
            .min(crate::catalog::PAGE_SIZE);
        let cursor = (start > 0).then(|| start.to_string());
        self.hub.record_listing(
            || crate::activity::Agent::of(agent),
            "fast",
            items,
            cursor.as_deref(),
        );
        self.budget.requested(request_id.clone());
        self.answer_with(request_id, std::future::ready(Some(reply)));
        true
    }
}

impl<W> Tap for Relay<W>
where
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// Takes `line` (one complete line from the agent) when it is the fast path's, see the
    /// module doc of [`super`].
    fn take(&mut self, line: &[u8]) -> bool {
        let Some(agent) = self.agent.get().cloned() else {
            return false;
        };
        let Ok(message) = serde_json::from_slice::<Incoming<'_>>(line) else {
            return false;
        };
        match (message.method.as_deref(), message.id, message.params) {
            (Some("tools/call"), Some(id), Some(params))
                if envelope::plain_id(id) && envelope::is_task_augmented(params) =>
            {
                self.task(&agent, "tools/call", id.get(), Some(params))
            }
            (
                Some(method @ ("tasks/get" | "tasks/result" | "tasks/cancel" | "tasks/list")),
                Some(id),
                params,
            ) if envelope::plain_id(id) => self.task(&agent, method, id.get(), params),
            _ if !self.fast => false,
            (Some("notifications/cancelled"), None, Some(params)) => self.cancel(params.get()),
            (Some("tools/call"), Some(id), Some(params)) if envelope::plain_id(id) => {
                let taken = self.forward(agent, id.get(), params.get());
                if taken {
                    self.hub.count_call();
                }
                taken
            }
            (Some("tools/list"), Some(id), params) if envelope::plain_id(id) => {
                self.list(&agent, id.get(), params)
            }
            _ => false,
        }
    }
}

/// Writes `reply`, the answer to request `id`, counting its bytes in `budget` until written
/// (which also ends the request there). A failed write means the agent is gone; once it is,
/// nothing is written.
async fn write_reply<W>(
    reply: &Reply,
    id: RequestId,
    write: &SharedWrite<W>,
    budget: &Arc<Budget>,
    gone: &CancellationToken,
) where
    W: AsyncWrite + Send + Unpin,
{
    let ticket = budget.queue(Some(id), reply.frame_len());
    if gone.is_cancelled() {
        return;
    }
    let written = tokio::select! {
        biased;
        r = async {
            let mut w = write.lock().await;
            reply.write_to(&mut *w).await
        } => r,
        () = gone.cancelled() => return,
    };
    match written {
        Ok(()) => ticket.written(),
        Err(e) => {
            tracing::debug!(error = %e, "could not answer a call");
            gone.cancel();
        }
    }
}
