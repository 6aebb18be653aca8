//! Prompts, resources, completions, subscriptions and log levels passed to the server that owns
//! them (MCP 2025-11-25 server/prompts, server/resources, utilities/completion,
//! utilities/logging): the catalog's native table ([`crate::catalog::Native`]) says which server
//! and under which name or URI; the answer comes back with its URIs as agents know them.
//!
//! | request | routed by | upstream |
//! |---|---|---|
//! | `prompts/get` | the served prompt name | `prompts/get` with the server's name |
//! | `resources/read` | the URI ([`Native::resource`]: listed, a tool's UI, a template's expansion, else the only resource server) | `resources/read` of the server's URI |
//! | `completion/complete` | `ref/prompt` name or `ref/resource` template | `completion/complete` with the server's name or template |
//! | `resources/subscribe` / `unsubscribe` | the URI, as for reads | sent once per server and URI however many agents subscribe; the last to leave unsubscribes; for a 2026-07-28 server the URI is added to (removed from) the companion's `subscriptions/listen` stream to it instead ([`crate::upstream::listener`]) |
//! | `logging/setLevel` | — | every running server that declared `logging`, at the most verbose level any agent asked for |
//!
//! `prompts/get` and `resources/read` are sent as tool calls are (`native_get.rs`): the server
//! may ask the calling agent for input meanwhile.
//!
//! A server that is not running answers at once (no waiting for a restart, unlike tool calls);
//! every request lasts at most the server's `toolTimeout`. Upstream subscriptions and the log
//! level are not sent again to a server that restarts on its own: an agent's next
//! `resources/subscribe` of the resource sends it to the new process.
#![expect(
    deprecated,
    reason = "logging/setLevel and resources/subscribe are deprecated by SEP-2577 and SEP-2575; 2025-era clients and servers use them"
)]

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, LoggingLevel, Reference, SetLevelRequestParams,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::ServiceError;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Hub;
use super::unserved::{resource_route, template_route};
use crate::catalog::{Native, NativeRoute};
use crate::config::DEFAULT_TOOL_TIMEOUT;
use crate::supervisor::Live;

/// MCP "Resources", error handling: the resource does not exist.
pub const RESOURCE_NOT_FOUND: i32 = -32002;

/// What the agents asked servers for, shared by every agent session of a hub.
#[derive(Clone, Debug, Default)]
pub(crate) struct Interest(Arc<Mutex<InterestState>>);

#[derive(Debug, Default)]
struct InterestState {
    /// (server, server's URI) → agent sessions subscribed, and the server session generation
    /// that was sent `resources/subscribe`.
    subscriptions: HashMap<(Arc<str>, String), (usize, u64)>,
    /// The most verbose level sent to the servers so far.
    level: Option<LoggingLevel>,
}

impl Interest {
    fn lock(&self) -> std::sync::MutexGuard<'_, InterestState> {
        // Each critical section is one map update: a poisoned map is consistent.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// How verbose `level` is: 0 for `debug` up to 7 for `emergency` (RFC 5424 order).
pub fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

impl Hub {
    /// `completion/complete` for a served prompt's or template's argument.
    ///
    /// # Errors
    /// -32602 for a prompt or template not served (naming the ones to use when several
    /// servers serve it under other names, `hub/unserved.rs`); the server's own error; -32603
    /// as for reads.
    pub async fn complete(
        &self,
        mut params: CompleteRequestParams,
    ) -> Result<CompleteResult, McpError> {
        let catalog = self.catalog();
        let native = catalog.native();
        let route = match &mut params.r#ref {
            Reference::Prompt(prompt) => {
                let route = (native.prompt(&prompt.name).cloned())
                    .ok_or_else(|| self.unknown_prompt(&prompt.name, "refer to"))?;
                prompt.name.clone_from(&route.upstream);
                route
            }
            Reference::Resource(template) => {
                let route = template_route(native, &template.uri)?;
                template.uri.clone_from(&route.upstream);
                route
            }
            _ => {
                return Err(McpError::invalid_params(
                    "completion/complete: unknown kind of ref",
                    None,
                ));
            }
        };
        let live = self.live_for(&route.server)?;
        self.bounded(
            &route.server,
            "completion/complete",
            live.peer.complete(params),
        )
        .await
    }

