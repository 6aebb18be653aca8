//! `subscriptions/listen` of the demo server in `--stateless` mode (MCP 2026-07-28,
//! "Subscriptions"): the only way such a server tells a client of changes. Each open stream is
//! kept until it ends; `toggle_extra` sends `notifications/tools/list_changed` on every stream
//! that asked for it, and the `touch` test tool `notifications/resources/updated` of its `uri`
//! on every stream subscribed to that URI.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    ResourceUpdatedNotification, ResourceUpdatedNotificationParam, ServerNotification,
    SubscriptionFilter, ToolListChangedNotification,
};
use rmcp::service::{SubscriptionContext, SubscriptionSink};

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
    pub async fn updated(&self, uri: &str) -> usize {
        self.send(ServerNotification::ResourceUpdatedNotification(
            ResourceUpdatedNotification::new(ResourceUpdatedNotificationParam::new(uri)),
        ))
        .await
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
