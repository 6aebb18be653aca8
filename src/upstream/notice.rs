//! [`Notices`]: what servers tell every interested agent, outside any call —
//! `notifications/resources/updated`, `notifications/message` (log messages) and
//! `notifications/tasks/status`. Every upstream
//! session sends into one channel per hub; each agent session reads it and keeps what it asked
//! for (its subscriptions, its log level).
#![expect(
    deprecated,
    reason = "logging is deprecated by SEP-2577; 2025-era servers send log messages"
)]

use std::sync::Arc;

use rmcp::model::LoggingMessageNotificationParam;
use tokio::sync::broadcast;

/// Notices an agent session may fall behind by before it loses the oldest (it is told nothing:
/// these are notifications, and a session that slow is not reading them).
const BACKLOG: usize = 1024;

/// One server's notification for agents.
#[derive(Clone, Debug)]
pub enum Notice {
    /// `notifications/resources/updated` for the server's own `uri`.
    ResourceUpdated {
        /// The server as configured.
        server: Arc<str>,
        /// The URI as the server knows it.
        uri: String,
    },
    /// `notifications/tasks/status` (MCP 2025-11-25 utilities/tasks): a task's new status,
    /// for the agent that created the task.
    TaskStatus {
        /// The server as configured.
        server: Arc<str>,
        /// What the server sent (the task, its `taskId` the server's).
        params: serde_json::Value,
    },
    /// `notifications/message`.
    Log {
        /// The server as configured.
        server: Arc<str>,
        /// What the server sent.
        params: LoggingMessageNotificationParam,
    },
}

/// The sending side every upstream session of a hub shares, and where agent sessions
/// subscribe.
#[derive(Clone, Debug)]
pub struct Notices(broadcast::Sender<Arc<Notice>>);

impl Default for Notices {
    fn default() -> Self {
        Notices(broadcast::channel(BACKLOG).0)
    }
}

impl Notices {
    /// Passes `notice` to every subscribed agent session (none: dropped).
    pub fn send(&self, notice: Notice) {
        let _ = self.0.send(Arc::new(notice));
    }

    /// Every notice from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Notice>> {
        self.0.subscribe()
    }
}
