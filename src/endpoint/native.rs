//! The agent side of native prompts, resources, completions, subscriptions and log messages
//! (the routing is [`crate::hub`]'s `native.rs`, the names and URIs
//! [`crate::catalog::native`]'s).
//!
//! - **Capabilities**: `prompts`, `resources` (with `subscribe` when a server has it) and
//!   `completions` are declared when some running server declared them at the moment the agent
//!   initializes; `initialize` waits for the servers to settle first, as the first `tools/list`
//!   does (at most `firstListTimeout`; not for agents [`super::first_list`] answers at once).
//!   MCP has no way to add a capability to a session, so an
//!   agent that initialized before the first server with prompts started sees no prompts until
//!   it reconnects; `tools`, `logging` and every `listChanged` are always declared.
//! - **Lists**: [`PAGE_SIZE`](crate::catalog::PAGE_SIZE) items per page, `nextCursor` an offset,
//!   as for tools; `notifications/prompts/list_changed` and `resources/list_changed` follow a
//!   change of those lists, coalesced with the tools' announcement.
//! - **Subscriptions**: kept per agent session; the server's `notifications/resources/updated`
//!   reaches the sessions that subscribed to that URI, under the URI they used. A session's
//!   subscriptions end with it, and each one ends when the session's view (its profile,
//!   `enabledTools`) no longer serves the URI at the next update.
//! - **Log messages**: every server's `notifications/message` reaches each agent whose
//!   `logging/setLevel` level it meets (all of them before the agent set a level, as a server
//!   decides alone until then), in the server's order, and a call's answer is written only
//!   after the messages its server sent before it ([`crate::upstream::notice`]).
#![expect(
    deprecated,
    reason = "logging and resources/subscribe are deprecated by SEP-2577 and SEP-2575; 2025-era clients use them"
)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    LoggingLevel, PromptsCapability, ResourceUpdatedNotificationParam, ResourcesCapability,
    ServerCapabilities,
};
use rmcp::{ErrorData as McpError, Peer, RoleServer};

use crate::catalog::{Declared, NativeRoute, PAGE_SIZE};
use crate::hub::{Hub, severity};
use crate::upstream::notice::{Notice, NoticeReceiver};

/// What one agent session asked for: its subscriptions and its log level.
#[derive(Debug, Default)]
pub struct AgentInterest {
    /// The agent's URI → where it was subscribed.
    subscriptions: Mutex<HashMap<String, NativeRoute>>,
    /// The agent's `logging/setLevel`, if it sent one.
    level: Mutex<Option<LoggingLevel>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // One insert, lookup or remove per critical section: a poisoned map is consistent.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl AgentInterest {
    /// Records the agent's subscription of `uri`; false when it already had it.
    pub fn subscribed(&self, uri: &str, route: NativeRoute) -> bool {
        lock(&self.subscriptions)
            .insert(uri.to_owned(), route)
            .is_none()
    }

    /// Where the agent's subscription of `uri` went, if it has one.
    pub fn route(&self, uri: &str) -> Option<NativeRoute> {
        lock(&self.subscriptions).get(uri).cloned()
    }

    /// Forgets the agent's subscription of `uri`, returning where it went.
    pub fn unsubscribed(&self, uri: &str) -> Option<NativeRoute> {
        lock(&self.subscriptions).remove(uri)
    }

    /// Sets the agent's log level.
    pub fn set_level(&self, level: LoggingLevel) {
        *lock(&self.level) = Some(level);
    }

    /// The agent URIs subscribed to `server`'s `uri`.
    fn subscribers(&self, server: &str, uri: &str) -> Vec<String> {
        lock(&self.subscriptions)
            .iter()
            .filter(|(_, r)| &*r.server == server && r.upstream == uri)
            .map(|(agent, _)| agent.clone())
            .collect()
    }

    /// Whether a message at `level` reaches this agent.
    fn wants(&self, level: LoggingLevel) -> bool {
        lock(&self.level).is_none_or(|min| severity(level) >= severity(min))
    }

    /// Ends every subscription of the session (it is over), upstream too where it was the
    /// last.
    pub async fn release(&self, hub: &Hub) {
        let routes: Vec<NativeRoute> = lock(&self.subscriptions).drain().map(|(_, r)| r).collect();
        for route in routes {
            hub.unsubscribe_resource(&route).await;
        }
    }
}

/// The capabilities an agent is told about when the servers declared `declared` (module doc).
pub fn capabilities(declared: Declared) -> ServerCapabilities {
    let mut caps = ServerCapabilities::builder()
        .enable_tools()
        .enable_tool_list_changed()
        .enable_logging()
        .build();
    if declared.prompts {
        let mut prompts = PromptsCapability::default();
        prompts.list_changed = Some(true);
        caps.prompts = Some(prompts);
    }
    if declared.resources {
        let mut resources = ResourcesCapability::default();
        resources.list_changed = Some(true);
        resources.subscribe = declared.subscribe.then_some(true);
        caps.resources = Some(resources);
    }
    if declared.completions {
        caps.completions = Some(serde_json::Map::new());
    }
    caps
}

