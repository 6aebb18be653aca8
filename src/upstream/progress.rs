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

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientJsonRpcMessage, GetExtensions, GetMeta, JsonRpcMessage, JsonRpcNotification,
    JsonRpcRequest, ProgressNotificationParam, ProgressToken, ServerJsonRpcMessage,
    ServerNotification,
};
use rmcp::transport::Transport;
use rmcp::{Peer, RoleClient, RoleServer};
use tokio::sync::mpsc;

use super::notice::ServerLogs;

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

type Routes = HashMap<ProgressToken, SinkTx>;

/// The progress routes of one upstream session: upstream `progressToken` → the call that asked.
///
/// Shared by the session's [`ProgressTap`] (which fills and reads it) and nobody else; calls
/// reach it only through the [`ProgressSink`] they attach to their request.
#[derive(Clone, Debug, Default)]
pub struct ProgressRoutes {
    routes: Arc<Mutex<Routes>>,
    /// Where the session's `notifications/tasks/status` go (its server's name with them),
    /// for the same reason as progress: rmcp would spawn a task for each, and two of them
    /// could overtake each other. Without it they are dropped.
    task_status: Option<(super::notice::Notices, Arc<str>)>,
}

impl ProgressRoutes {
    /// These routes, also passing server `server`'s `notifications/tasks/status` (MCP
    /// 2025-11-25 utilities/tasks) to `notices` in the order they arrive.
    #[must_use]
    pub fn with_task_status(mut self, notices: super::notice::Notices, server: Arc<str>) -> Self {
        self.task_status = Some((notices, server));
        self
    }

    /// Passes a task status notification's `params` on (module doc of [`super::handler`]).
    fn task_status(&self, params: Option<serde_json::Value>) {
        if let (Some((notices, server)), Some(params @ serde_json::Value::Object(_))) =
            (&self.task_status, params)
        {
            notices.send(super::notice::Notice::TaskStatus {
                server: server.clone(),
                params,
            });
        }
    }

