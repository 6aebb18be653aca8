//! Our side of each upstream session: what we advertise in `initialize`, and what we do with the
//! notifications a server sends us.
//!
//! | upstream notification | effect |
//! |---|---|
//! | `notifications/progress` | never reaches the handler: [`ProgressTap`](super::progress::ProgressTap) routes it below rmcp, in order |
//! | `notifications/{tools,resources,prompts}/list_changed` | [`UpstreamEvent::ListChanged`] to the supervisor, which re-lists |
//! | `notifications/message` | logged through `tracing` in the server's span (DEBUG; WARN from `warning` up), and passed to agents ([`Notices`](super::notice::Notices)) |
//! | `notifications/resources/updated` | passed to agents that subscribed ([`Notices`](super::notice::Notices)) |
//! | `notifications/tasks/status` | never reaches the handler: the [`ProgressTap`](super::progress::ProgressTap) passes it to the agent whose task it is ([`Notices`](super::notice::Notices)), in order |
//!
//! A server of the 2026-07-28 era sends list changes and resource updates only on the
//! `subscriptions/listen` stream the companion keeps open to it ([`super::listener`]); they
//! take the same paths.
//!
//! | upstream request | answer |
//! |---|---|
//! | `elicitation/create`, `sampling/createMessage`, `roots/list` | the calling agent's, or the companion's fallback ([`super::ask`]) |
//!
//! We declare `elicitation` (form and url), `sampling` and `roots` (with `listChanged`) in
//! `initialize`, so servers that offer tools only to such clients list them.
#![expect(
    deprecated,
    reason = "logging, sampling and roots are deprecated by SEP-2577 but 2025-era servers use them"
)]

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationCapability, FormElicitationCapability,
    Implementation, ListRootsResult, ProtocolVersion, UrlElicitationCapability,
};
use rmcp::model::{
    LoggingMessageNotificationParam, ResourceUpdatedNotificationParam, ServerNotification,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, RoleClient};
use tokio::sync::mpsc;

use super::ask::{self, AskContext};
use super::notice::Notice;

/// The Tasks utility's status notification (MCP 2025-11-25 utilities/tasks).
pub const TASK_STATUS: &str = "notifications/tasks/status";
pub use super::progress::ProgressRoutes;

/// Something the upstream server told us that the supervisor must act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UpstreamEvent {
    /// One of the server's lists changed; the supervisor re-lists that server only.
    ListChanged,
    /// A signed-in server refused a request for want of scope: its `WWW-Authenticate`
    /// challenge, kept for the next `login` ([`super::signed_in`]).
    MoreScope(String),
}

/// The `ClientHandler` for one upstream session.
#[derive(Clone, Debug)]
pub struct UpstreamHandler {
    events: mpsc::UnboundedSender<UpstreamEvent>,
    asks: AskContext,
}

impl UpstreamHandler {
    /// A handler reporting to `events` and answering server requests through `asks`.
    pub fn new(events: mpsc::UnboundedSender<UpstreamEvent>, asks: AskContext) -> Self {
        UpstreamHandler { events, asks }
    }
}

/// What we declare upstream: elicitation (form and url), sampling, roots with `listChanged`.
pub fn capabilities() -> ClientCapabilities {
    ClientCapabilities::builder()
        .enable_roots()
        .enable_roots_list_changed()
        .enable_sampling()
        .enable_elicitation_with(
            ElicitationCapability::new()
                .with_form(FormElicitationCapability::new())
                .with_url(UrlElicitationCapability::new()),
        )
        .build()
}

impl UpstreamHandler {
    /// A notification heard on a `subscriptions/listen` stream ([`super::listener`]): the
    /// same path as one pushed on an `initialize`-era session.
    pub(super) fn heard(&self, notification: ServerNotification) {
        match notification {
            ServerNotification::ToolListChangedNotification(_)
            | ServerNotification::PromptListChangedNotification(_)
            | ServerNotification::ResourceListChangedNotification(_) => {
                let _ = self.events.send(UpstreamEvent::ListChanged);
            }
            ServerNotification::ResourceUpdatedNotification(updated) => {
                self.asks.notices.send(Notice::ResourceUpdated {
                    server: self.asks.server.clone(),
                    uri: updated.params.uri,
                });
            }
            _ => {}
        }
    }

    /// No `subscriptions/listen` stream was open for a while: what changed then was not told,
    /// so the server is listed again.
    pub(super) fn heard_gap(&self) {
        let _ = self.events.send(UpstreamEvent::ListChanged);
    }
}

impl ClientHandler for UpstreamHandler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            capabilities(),
            Implementation::new("mcp-companion", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        cx: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        ask::elicit(&self.asks, params, cx).await
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        cx: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, McpError> {
        ask::sample(&self.asks, params, cx).await
    }

    async fn list_roots(
        &self,
        cx: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, McpError> {
        ask::list_roots(&self.asks, cx).await
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

    /// A server's log message, logged and passed to the agents with every known secret masked
    /// in its `data` ([`super::notice::ServerLogs::log`]).
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        // The tap takes them before rmcp ([`super::progress`]); this is for a transport without one.
        self.asks.logs().log(params);
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        self.asks.notices.send(Notice::ResourceUpdated {
            server: self.asks.server.clone(),
            uri: params.uri,
        });
    }
}