/// The page of `items` at `cursor` (an offset this server handed out) and the next cursor.
///
/// # Errors
/// -32602 for a cursor that is not an offset within the list.
pub fn page<T: Clone>(
    items: &[T],
    cursor: Option<String>,
) -> Result<(Vec<T>, Option<String>), McpError> {
    let start = match &cursor {
        None => Some(0),
        Some(c) => c.parse::<usize>().ok().filter(|&s| s <= items.len()),
    };
    let Some(start) = start else {
        return Err(McpError::invalid_params(
            format!("invalid cursor \"{}\"", cursor.unwrap_or_default()),
            None,
        ));
    };
    let end = (start + PAGE_SIZE).min(items.len());
    let next = (end < items.len()).then(|| end.to_string());
    Ok((items[start..end].to_vec(), next))
}

/// Passes the servers' resource updates and log messages in `notices` to `peer` as long as it
/// is there, under `interest`'s rules (module doc), one at a time, each written before the next
/// is taken.
pub async fn forward_notices(
    hub: Hub,
    peer: Peer<RoleServer>,
    interest: Arc<AgentInterest>,
    tasks: crate::hub::Tasks,
    mut notices: NoticeReceiver,
) {
    loop {
        let notice = tokio::select! {
            received = notices.recv() => match received {
                Some(notice) => notice,
                None => return,
            },
            // An answer with a task reached the agent: what was held for it goes out.
            () = tasks.released() => {
                if send_task_statuses(&peer, hub.held_task_statuses(&tasks)).await.is_err() {
                    return;
                }
                continue;
            }
        };
        let sent = match &*notice {
            Notice::ResourceUpdated { server, uri } => {
                let mut result = Ok(());
                let catalog = hub.catalog();
                for agent_uri in interest.subscribers(server, uri) {
                    // The session's view (its profile, `enabledTools`) may have dropped the
                    // resource since it subscribed: the subscription ends there.
                    let served = catalog
                        .native()
                        .resource(&agent_uri)
                        .is_some_and(|r| r.server == *server && r.upstream == *uri);
                    if !served {
                        if let Some(route) = interest.unsubscribed(&agent_uri) {
                            hub.unsubscribe_resource(&route).await;
                        }
                        continue;
                    }
                    result = result.and(
                        peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(
                            agent_uri,
                        ))
                        .await,
                    );
                }
                result
            }
            // A profile's session hears only the servers of its profile.
            Notice::Log { server, params }
                if interest.wants(params.level) && hub.sees_server(server) =>
            {
                peer.notify_logging_message(params.clone()).await
            }
            Notice::Log { .. } => Ok(()),
            // A 2026-07-28 agent polls its tasks: this notification is of the other era.
            Notice::TaskStatus { .. } if !super::era::is_initialize_session(&peer) => Ok(()),
            Notice::TaskStatus { server, params } => {
                let statuses = hub.task_statuses_for(&tasks, server, params);
                send_task_statuses(&peer, statuses).await
            }
        };
        if sent.is_err() {
            return; // the session is gone
        }
    }
}

/// Sends each of `statuses` (`notifications/tasks/status` params, the agent's ids) in order.
async fn send_task_statuses(
    peer: &Peer<RoleServer>,
    statuses: Vec<serde_json::Value>,
) -> Result<(), rmcp::service::ServiceError> {
    for params in statuses {
        let note = rmcp::model::CustomNotification::new(
            crate::upstream::handler::TASK_STATUS,
            Some(params),
        );
        (peer)
            .send_notification(rmcp::model::ServerNotification::CustomNotification(note))
            .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_hears_messages_at_or_above_its_level_and_all_before_it_sets_one() {
        let interest = AgentInterest::default();
        assert!(interest.wants(LoggingLevel::Debug), "no level set yet");
        interest.set_level(LoggingLevel::Warning);
        assert!(!interest.wants(LoggingLevel::Info));
        assert!(interest.wants(LoggingLevel::Warning));
        assert!(interest.wants(LoggingLevel::Emergency));
    }

    #[test]
    fn pages_follow_offsets_and_refuse_other_cursors() {
        let items: Vec<usize> = (0..PAGE_SIZE + 3).collect();
        let (first, next) = page(&items, None).expect("first page");
        assert_eq!((first.len(), next.as_deref()), (PAGE_SIZE, Some("1000")));
        let (rest, next) = page(&items, next).expect("second page");
        assert_eq!(
            (rest, next),
            (vec![PAGE_SIZE, PAGE_SIZE + 1, PAGE_SIZE + 2], None)
        );
        assert!(page(&items, Some("x".into())).is_err());
        assert!(page(&items, Some((PAGE_SIZE + 4).to_string())).is_err());
    }

    #[test]
    fn capabilities_follow_what_the_servers_declared() {
        let none = capabilities(Declared::default());
        assert!(none.prompts.is_none() && none.resources.is_none() && none.completions.is_none());
        assert!(none.tools.is_some());
        let all = capabilities(Declared {
            prompts: true,
            resources: true,
            subscribe: true,
            completions: true,
            logging: true,
        });
        assert_eq!(all.resources.and_then(|r| r.subscribe), Some(true));
        assert!(all.prompts.is_some() && all.completions.is_some());
    }
}