    /// `resources/subscribe` of the agent's `uri`: sent upstream unless another agent already
    /// subscribed to it. Returns the route, for [`Hub::unsubscribe_resource`] and for matching the
    /// server's `notifications/resources/updated`.
    ///
    /// # Errors
    /// As for [`Hub::read_resource`].
    pub async fn subscribe_resource(&self, uri: &str) -> Result<NativeRoute, McpError> {
        let route = resource_route(self.catalog().native(), uri, "subscribe to")?;
        let live = self.live_for(&route.server)?;
        let key = (route.server.clone(), route.upstream.clone());
        let send = {
            let mut state = self.interest.lock();
            let (count, generation) = state
                .subscriptions
                .entry(key.clone())
                .or_insert((0, live.generation));
            *count += 1;
            let send = *count == 1 || *generation != live.generation;
            *generation = live.generation;
            send
        };
        if send {
            let sent = self.subscribe_upstream(&live, &route).await;
            if let Err(e) = sent {
                self.forget(&key);
                return Err(e);
            }
        }
        Ok(route)
    }

    /// An agent subscribes again to `route`, which it already has: sent upstream again when
    /// the server restarted since it was sent (a new process knows no subscriptions).
    ///
    /// # Errors
    /// As for [`Hub::read_resource`].
    pub async fn refresh_subscription(&self, route: &NativeRoute) -> Result<(), McpError> {
        let live = self.live_for(&route.server)?;
        let key = (route.server.clone(), route.upstream.clone());
        let stale = {
            let mut state = self.interest.lock();
            match state.subscriptions.get_mut(&key) {
                Some((_, generation)) if *generation != live.generation => {
                    *generation = live.generation;
                    true
                }
                _ => false,
            }
        };
        if stale {
            self.subscribe_upstream(&live, route).await?;
        }
        Ok(())
    }

    /// Asks `live`'s server for updates of `route`: on its `subscriptions/listen` stream for a
    /// server of the 2026-07-28 era (which has no `resources/subscribe`), else
    /// `resources/subscribe`.
    async fn subscribe_upstream(&self, live: &Live, route: &NativeRoute) -> Result<(), McpError> {
        if let Some(listener) = &live.listener {
            let added = async {
                listener.add(&route.upstream).await.map_err(|e| {
                    ServiceError::McpError(McpError::internal_error(e.to_string(), None))
                })
            };
            return self
                .bounded(&route.server, "subscriptions/listen", added)
                .await;
        }
        let params = SubscribeRequestParams::new(route.upstream.clone());
        self.bounded(
            &route.server,
            "resources/subscribe",
            live.peer.subscribe(params),
        )
        .await
    }

    /// One agent no longer wants updates of `route` (from [`Hub::subscribe_resource`]); the last one
    /// to leave unsubscribes upstream. Failures are logged: the agent's side is done anyway.
    pub async fn unsubscribe_resource(&self, route: &NativeRoute) {
        let key = (route.server.clone(), route.upstream.clone());
        if !self.forget(&key) {
            return;
        }
        let Ok(live) = self.live_for(&route.server) else {
            return;
        };
        if let Some(listener) = &live.listener {
            listener.remove(&route.upstream);
            return;
        }
        let params = UnsubscribeRequestParams::new(route.upstream.clone());
        let sent = self
            .bounded(
                &route.server,
                "resources/unsubscribe",
                live.peer.unsubscribe(params),
            )
            .await;
        if let Err(e) = sent {
            tracing::debug!(server = %route.server, error = %e.message, "resources/unsubscribe failed");
        }
    }

    /// Drops one subscription of `key`; true when it was the last.
    fn forget(&self, key: &(Arc<str>, String)) -> bool {
        let mut state = self.interest.lock();
        match state.subscriptions.get_mut(key) {
            Some((count, _)) if *count > 1 => {
                *count -= 1;
                false
            }
            Some(_) => {
                state.subscriptions.remove(key);
                true
            }
            None => false,
        }
    }

