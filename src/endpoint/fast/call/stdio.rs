//! [`FastCall::run_stdio`]: the call on a stdio server's fast lane ([`crate::upstream::lane`]).
//! The request's write and the wait for its answer share one deadline, the ticket's
//! `toolTimeout`: a server that stops reading its input fills the pipe, and the write then
//! waits as long as the server does.
//!
//! | the deadline (or the agent's cancel, or shutdown) comes | the agent gets | upstream |
//! |---|---|---|
//! | before a byte of the request was written | `isError` "… before the request could be sent … did not run" (cancel: nothing) | nothing, ever |
//! | part-way through the write | `isError` "… timed out after n s" | the rest of the request, then `notifications/cancelled` |
//! | after the write | `isError` "… timed out after n s" | `notifications/cancelled` |
//!
//! `notifications/cancelled` is written after the request by a spawned task, so the answer
//! never waits for the server to read it.

use super::{CANCELLED_BY_CLIENT, FastCall, SHUTTING_DOWN, TIMEOUT_REASON, enter_askers};
use crate::endpoint::fast::envelope::Reply;
use crate::hub::record::CallRecord;
use crate::upstream::call::CallError;
use crate::upstream::lane::{FastLane, Interrupted, LaneEnd, NoAnswer, Unsent};

/// How the wait for the server's answer ended.
enum Waited {
    Answer(Vec<u8>),
    Lost(LaneEnd),
    Timeout,
    Left(Left),
}

/// Why the agent's side gave up the call.
enum Left {
    Cancelled,
    ShuttingDown,
}

impl FastCall {
    /// [`FastCall::run`] on `lane`.
    pub(super) async fn run_stdio(self, lane: FastLane) -> Option<Reply> {
        let Ok(mut ticket) = lane.open(self.target.forward.timeout()) else {
            // Nothing was sent: the slow path takes the call whole, and records it.
            return Box::pin(self.slow(None, CallRecord::default())).await;
        };
        let (record, frame) = self.started(&ticket.id_json());
        let _asking = enter_askers(&self.agent, &self.cancel, &self.target);
        let left = async {
            tokio::select! {
                biased;
                () = self.shutdown.cancelled() => Left::ShuttingDown,
                () = self.cancel.cancelled() => Left::Cancelled,
            }
        };
        let sent = ticket.send_until(&frame, left).await;
        drop(frame);
        let waited = match sent {
            Ok(()) => tokio::select! {
                biased;
                () = self.shutdown.cancelled() => Waited::Left(Left::ShuttingDown),
                () = self.cancel.cancelled() => Waited::Left(Left::Cancelled),
                // The lane keeps the toolTimeout deadline (no timer per call, see its `waiting`).
                answer = ticket.answer() => match answer {
                    Ok(line) => Waited::Answer(line),
                    Err(NoAnswer::TimedOut) => Waited::Timeout,
                    Err(NoAnswer::Ended(end)) => Waited::Lost(end),
                },
            },
            Err(Unsent::Failed(e)) => {
                drop(ticket);
                let e = CallError::NotDelivered {
                    reason: e.to_string(),
                };
                return self.judged(e, record).await;
            }
            Err(Unsent::Stopped { begun: false, why }) => {
                // The server never gets a byte of it: nothing to cancel upstream.
                drop(ticket);
                let e = match why {
                    Interrupted::By(Left::Cancelled) => return None,
                    Interrupted::By(Left::ShuttingDown) => CallError::ShuttingDown,
                    Interrupted::NoAnswer(NoAnswer::TimedOut) => CallError::NotSent {
                        timeout: self.target.forward.timeout(),
                    },
                    Interrupted::NoAnswer(NoAnswer::Ended(LaneEnd::Lost(reason))) => {
                        CallError::NotDelivered { reason }
                    }
                    Interrupted::NoAnswer(NoAnswer::Ended(LaneEnd::Closed)) => {
                        CallError::NotDelivered {
                            reason: "the session was closed".into(),
                        }
                    }
                };
                return self.judged(e, record).await;
            }
            // Part of it was written and the rest will be: the server gets it whole.
            Err(Unsent::Stopped { begun: true, why }) => match why {
                Interrupted::By(left) => Waited::Left(left),
                Interrupted::NoAnswer(NoAnswer::TimedOut) => Waited::Timeout,
                Interrupted::NoAnswer(NoAnswer::Ended(end)) => Waited::Lost(end),
            },
        };
        let e = match waited {
            Waited::Answer(line) => {
                drop(ticket);
                match self.answer(line) {
                    Ok(reply) => {
                        record.answered_raw(|| reply.result_json());
                        return Some(reply);
                    }
                    Err(e) => e,
                }
            }
            Waited::Left(Left::Cancelled) => {
                ticket.cancel(CANCELLED_BY_CLIENT);
                return None;
            }
            Waited::Left(Left::ShuttingDown) => {
                ticket.cancel(SHUTTING_DOWN);
                CallError::ShuttingDown
            }
            Waited::Timeout => {
                ticket.cancel(TIMEOUT_REASON);
                CallError::Timeout {
                    timeout: self.target.forward.timeout(),
                }
            }
            Waited::Lost(end) => {
                drop(ticket);
                match end {
                    LaneEnd::Closed => CallError::SessionClosed,
                    LaneEnd::Lost(reason) => CallError::Transport { reason },
                }
            }
        };
        self.judged(e, record).await
    }
}
