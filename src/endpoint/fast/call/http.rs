//! [`FastCall::run_http`]: the call on a streamable HTTP server's fast lane
//! ([`crate::upstream::http_lane`]): one POST from this task, its answer read here, then the
//! same answer, judgement and retry as on a stdio lane (the parent module's diagram).

use super::{CANCELLED_BY_CLIENT, FastCall, SHUTTING_DOWN, TIMEOUT_REASON, enter_askers};
use crate::endpoint::fast::envelope::Reply;
use crate::hub::record::CallRecord;
use crate::upstream::call::CallError;
use crate::upstream::http_lane::HttpLane;

impl FastCall {
    /// [`FastCall::run`] on `lane`.
    pub(super) async fn run_http(self, lane: HttpLane) -> Option<Reply> {
        let Some(ticket) = lane.open() else {
            // Nothing was sent: the slow path takes the call whole, and records it.
            return Box::pin(self.slow(None, CallRecord::default())).await;
        };
        let (record, frame) = self.started(&ticket.id_json());
        let asking = enter_askers(&self.agent, &self.cancel, &self.target);
        // The server's requests on this call's answer stream name it ([`crate::upstream::askers`]).
        asking.set_request_id(ticket.id());
        let timeout = self.target.forward.timeout();
        let answer = tokio::select! {
            biased;
            () = self.shutdown.cancelled() => {
                ticket.cancel(SHUTTING_DOWN);
                Err(CallError::ShuttingDown)
            }
            () = self.cancel.cancelled() => {
                ticket.cancel(CANCELLED_BY_CLIENT);
                return None;
            }
            () = tokio::time::sleep(timeout) => {
                ticket.cancel(TIMEOUT_REASON);
                Err(CallError::Timeout { timeout })
            }
            answer = ticket.call(&frame) => answer,
        };
        drop(frame);
        let e = match answer.and_then(|line| self.answer(line)) {
            Ok(reply) => {
                record.answered_raw(|| reply.result_json());
                return Some(reply);
            }
            Err(e) => e,
        };
        self.judged(e, record).await
    }
}
