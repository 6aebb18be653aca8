//! [`FastCall`]: one `tools/call` forwarded on a fast lane, answered exactly once. Its
//! deadline, its retry and its error texts are the call's [`Forward`] (`hub/forward.rs`), the
//! same state machine [`Hub::call`] drives; this file only moves the bytes.
//!
//! ```text
//! open a ticket ──lane ended──▶ slow path (Hub::call), nothing was sent
//!      ▼
//! write the request ──write failed──▶ judged: not delivered, so resent on a new session
//!      │            └──toolTimeout before its first byte (server not reading)──▶ isError
//!      │                 "… before the request could be sent …": it did not run (`stdio.rs`)
//!      ▼
//! wait ─┬─ answer: result ──plain──▶ spliced through untouched
//!       │                 └─other──▶ decoded (URIs another server shares rewritten,
//!       │                            `crate::hub::to_agent`) and judged as the slow path does
//!       │          error ─────────▶ judged: isError "server "x" returned an error: … (JSON-RPC error n)"
//!       ├─ toolTimeout ───────────▶ notifications/cancelled upstream; judged: isError "… timed out after n s"
//!       ├─ agent cancelled / left ▶ notifications/cancelled upstream; no answer (as rmcp does)
//!       ├─ companion shutting down▶ notifications/cancelled upstream; isError "… shutting down"
//!       └─ session lost or closed ▶ judged: readOnlyHint/idempotentHint → resent on a new session
//!                                  (Hub::resend); otherwise isError "…; the call may or may not have run"
//! ```

use rmcp::model::{CallToolResult, JsonObject, ProtocolVersion};
use rmcp::{Peer, RoleServer};
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::InFlight;
use super::envelope::{self, Answer, Reply};
use crate::activity::Agent;
use crate::catalog::Target;
use crate::hub::record::{self, CallRecord};
use crate::hub::{Attempted, FastTarget, Forward, Hub, Lane, Verdict};
use crate::upstream::askers::{Asker, AskerGuard};
use crate::upstream::call::{self as upstream_call, CallError};

mod http;
mod stdio;

/// The `reason` of the `notifications/cancelled` sent upstream when an agent cancels.
const CANCELLED_BY_CLIENT: &str = "cancelled by the client";
/// The `reason` sent upstream when `toolTimeout` ends a call (rmcp's own words).
const TIMEOUT_REASON: &str = "request timeout";
/// The `reason` sent upstream when the companion shuts down.
const SHUTTING_DOWN: &str = "the companion is shutting down";

/// Removes a call from its connection's in-flight table when the call ends.
pub struct Forget {
    pub(super) in_flight: InFlight,
    pub(super) key: String,
    pub(super) number: u64,
}

impl Drop for Forget {
    fn drop(&mut self) {
        let mut in_flight = super::lock(&self.in_flight);
        if in_flight
            .get(&self.key)
            .is_some_and(|(n, _)| *n == self.number)
        {
            in_flight.remove(&self.key);
        }
    }
}

/// One forwarded call (built by [`super::Relay`]).
pub struct FastCall {
    pub(super) hub: Hub,
    pub(super) agent: Peer<RoleServer>,
    /// The wrapped tool name the agent called.
    pub(super) wrapped: String,
    /// The agent's request id, as sent (a JSON string or integer).
    pub(super) agent_id: String,
    pub(super) arguments: Option<Box<RawValue>>,
    /// The request's `_meta` (an object without `progressToken`), forwarded as sent.
    pub(super) meta: Option<Box<RawValue>>,
    pub(super) target: FastTarget,
    /// Fires when the agent cancels this call or leaves.
    pub(super) cancel: CancellationToken,
    pub(super) shutdown: CancellationToken,
    /// Held for the call's life: takes it out of the in-flight table when the call ends.
    pub(super) _done: Forget,
}

impl FastCall {
    /// The call's activity record (routed, sent once) and the upstream `tools/call` line
    /// under request id `id_json`, for either lane.
    fn started(&self, id_json: &str) -> (CallRecord, Vec<u8>) {
        let mut record = CallRecord::start(
            &self.hub,
            "fast",
            || Agent::of(&self.agent),
            &self.wrapped,
            || record::raw_arguments(self.arguments.as_deref()),
        );
        record.routed(&self.target.server);
        if let Some(base) = &self.target.wrapped_as {
            record.wrapped_as(base);
        }
        record.attempted(1);
        let frame = envelope::request_frame(
            id_json,
            &self.target.raw_name,
            self.target
                .forward
                .raw_arguments(self.arguments.as_deref().map(RawValue::get)),
            self.meta.as_deref().map(RawValue::get),
        );
        (record, frame)
    }

    /// Forwards the call and returns its one answer, or `None` when the agent cancelled it
    /// or left (see the module doc).
    pub async fn run(self) -> Option<Reply> {
        match &self.target.lane {
            Lane::Stdio(lane) => {
                let lane = lane.clone();
                self.run_stdio(lane).await
            }
            Lane::Http(lane) => {
                let lane = lane.clone();
                self.run_http(lane).await
            }
        }
    }

    /// The answer to an attempt that failed with `e`, as the call's [`Forward`] judges it:
    /// the agent's `isError` answer, or the call resent the slow way on a new session.
    async fn judged(mut self, e: CallError, record: CallRecord) -> Option<Reply> {
        let ending = self.target.ending.as_ref();
        let e = crate::upstream::ending::explain(e, ending, self.target.handle.log()).await;
        match self.target.forward.judge(&e) {
            Verdict::Fail(result) => {
                record.failed(&e, &result);
                Some(self.reply(&result))
            }
            Verdict::Retry => Box::pin(self.slow(Some(e), record)).await,
        }
    }

