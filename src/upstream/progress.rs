//! Upstream `notifications/progress`, delivered to the agent in wire order and always before the
//! response of the call they belong to (MCP 2025-11-25, basic/utilities/progress: "progress
//! notifications MUST only reference tokens that … are associated with an in-progress
//! operation").
//!
//! The problem: rmcp's service loop hands every incoming notification to a freshly spawned task
//! and every response straight to the waiting caller. A progress notification that arrived
//! *before* a call's response could therefore be forwarded *after* it (the call task returned
//! first), and two progress notifications could overtake each other.
//!
//! The strategy: [`ProgressTap`] wraps the upstream transport, below rmcp's loop.
//!
//! 1. A call that wants progress attaches a [`ProgressSink`] to its request as an rmcp
//!    extension (never serialised). When rmcp hands that request to the transport, the tap maps
//!    the request's `progressToken` (chosen by rmcp) to the sink — before the request is
//!    written, so no progress for it can arrive unmapped. Every other request goes out
//!    without rmcp's token ([`super::sent_token`]).
//! 2. When a progress notification arrives, the tap pushes it into the mapped sink right away,
//!    in receive order, and does not pass it on to rmcp. The response to the same request can
//!    only be received after that.
//! 3. Log messages (`notifications/message`) are taken here too, in the same order, and
//!    queued for the agents ([`super::notice`]) before the next message is read.
//! 4. The call task ([`ProgressFeed`]) forwards the sink's notifications to the agent one at a
//!    time, waiting until each is written (never inside a `select!` branch future, where the
//!    arriving response would cancel a forward half-way); once the response is in, it forwards
//!    whatever is still queued, and only then returns the response.
//!
//! So everything the server reported before its response reaches the agent's socket before the
//! response does. A burst the agent reads arrives whole: the sink is bounded by bytes, not by
//! a count, and holds [`SINK_BYTES`] of notifications not yet written to the agent (thousands of
//! them). Beyond that (a server flooding progress to an agent that is not reading) further ones
//! are dropped, counted, and logged once per call, which only thins progress. Progress for a
//! token nobody mapped (e.g. during `tools/list`) is dropped.
//!
//! The tap also takes `notifications/tasks/status` (MCP 2025-11-25 utilities/tasks) off the
//! wire and passes it to the agents' notices in receive order
//! ([`ProgressRoutes::with_task_status`]): a server's status reports of one task must not
//! overtake each other either.

mod tap;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;

pub use tap::{ProgressRoutes, ProgressTap};

/// Bytes of progress notifications (their JSON size, about 100 bytes each) one call may have
/// waiting to be written to its agent (1 MiB) before further ones are dropped.
pub const SINK_BYTES: usize = 1024 * 1024;

/// One queued notification and the bytes it counts for.
type Queued = (ProgressNotificationParam, usize);

/// The sending end of one call's queue.
#[derive(Clone, Debug)]
struct SinkTx {
    tx: mpsc::UnboundedSender<Queued>,
    /// Bytes queued and not yet taken by the feed; shared with it.
    held: Arc<AtomicUsize>,
    /// Notifications dropped because the queue was full.
    dropped: Arc<AtomicUsize>,
}

impl SinkTx {
    fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

/// What `progress` counts for in a queue: its JSON size, estimated without encoding it.
fn weight(progress: &ProgressNotificationParam) -> usize {
    let token = match &progress.progress_token.0 {
        rmcp::model::NumberOrString::String(s) => s.len(),
        rmcp::model::NumberOrString::Number(_) => 20,
    };
    // The server's text of the notification, when kept (`super::exact`), counts too.
    let kept = progress
        .meta
        .as_ref()
        .and_then(|m| m.get(super::exact::EXACT_KEY))
        .and_then(serde_json::Value::as_str)
        .map_or(0, str::len);
    96 + token + progress.message.as_ref().map_or(0, String::len) + kept
}

/// The marker a call attaches to its upstream request (as an rmcp extension) to receive that
/// request's progress notifications.
#[derive(Clone, Debug)]
pub struct ProgressSink(SinkTx);

/// The receiving end of a [`ProgressSink`]: forwards one call's progress to its agent.
#[derive(Debug)]
pub struct ProgressFeed {
    queue: SinkRx,
    agent: Peer<RoleServer>,
    token: ProgressToken,
}

/// The receiving end of one call's queue.
#[derive(Debug)]
struct SinkRx {
    rx: mpsc::UnboundedReceiver<Queued>,
    held: Arc<AtomicUsize>,
    dropped: Arc<AtomicUsize>,
}

impl SinkRx {
    async fn recv(&mut self) -> Option<ProgressNotificationParam> {
        let (progress, bytes) = self.rx.recv().await?;
        self.held.fetch_sub(bytes, Ordering::AcqRel);
        Some(progress)
    }

    fn try_recv(&mut self) -> Option<ProgressNotificationParam> {
        let (progress, bytes) = self.rx.try_recv().ok()?;
        self.held.fetch_sub(bytes, Ordering::AcqRel);
        Some(progress)
    }
}

impl Drop for SinkRx {
    fn drop(&mut self) {
        let dropped = self.dropped.load(Ordering::Relaxed);
        if dropped > 0 {
            tracing::info!(
                dropped,
                "progress notifications of a call were dropped: its agent did not read them"
            );
        }
    }
}

/// A sink to attach to an upstream request and the feed that forwards what arrives in it to
/// `agent` under the agent's own `token`.
pub fn channel(agent: Peer<RoleServer>, token: ProgressToken) -> (ProgressSink, ProgressFeed) {
    let (sink, queue) = sink_pair();
    (
        sink,
        ProgressFeed {
            queue,
            agent,
            token,
        },
    )
}

fn sink_pair() -> (ProgressSink, SinkRx) {
    let (tx, rx) = mpsc::unbounded_channel();
    let held = Arc::new(AtomicUsize::new(0));
    let dropped = Arc::new(AtomicUsize::new(0));
    (
        ProgressSink(SinkTx {
            tx,
            held: held.clone(),
            dropped: dropped.clone(),
        }),
        SinkRx { rx, held, dropped },
    )
}

impl ProgressFeed {
    /// The next upstream progress notification of this call; never returns if no more can
    /// come. Cancel-safe (nothing is lost when the future is dropped), unlike forwarding, so
    /// callers `select!` on this and [`forward`](Self::forward) outside the `select!`.
    pub async fn next(&mut self) -> ProgressNotificationParam {
        match self.queue.recv().await {
            Some(progress) => progress,
            None => std::future::pending().await,
        }
    }

    /// Forwards every notification already queued, in order. Call it after the response
    /// arrived and before answering the agent.
    pub async fn flush(&mut self) {
        while let Some(progress) = self.queue.try_recv() {
            self.forward(progress).await;
        }
    }

    /// Forwards `progress` to the agent under its own token; returns once the agent's
    /// transport has written it. Dropping this future may lose the notification.
    pub async fn forward(&self, mut progress: ProgressNotificationParam) {
        progress.progress_token = self.token.clone();
        if let Err(e) = self.agent.notify_progress(progress).await {
            tracing::debug!(error = %e, "could not forward progress to the agent");
        }
    }
}