    /// An agent's `logging/setLevel`: servers that declared `logging` get `level` when it is
    /// more verbose than what they were sent before (each agent filters its own messages,
    /// [`severity`]). Failures are logged.
    pub async fn set_level(&self, level: LoggingLevel) {
        {
            let mut state = self.interest.lock();
            if state.level.is_some_and(|l| severity(l) <= severity(level)) {
                return;
            }
            state.level = Some(level);
        }
        for server in self.servers() {
            let Some(live) = server.live() else { continue };
            if !live.listing.declared.logging {
                continue;
            }
            let params = SetLevelRequestParams::new(level);
            let sent = self
                .bounded(
                    server.name(),
                    "logging/setLevel",
                    live.peer.set_level(params),
                )
                .await;
            if let Err(e) = sent {
                tracing::debug!(server = %server.name(), error = %e.message, "logging/setLevel failed");
            }
        }
    }

    /// Every server's resource updates and log messages from now on, counted in `delivery`
    /// ([`crate::upstream::notice`]).
    pub fn notices(
        &self,
        delivery: Arc<crate::upstream::notice::Delivery>,
    ) -> crate::upstream::notice::NoticeReceiver {
        self.notices.subscribe(delivery)
    }

    /// The live session of `server`, or why there is none.
    pub(super) fn live_for(&self, server: &str) -> Result<Arc<Live>, McpError> {
        self.server(server).and_then(|s| s.live()).ok_or_else(|| {
            McpError::internal_error(format!("server \"{server}\" is not running"), None)
        })
    }

    /// `request` to `server`, at most its `toolTimeout`; its JSON-RPC error is passed on as
    /// the server sent it, any other failure becomes -32603 naming the server.
    pub(super) async fn bounded<T>(
        &self,
        server: &str,
        method: &str,
        request: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, McpError> {
        let timeout = self
            .server(server)
            .and_then(|s| s.config().map(|c| c.tool_timeout))
            .unwrap_or(DEFAULT_TOOL_TIMEOUT);
        match tokio::time::timeout(timeout, request).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(ServiceError::McpError(e))) => Err(e),
            Ok(Err(e)) => Err(McpError::internal_error(
                format!("server \"{server}\" could not answer {method}: {e}"),
                None,
            )),
            Err(_) => Err(McpError::internal_error(
                format!(
                    "server \"{server}\" did not answer {method} within {} s (its toolTimeout)",
                    timeout.as_secs_f64()
                ),
                None,
            )),
        }
    }
}

/// `result` of `server` with every URI it shares with another server rewritten as agents know
/// it (`uri` of contents, embedded resources and resource links; `resourceUri` in `_meta`).
/// Unchanged (and not re-encoded) for a server none of whose URIs is rewritten.
pub fn to_agent<T: Serialize + DeserializeOwned>(native: &Native, server: &str, result: T) -> T {
    if !native.rewrites(server) {
        return result;
    }
    rewritten(result, &|uri| native.to_agent(server, uri))
}

/// `result` with each `uri` and `resourceUri` string replaced by `to_agent` of it.
pub(super) fn rewritten<T: Serialize + DeserializeOwned>(
    result: T,
    to_agent: &dyn Fn(&str) -> String,
) -> T {
    let Ok(mut value) = serde_json::to_value(&result) else {
        return result;
    };
    // The server's text is the result before rewriting: the typed result is written instead.
    if let Some(meta) = value.get_mut("_meta").and_then(Value::as_object_mut) {
        meta.remove(crate::upstream::exact::EXACT_KEY);
        if meta.is_empty()
            && let Some(object) = value.as_object_mut()
        {
            object.remove("_meta");
        }
    }
    rewrite(&mut value, to_agent);
    serde_json::from_value(value).unwrap_or(result)
}

fn rewrite(value: &mut Value, to_agent: &dyn Fn(&str) -> String) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match v {
                    Value::String(uri) if key == "uri" || key == "resourceUri" => {
                        *uri = to_agent(uri);
                    }
                    _ => rewrite(v, to_agent),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite(v, to_agent)),
        _ => {}
    }
}
