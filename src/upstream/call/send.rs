//! One round of a call: the request sent with the agent's `_meta` and exact arguments, progress
//! forwarded, the deadline ([`Clock`]) moved by progress, and `notifications/cancelled` sent
//! upstream when the agent cancels or the round times out.

use std::time::Duration;

use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientRequest, GetExtensions,
    ProgressNotificationParam, RequestId, ServerResult,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use rmcp::{Peer, RoleClient};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::error::classify;
use super::{CallError, Downstream, Upstream};
use crate::upstream::askers::Asker;
use crate::upstream::progress::{self, ProgressFeed};

/// When an attempt times out: `idle` after the later of its start and its last progress
/// notification (as the SDKs' `resetTimeoutOnProgress`), and in any case `max` after its
/// start. The hub decides both (`hub::forward`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    /// `toolTimeout`: how long the server may stay silent.
    pub idle: Duration,
    /// The hard maximum of one attempt, progress or not.
    pub max: Duration,
}

impl Clock {
    /// The deadline of an attempt that started at `started` and last reported progress at
    /// `last_progress` (its start when it reported none).
    pub fn due(&self, started: Instant, last_progress: Instant) -> Instant {
        (last_progress + self.idle).min(started + self.max)
    }

    /// The error of an attempt that reached [`Self::due`] at `now`.
    fn timed_out(&self, started: Instant, now: Instant) -> CallError {
        let timeout = if now >= started + self.max {
            self.max
        } else {
            self.idle
        };
        CallError::Timeout { timeout }
    }
}

/// One round of [`call`](super::call()): sends `request` and waits for its answer.
pub(super) async fn send(
    session: Upstream<'_>,
    request: ClientRequest,
    clock: Clock,
    downstream: Option<&Downstream>,
) -> Result<ServerResult, CallError> {
    let Upstream {
        peer,
        askers,
        stdin,
    } = session;
    // The deadline is ours (below), not rmcp's: progress moves it.
    let mut options = PeerRequestOptions::no_options();
    options.meta = downstream
        .and_then(|d| d.meta.clone())
        .map(rmcp::model::RequestMetaObject::from);
    let started = Instant::now();
    let mut last_progress = started;

    let mut request = request;
    if let (Some(arguments), ClientRequest::CallToolRequest(call)) =
        (downstream.and_then(|d| d.arguments.as_ref()), &mut request)
        && let Some(exact) =
            crate::upstream::exact::same_arguments(arguments, call.params.arguments.as_ref())
    {
        call.extensions.insert(exact);
    }
    let mut feed = downstream.and_then(|d| {
        let token = d.progress_token.clone()?;
        let (sink, feed) = progress::channel(d.peer.clone(), token);
        request.extensions_mut().insert(sink);
        Some(feed)
    });
    // Entered before the request goes out: the server may ask before we see the id.
    let asking = downstream.map(|d| {
        askers.enter(Asker {
            peer: d.peer.clone(),
            cancelled: d.cancelled.clone(),
            relay: d.relay.clone(),
        })
    });
    // An error here means the request was never handed to the transport.
    let handle = peer
        .send_request_with_option(request, options)
        .await
        .map_err(|e| match e {
            ServiceError::TransportClosed => CallError::NotDelivered {
                reason: "the session was already closed".to_owned(),
            },
            other => classify(other),
        })?;
    if let Some(asking) = &asking {
        asking.set_request_id(handle.id.clone());
    }

    let mut guard = CancelOnDrop {
        peer: peer.clone(),
        id: Some(handle.id.clone()),
        reason: "cancelled by the client",
    };
    let never = CancellationToken::new();
    let cancelled = downstream.map(|d| &d.cancelled).unwrap_or(&never);
    let id = handle.id.clone();
    let response = handle.await_response();
    tokio::pin!(response);
    let answer = loop {
        let due = clock.due(started, last_progress);
        tokio::select! {
            biased;
            () = cancelled.cancelled() => {
                // A request never written needs no notifications/cancelled.
                if withdrawn(stdin, &id).await {
                    guard.id = None;
                }
                // The guard sends notifications/cancelled upstream as it drops.
                if downstream.is_some_and(|d| d.shutdown.is_cancelled()) {
                    guard.reason = "the companion is shutting down";
                    return Err(CallError::ShuttingDown);
                }
                return Err(CallError::Cancelled);
            }
            () = tokio::time::sleep_until(due) => {
                let e = clock.timed_out(started, Instant::now());
                if withdrawn(stdin, &id).await {
                    // The server never got it: nothing to cancel, and it did not run.
                    guard.id = None;
                    let CallError::Timeout { timeout } = e else { return Err(e) };
                    return Err(CallError::NotSent { timeout });
                }
                // The guard sends notifications/cancelled upstream as it drops.
                guard.reason = "request timeout";
                return Err(e);
            }
            progress = next_progress(&mut feed) => {
                last_progress = Instant::now();
                // Forwarded here, not in the branch future: a response arriving meanwhile must
                // not cancel a forward half-way.
                if let Some(feed) = &feed {
                    feed.forward(progress).await;
                }
            }
            answer = &mut response => break answer,
        }
    };
    // Progress the server sent before its response is queued by now (see `progress`); it
    // must reach the agent before the response does.
    if let Some(feed) = &mut feed {
        feed.flush().await;
    }
    guard.id = None;
    answer.map_err(|e| match e {
        ServiceError::Timeout { timeout } => CallError::Timeout { timeout },
        other => classify(other),
    })
}

/// Whether request `id` still waited to be written to a stdio server's stdin and is now
/// withdrawn: the server never gets it ([`crate::upstream::lane::FastLane::withdraw`]).
async fn withdrawn(stdin: Option<&crate::upstream::lane::FastLane>, id: &RequestId) -> bool {
    match stdin {
        Some(lane) => lane.withdraw(id).await,
        None => false,
    }
}

/// The next progress notification of this call, or never when the agent asked for none.
async fn next_progress(feed: &mut Option<ProgressFeed>) -> ProgressNotificationParam {
    match feed {
        Some(feed) => feed.next().await,
        None => std::future::pending().await,
    }
}
/// Sends `notifications/cancelled` for a request whose caller went away before the answer.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
    /// The `reason` of the notification.
    reason: &'static str,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        let reason = self.reason;
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        rt.spawn(async move {
            let note = CancelledNotification::new(CancelledNotificationParam::new(
                Some(id),
                Some(reason.into()),
            ));
            let _ = peer.send_notification(note.into()).await;
        });
    }
}