    /// The agent's answer from the server's answer `line`, or why it is not a result.
    fn answer(&self, line: Vec<u8>) -> Result<Reply, CallError> {
        let parsed = serde_json::from_slice::<Answer<'_>>(&line);
        let e = match parsed {
            Ok(Answer {
                result: Some(_),
                error: Some(_),
                ..
            }) => CallError::Unexpected {
                what: "an answer with both result and error".into(),
            },
            Ok(Answer {
                method: Some(_), ..
            }) => CallError::Unexpected {
                what: "an answer with a method".into(),
            },
            Ok(Answer {
                result: Some(result),
                ..
            }) => {
                let native = self.hub.catalog();
                let native = native.native();
                let rewritten =
                    native.rewrites(&self.target.server) && envelope::may_name_a_uri(result.get());
                if !rewritten
                    && envelope::is_plain_result(result)
                    && let Some(range) = envelope::range_in(&line, result)
                {
                    return Ok(Reply::spliced(&self.agent_id, line, range));
                }
                match upstream_call::tool_result_from_json(result.get()) {
                    Ok(result) => {
                        let result = crate::hub::forward::masked(result);
                        let result = crate::hub::to_agent(native, &self.target.server, result);
                        return Ok(self.reply(&result));
                    }
                    Err(e) => e,
                }
            }
            Ok(Answer {
                error: Some(error), ..
            }) => CallError::Rpc {
                code: error.code,
                message: crate::net::scrub_known(&error.message),
                data: error.data,
            },
            Ok(Answer { .. }) => CallError::Unexpected {
                what: "an answer with neither result nor error".into(),
            },
            Err(e) => CallError::Unexpected {
                what: format!("an answer that is not JSON-RPC: {e}"),
            },
        };
        Err(e)
    }

    /// The agent's answer to a call that ended with `e` and cannot go on.
    fn failed(&self, e: &CallError, record: CallRecord) -> Reply {
        let result = self.target.forward.fail(e);
        record.failed(e, &result);
        self.reply(&result)
    }

    /// The agent's answer `result` (or the JSON-RPC error it stands for,
    /// [`crate::hub::passed_error`]), in its protocol version's shape: before 2026-07-28 without
    /// `resultType: "complete"`, as rmcp's own session strips it
    /// (`ServerResult::strip_result_type_for_legacy_peer`).
    fn reply(&self, result: &CallToolResult) -> Reply {
        if let Some(error) = crate::hub::passed_error(result) {
            return Reply::error(&self.agent_id, &error);
        }
        let legacy = self.agent.peer_info().is_some_and(|info| {
            info.protocol_version.as_str() < ProtocolVersion::V_2026_07_28.as_str()
        });
        if legacy && result.result_type.as_ref().is_some_and(|t| t.is_complete()) {
            let mut result = result.clone();
            result.result_type = None;
            return Reply::result(&self.agent_id, &result);
        }
        Reply::result(&self.agent_id, result)
    }

    /// The call the slow way, still cancelled by the agent and by shutdown: from the start
    /// ([`Hub::call`]: its routing, reconnect and retry rules) when `retry` is `None`, else
    /// resent after the fast attempt failed with `retry` ([`Hub::resend`], the call's retry
    /// spent, `record` the call's). Callers box it: its future is many times the size of the rest of
    /// [`Self::run`], and tokio copies a spawned task's whole future when it spawns and ends
    /// it (a profile of 64 calls in flight showed those copies at 8 % of the companion's CPU
    /// before the box).
    async fn slow(self, retry: Option<CallError>, record: CallRecord) -> Option<Reply> {
        let arguments = match self
            .arguments
            .as_deref()
            .map(|a| serde_json::from_str::<Option<JsonObject>>(a.get()))
        {
            None => None,
            Some(Ok(arguments)) => arguments,
            Some(Err(e)) => {
                let e = CallError::Arguments {
                    reason: e.to_string(),
                };
                return Some(self.failed(&e, record));
            }
        };
        let hub = self.hub.clone();
        let result = async {
            match &retry {
                None => {
                    let agent = || Agent::of(&self.agent);
                    let result = hub.call_as(&self.wrapped, arguments, None, agent).await;
                    Attempted {
                        result,
                        failure: None,
                        attempts: 0,
                    }
                }
                Some(e) => {
                    let target = Target::Tool {
                        name: self.target.raw_name.clone(),
                    };
                    let forward: Forward = self.target.forward.clone();
                    hub.resend(
                        &self.wrapped,
                        &target,
                        &self.target.handle,
                        self.target.generation,
                        (forward, e),
                        arguments,
                    )
                    .await
                }
            }
        };
        tokio::select! {
            biased;
            () = self.shutdown.cancelled() => Some(self.failed(&CallError::ShuttingDown, record)),
            () = self.cancel.cancelled() => None,
            attempted = result => {
                let mut record = record;
                record.attempted(attempted.attempts);
                record.answered(&attempted.result, attempted.failure.as_ref());
                Some(self.reply(&attempted.result))
            }
        }
    }
}

/// Enters the call in its session's askers ([`crate::upstream::askers`]), so requests the
/// server sends during the call (elicitation, sampling, roots) reach this agent; the guard is
/// held until the call ends.
fn enter_askers(
    agent: &Peer<RoleServer>,
    cancel: &CancellationToken,
    target: &FastTarget,
) -> AskerGuard {
    // Only agents of the `initialize` era take the fast path: they are sent requests.
    target.askers.enter(Asker {
        peer: agent.clone(),
        cancelled: cancel.clone(),
        relay: None,
    })
}
