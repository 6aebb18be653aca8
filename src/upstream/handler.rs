//! Our side of each upstream session: what we advertise in `initialize`, and what we do with the
//! notifications a server sends us.
//!
//! | upstream notification | effect |
//! |---|---|
//! | `notifications/progress` | never reaches the handler: [`ProgressTap`](super::progress::ProgressTap) routes it below rmcp, in order |
//! | `notifications/{tools,resources,prompts}/list_changed` | [`UpstreamEvent::ListChanged`] to the supervisor, which re-lists |
//! | `notifications/message` | logged through `tracing` in the server's span |

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
#[expect(
    deprecated,
    reason = "logging is deprecated by SEP-2577 but 2025-era servers still send it"
)]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use tokio::sync::mpsc;

pub use super::progress::ProgressRoutes;

/// Something the upstream server told us that the supervisor must act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpstreamEvent {
    /// One of the server's lists changed; the supervisor re-lists that server only.
    ListChanged,
}

/// The `ClientHandler` for one upstream session.
#[derive(Clone, Debug)]
pub struct UpstreamHandler {
    events: mpsc::UnboundedSender<UpstreamEvent>,
}

impl UpstreamHandler {
    /// A handler reporting to `events`.
    pub fn new(events: mpsc::UnboundedSender<UpstreamEvent>) -> Self {
        UpstreamHandler { events }
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
