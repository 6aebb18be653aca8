//! Our side of each upstream session: what we advertise in `initialize`, and what we do with the
//! notifications a server sends us.
//!
//! | upstream notification | effect |
//! |---|---|
//! | `notifications/progress` | forwarded to the agent whose call it belongs to ([`ProgressRoutes`]) |
//! | `notifications/{tools,resources,prompts}/list_changed` | [`UpstreamEvent::ListChanged`] to the supervisor, which re-lists |
//! | `notifications/message` | logged through `tracing` in the server's span |

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProgressToken,
    ProtocolVersion,
};
#[expect(
    deprecated,
    reason = "logging is deprecated by SEP-2577 but 2025-era servers still send it"
)]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, Peer, RoleClient, RoleServer};
use tokio::sync::mpsc;

/// Something the upstream server told us that the supervisor must act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpstreamEvent {
    /// One of the server's lists changed; the supervisor re-lists that server only.
    ListChanged,
}

/// Where to forward progress for one in-flight upstream request.
#[derive(Clone, Debug)]
struct ProgressTarget {
    peer: Peer<RoleServer>,
    token: ProgressToken,
}

/// Maps upstream progress tokens (chosen by our client, unique per session) to the agent and
/// token that asked for progress.
///
/// Registration happens right after a request is queued; `gate` closes the window in which the
/// server's first progress notification could overtake the registration.
#[derive(Clone, Debug, Default)]
pub struct ProgressRoutes {
    routes: Arc<Mutex<HashMap<ProgressToken, ProgressTarget>>>,
    gate: Arc<tokio::sync::Mutex<()>>,
}

impl ProgressRoutes {
    /// Holds registrations off `on_progress` lookups while a request is being sent.
    pub async fn gate(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.gate.lock().await
    }

    /// Routes progress for `upstream` to `peer` as `token`, until the returned guard drops.
    pub fn register(
        &self,
        upstream: ProgressToken,
        peer: Peer<RoleServer>,
        token: ProgressToken,
    ) -> RouteGuard {
        self.lock()
            .insert(upstream.clone(), ProgressTarget { peer, token });
        RouteGuard {
            routes: self.clone(),
            upstream,
        }
    }

    fn lookup(&self, upstream: &ProgressToken) -> Option<ProgressTarget> {
        self.lock().get(upstream).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ProgressToken, ProgressTarget>> {
        // Inserts and removes are single operations; a poisoned map is still consistent.
        self.routes.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Removes a progress route when the call it belongs to ends.
#[derive(Debug)]
pub struct RouteGuard {
    routes: ProgressRoutes,
    upstream: ProgressToken,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.routes.lock().remove(&self.upstream);
    }
}

/// The `ClientHandler` for one upstream session.
#[derive(Clone, Debug)]
pub struct UpstreamHandler {
    events: mpsc::UnboundedSender<UpstreamEvent>,
    progress: ProgressRoutes,
}

impl UpstreamHandler {
    /// A handler reporting to `events` and forwarding progress through `progress`.
    pub fn new(events: mpsc::UnboundedSender<UpstreamEvent>, progress: ProgressRoutes) -> Self {
        UpstreamHandler { events, progress }
    }
}

impl ClientHandler for UpstreamHandler {
    fn get_info(&self) -> ClientConfig {
        // No roots, sampling or elicitation: we cannot answer those on an agent's behalf.
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("mcp-companion", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        drop(self.progress.gate().await);
        let Some(target) = self.progress.lookup(&params.progress_token) else {
            tracing::debug!(token = ?params.progress_token, "progress for an unknown request dropped");
            return;
        };
        let mut forwarded = params;
        forwarded.progress_token = target.token;
        if let Err(e) = target.peer.notify_progress(forwarded).await {
            tracing::debug!(error = %e, "could not forward progress to the agent");
        }
    }

    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.events.send(UpstreamEvent::ListChanged);
    }

    async fn on_resource_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.events.send(UpstreamEvent::ListChanged);
    }

    async fn on_prompt_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.events.send(UpstreamEvent::ListChanged);
    }

    #[expect(
        deprecated,
        reason = "logging is deprecated by SEP-2577 but 2025-era servers still send it"
    )]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        let logger = params.logger.as_deref().unwrap_or("");
        let data = &params.data;
        match params.level {
            LoggingLevel::Debug => tracing::debug!(logger, %data, "server log"),
            LoggingLevel::Info | LoggingLevel::Notice => {
                tracing::info!(logger, %data, "server log")
            }
            LoggingLevel::Warning => tracing::warn!(logger, %data, "server log"),
            _ => tracing::error!(logger, %data, "server log"),
        }
    }
}
