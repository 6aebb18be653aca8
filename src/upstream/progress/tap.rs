//! [`ProgressRoutes`], one session's map from upstream `progressToken` to the call that asked,
//! and [`ProgressTap`], the transport wrapper that fills it and takes progress, log messages and
//! task status off the wire in the order they arrive (the strategy in [`super`]).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use rmcp::RoleClient;
use rmcp::model::{
    ClientJsonRpcMessage, GetExtensions, GetMeta, JsonRpcMessage, JsonRpcNotification,
    JsonRpcRequest, ProgressNotificationParam, ProgressToken, ServerJsonRpcMessage,
    ServerNotification,
};
use rmcp::transport::Transport;
use tokio::sync::mpsc;

use super::{ProgressSink, SINK_BYTES, SinkTx, weight};
use crate::upstream::notice::{self, ServerLogs};

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
    task_status: Option<(notice::Notices, Arc<str>)>,
}

impl ProgressRoutes {
    /// These routes, also passing server `server`'s `notifications/tasks/status` (MCP
    /// 2025-11-25 utilities/tasks) to `notices` in the order they arrive.
    #[must_use]
    pub fn with_task_status(mut self, notices: notice::Notices, server: Arc<str>) -> Self {
        self.task_status = Some((notices, server));
        self
    }

    /// Passes a task status notification's `params` on (module doc of [`crate::upstream::handler`]).
    fn task_status(&self, params: Option<serde_json::Value>) {
        if let (Some((notices, server)), Some(params @ serde_json::Value::Object(_))) =
            (&self.task_status, params)
        {
            notices.send(notice::Notice::TaskStatus {
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
    pub(super) fn len(&self) -> usize {
        self.lock().len()
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
                None => crate::upstream::sent_token::as_sent(request),
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
                }) if note.method == crate::upstream::handler::TASK_STATUS => {
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
