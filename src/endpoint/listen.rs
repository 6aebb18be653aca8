//! `subscriptions/listen` (MCP 2026-07-28, "Subscriptions"): how a 2026-07-28 agent hears of
//! changes, since it has no session for the server to push them on.
//!
//! - **What a stream may ask for** ([`accepted_filter`]): `toolsListChanged`,
//!   `promptsListChanged` and `resourcesListChanged` are accepted as asked;
//!   `resourceSubscriptions` keeps the URIs this session's view serves (a listed resource or one
//!   a template matches) when some running server declared `resources.subscribe`, and drops the
//!   rest, so the acknowledgement says exactly what will be heard.
//! - **What it carries** ([`listen`]): `notifications/tools/list_changed` whenever the merged
//!   catalog changes; the prompts' and resources' `list_changed` when those lists changed with
//!   it (as the `initialize` era gets them, coalesced); `notifications/resources/updated` of
//!   each accepted URI, under the URI the agent used. Each URI is subscribed upstream
//!   (`resources/subscribe`, shared with every other agent's subscription of it) while the
//!   stream lasts and released when it ends.
//! - A server that restarts knows no subscriptions: its updates stop until the agent opens a
//!   new stream, as an `initialize`-era agent's stop until it subscribes again.

use rmcp::model::SubscriptionFilter;
use rmcp::service::SubscriptionContext;

use crate::catalog::NativeRoute;
use crate::hub::{Hub, HubEvent};
use crate::upstream::notice::Notice;

/// The part of `requested` a stream gets (module doc).
pub fn accepted_filter(hub: &Hub, requested: &SubscriptionFilter) -> SubscriptionFilter {
    let catalog = hub.catalog();
    let native = catalog.native();
    let mut accepted = SubscriptionFilter::default();
    accepted.tools_list_changed = requested.tools_list_changed;
    accepted.prompts_list_changed = requested.prompts_list_changed;
    accepted.resources_list_changed = requested.resources_list_changed;
    if native.declared().subscribe {
        accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|uri| native.resource(uri).is_some())
                .cloned()
                .collect()
        });
    }
    accepted
}

/// Runs one stream until the agent cancels it, its connection ends or a notification cannot be
/// sent (module doc).
pub async fn listen(hub: &Hub, subscription: SubscriptionContext) {
    let accepted = subscription.accepted().clone();
    let sink = subscription.sink();
    let on = |flag: Option<bool>| flag == Some(true);
    // The receivers exist before `resources/subscribe` goes upstream, so an update the server
    // sends right after subscribing is heard.
    let mut events = hub.subscribe();
    let mut notices = hub.notices(Default::default());
    let mut routes: Vec<(String, NativeRoute)> = Vec::new();
    for uri in accepted.resource_subscriptions.iter().flatten() {
        match Box::pin(hub.subscribe_resource(uri)).await {
            Ok(route) => routes.push((uri.clone(), route)),
            Err(e) => {
                tracing::debug!(uri, error = %e.message, "could not subscribe for a listen stream")
            }
        }
    }
    let mut last = hub.catalog();
    loop {
        let sent = tokio::select! {
            () = subscription.cancelled() => break,
            event = events.recv() => match event {
                Some(HubEvent::ToolsChanged) => {
                    let now = hub.catalog();
                    let prompts = !now.native().same_prompts(last.native());
                    let resources = !now.native().same_resources(last.native());
                    last = now;
                    let mut sent = Ok(());
                    if on(accepted.tools_list_changed) {
                        sent = sent.and(sink.notify_tool_list_changed().await);
                    }
                    if prompts && on(accepted.prompts_list_changed) {
                        sent = sent.and(sink.notify_prompt_list_changed().await);
                    }
                    if resources && on(accepted.resources_list_changed) {
                        sent = sent.and(sink.notify_resource_list_changed().await);
                    }
                    sent
                }
                Some(HubEvent::ServersChanged) => Ok(()),
                None => break,
            },
            notice = notices.recv() => match notice {
                Some(notice) => match &*notice {
                    Notice::ResourceUpdated { server, uri } => {
                        let mut sent = Ok(());
                        for (agent_uri, route) in &routes {
                            if *route.server == **server && route.upstream == *uri {
                                sent = sent.and(sink.notify_resource_updated(agent_uri.clone()).await);
                            }
                        }
                        sent
                    }
                    _ => Ok(()),
                },
                None => break,
            },
        };
        if let Err(e) = sent {
            tracing::debug!(error = %e, "could not send on a subscriptions/listen stream");
            break;
        }
    }
    for (_, route) in routes {
        Box::pin(hub.unsubscribe_resource(&route)).await;
    }
}