    /// Wraps an upstream transport so that progress flows through these routes and log
    /// messages to `logs`, both in the order the server sent them.
    pub fn tap<T>(&self, inner: T, logs: ServerLogs) -> ProgressTap<T> {
        ProgressTap {
            inner,
            routes: self.clone(),
            logs,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Routes> {
        // Every critical section is a single insert, lookup or sweep: a poisoned map is still
        // consistent.
        self.routes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Maps `token` to `sink`; forgets routes whose call has ended.
    fn insert(&self, token: ProgressToken, sink: SinkTx) {
        let mut routes = self.lock();
        routes.retain(|_, s| !s.is_closed());
        routes.insert(token, sink);
    }

    /// Queues `progress` for its call, if one is mapped and still waiting.
    fn deliver(&self, progress: ProgressNotificationParam) {
        let mut routes = self.lock();
        let Some(sink) = routes.get(&progress.progress_token) else {
            tracing::trace!(token = %progress.progress_token.0, "progress for no waiting call dropped");
            return;
        };
        let bytes = weight(&progress);
        if sink.held.load(Ordering::Acquire) + bytes > SINK_BYTES {
            if sink.dropped.fetch_add(1, Ordering::Relaxed) == 0 {
                tracing::warn!(
                    token = %progress.progress_token.0,
                    "the agent is not reading this call's progress; dropping further progress notifications of the call ({} KiB waiting)",
                    SINK_BYTES / 1024
                );
            }
            return;
        }
        sink.held.fetch_add(bytes, Ordering::AcqRel);
        if let Err(mpsc::error::SendError((p, _))) = sink.tx.send((progress, bytes)) {
            routes.remove(&p.progress_token);
        }
    }

    /// How many routes are held (for tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
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

/// An upstream transport with progress routing in front of rmcp's service loop (see the module
/// doc).
#[derive(Debug)]
pub struct ProgressTap<T> {
    inner: T,
    routes: ProgressRoutes,
    logs: ServerLogs,
}

impl<T> Transport<RoleClient> for ProgressTap<T>
where
    T: Transport<RoleClient>,
{
    type Error = T::Error;

    fn name() -> std::borrow::Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        mut item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(JsonRpcRequest { request, .. }) = &mut item {
            match request.extensions().get::<ProgressSink>() {
                Some(ProgressSink(sink)) => {
                    if let Some(token) = request.get_meta().get_progress_token() {
                        self.routes.insert(token, sink.clone());
                    }
                }
                // Nobody waits for progress: the server gets the request as its sender sent it.
                None => super::sent_token::as_sent(request),
            }
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            let message = self.inner.receive().await?;
            match message {
                JsonRpcMessage::Notification(JsonRpcNotification {
                    notification: ServerNotification::ProgressNotification(progress),
                    ..
                }) => self.routes.deliver(progress.params),
                JsonRpcMessage::Notification(JsonRpcNotification {
                    notification: ServerNotification::CustomNotification(note),
                    ..
                }) if note.method == super::handler::TASK_STATUS => {
                    self.routes.task_status(note.params);
                }
                // Here rather than in rmcp's handler, which gets each notification on a task
                // of its own: queued for the agents before the next message is read.
                JsonRpcMessage::Notification(JsonRpcNotification {
                    notification: ServerNotification::LoggingMessageNotification(log),
                    ..
                }) => self.logs.log(log.params),
                other => return Some(other),
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{
        CallToolRequest, CallToolRequestParams, ClientRequest, EmptyResult, NumberOrString,
        ProgressNotification, RequestId, ServerResult,
    };

    /// An in-memory upstream: `receive` yields `incoming` in order, `send` records.
    struct Fake {
        incoming: std::collections::VecDeque<ServerJsonRpcMessage>,
    }

    impl Transport<RoleClient> for Fake {
        type Error = std::io::Error;

        fn send(
            &mut self,
            _item: ClientJsonRpcMessage,
        ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
            std::future::ready(Ok(()))
        }

        async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
            self.incoming.pop_front()
        }

        async fn close(&mut self) -> Result<(), Self::Error> {
            Ok(())
        }
    }

    fn logs() -> ServerLogs {
        ServerLogs {
            server: "s".into(),
            notices: crate::upstream::notice::Notices::default(),
        }
    }

    fn token(n: i64) -> ProgressToken {
        ProgressToken(NumberOrString::Number(n))
    }

    fn progress(n: i64, value: f64) -> ServerJsonRpcMessage {
        ServerJsonRpcMessage::notification(ServerNotification::ProgressNotification(
            ProgressNotification::new(ProgressNotificationParam::new(token(n), value)),
        ))
    }

    fn response(id: i64) -> ServerJsonRpcMessage {
        ServerJsonRpcMessage::response(
            ServerResult::EmptyResult(EmptyResult {}),
            RequestId::Number(id),
        )
    }

    /// A `tools/call` as rmcp hands it to the transport: its progressToken set, `sink` attached.
    fn request(id: i64, progress_token: i64, sink: Option<ProgressSink>) -> ClientJsonRpcMessage {
        let mut request =
            ClientRequest::CallToolRequest(CallToolRequest::new(CallToolRequestParams::new("t")));
        request
            .get_meta_mut()
            .set_progress_token(token(progress_token));
        if let Some(sink) = sink {
            request.extensions_mut().insert(sink);
        }
        ClientJsonRpcMessage::request(request, RequestId::Number(id))
    }

    fn values(queue: &mut SinkRx) -> Vec<f64> {
        std::iter::from_fn(|| queue.try_recv())
            .map(|p| p.progress)
            .collect()
    }

    #[tokio::test]
    async fn progress_is_queued_for_its_call_before_the_response_is_received() {
        let routes = ProgressRoutes::default();
        let mut tap = routes.tap(
            Fake {
                incoming: [
                    progress(7, 0.25),
                    progress(99, 1.0),
                    progress(7, 0.5),
                    response(1),
                ]
                .into(),
            },
            logs(),
        );
        let (sink, mut queue) = sink_pair();
        tap.send(request(1, 7, Some(sink))).await.expect("send");

        // The first message rmcp sees is the response; by then both progress notifications
        // of token 7 are queued, in wire order, and token 99 (no call) was dropped.
        let first = tap.receive().await.expect("a message");
        assert!(matches!(first, JsonRpcMessage::Response(_)), "{first:?}");
        assert_eq!(values(&mut queue), [0.25, 0.5]);
        assert!(tap.receive().await.is_none());
    }

    #[tokio::test]
    async fn a_request_without_a_sink_gets_no_route() {
        let routes = ProgressRoutes::default();
        let mut tap = routes.tap(
            Fake {
                incoming: [progress(3, 1.0)].into(),
            },
            logs(),
        );
        tap.send(request(1, 3, None)).await.expect("send");
        assert_eq!(routes.len(), 0);
        assert!(tap.receive().await.is_none(), "progress is never passed on");
    }

    #[tokio::test]
    async fn routes_of_finished_calls_are_forgotten() {
        let routes = ProgressRoutes::default();
        let mut tap = routes.tap(
            Fake {
                incoming: [progress(1, 1.0)].into(),
            },
            logs(),
        );
        let (sink, queue) = sink_pair();
        tap.send(request(1, 1, Some(sink))).await.expect("send");
        drop(queue);
        // A notification for a finished call removes its route…
        assert!(tap.receive().await.is_none());
        assert_eq!(routes.len(), 0);
        // …and so does the next request, for calls that got no notification at all.
        let (sink, queue) = sink_pair();
        tap.send(request(2, 2, Some(sink))).await.expect("send");
        drop(queue);
        let (sink, _queue) = sink_pair();
        tap.send(request(3, 3, Some(sink))).await.expect("send");
        assert_eq!(routes.len(), 1);
    }

    #[tokio::test]
    async fn a_flooding_server_fills_one_bounded_queue_and_the_rest_is_dropped() {
        let routes = ProgressRoutes::default();
        let each = weight(&ProgressNotificationParam::new(token(5), 0.0));
        let fits = SINK_BYTES / each;
        let flood = (0..fits as i64 + 10).map(|i| progress(5, i as f64));
        let mut tap = routes.tap(
            Fake {
                incoming: flood.chain([response(1)]).collect(),
            },
            logs(),
        );
        let (sink, mut queue) = sink_pair();
        tap.send(request(1, 5, Some(sink))).await.expect("send");
        assert!(tap.receive().await.is_some());
        let kept = values(&mut queue);
        assert_eq!(kept.len(), fits);
        assert!(fits >= 5000, "a burst of thousands fits: {fits}");
        assert_eq!(kept.first(), Some(&0.0), "the earliest are kept, in order");
    }
}
