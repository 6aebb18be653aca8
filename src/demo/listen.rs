//! `subscriptions/listen` of the demo server in `--stateless` mode (MCP 2026-07-28,
//! "Subscriptions"): the only way such a server tells a client of changes. Each open stream is
//! kept until it ends; `toggle_extra` sends `notifications/tools/list_changed` on every stream
//! that asked for it, and the `touch` test tool `notifications/resources/updated` of its `uri`
//! on every stream subscribed to that URI.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ResourceUpdatedNotification, ResourceUpdatedNotificationParam, ServerNotification,
    SubscriptionFilter, ToolListChangedNotification,
};
use rmcp::service::{SubscriptionContext, SubscriptionSink};

/// How long [`Listeners::updated`] tries again while no stream takes an update.
const TOUCH_WAIT: Duration = Duration::from_secs(2);

/// The open streams of one server process. Cheap to clone; clones share them.
#[derive(Clone, Debug, Default)]
pub struct Listeners(Arc<Mutex<Vec<SubscriptionSink>>>);

impl Listeners {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<SubscriptionSink>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// What a stream gets of `requested`: the list changes it asked for, and every resource
    /// URI (the demo server does not check that it has them).
    pub fn accepted(requested: &SubscriptionFilter) -> SubscriptionFilter {
        requested.clone()
    }

    /// Keeps `subscription`'s stream until the client ends it.
    pub async fn listen(&self, subscription: SubscriptionContext) {
        let sink = subscription.sink().clone();
        let id = sink.id().clone();
        self.lock().push(sink);
        subscription.cancelled().await;
        self.lock().retain(|s| *s.id() != id);
    }

    /// `notifications/tools/list_changed` on every stream that asked for it.
    pub async fn tools_changed(&self) {
        self.send(ServerNotification::ToolListChangedNotification(
            ToolListChangedNotification::default(),
        ))
        .await;
    }

    /// `notifications/resources/updated` of `uri` on every stream subscribed to it; how many.
    /// rmcp sends a stream's acknowledgement before it hands the stream to [`Self::listen`], so
    /// a client told its stream is open may touch before the stream is kept here: when no
    /// stream takes the update, it is tried again for up to [`TOUCH_WAIT`].
    pub async fn updated(&self, uri: &str) -> usize {
        let notification = ServerNotification::ResourceUpdatedNotification(
            ResourceUpdatedNotification::new(ResourceUpdatedNotificationParam::new(uri)),
        );
        let deadline = tokio::time::Instant::now() + TOUCH_WAIT;
        loop {
            let sent = self.send(notification.clone()).await;
            if sent > 0 || tokio::time::Instant::now() >= deadline {
                return sent;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Sends `notification` on each stream whose filter takes it; how many took it.
    async fn send(&self, notification: ServerNotification) -> usize {
        let sinks = self.lock().clone();
        let mut sent = 0;
        for sink in sinks {
            if sink.send(notification.clone()).await.is_ok() {
                sent += 1;
            }
        }
        sent
    }
}
