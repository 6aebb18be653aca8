//! The hub: every server's supervisor, the merged catalog, change events and call routing.
//!
//! The CLI's `serve` and the desktop shell each own one [`Hub`]; the local endpoint, the control
//! API and the tray read from it. Supervisors report changes by name on one channel; a single
//! catalog task coalesces them (at most one rebuild per [`COALESCE`]), rebuilds the merged
//! [`Catalog`] from every running server's listing, and emits [`HubEvent`]s.
//!
//! Events emitted: [`HubEvent::ServerChanged`] on every state change, and
//! [`HubEvent::ToolsChanged`] when the set of wrapped tools (names or definitions) changed or a
//! server reconnected with a new session, which the endpoint turns into
//! `notifications/tools/list_changed`.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use tokio::sync::{broadcast, mpsc};

use crate::catalog::{Catalog, CatalogInput};
use crate::config::Config;
use crate::supervisor::{self, ServerHandle, ServerState, ServerStatus};
use crate::upstream::call::{self, CallError, Downstream};

/// Minimum time between two catalog rebuilds (and so between two `list_changed` announcements).
pub const COALESCE: Duration = Duration::from_millis(100);

/// Something that changed in the hub.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HubEvent {
    /// A server's status changed (state, error, pid or tool count).
    ServerChanged(Arc<str>),
    /// The merged tool list changed.
    ToolsChanged,
}

/// A cheap, cloneable handle on the hub.
#[derive(Clone, Debug)]
pub struct Hub {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    servers: Vec<ServerHandle>,
    by_name: HashMap<Arc<str>, ServerHandle>,
    catalog: RwLock<Arc<Catalog>>,
    events: broadcast::Sender<HubEvent>,
    /// The [`supervisor::Live::session`] each running server had at the last rebuild.
    sessions: std::sync::Mutex<HashMap<Arc<str>, u64>>,
}

impl Hub {
    /// Starts a supervisor for every server in `config` (all connecting concurrently) and the
    /// catalog task. Must be called inside a Tokio runtime.
    pub fn start(config: &Config) -> Hub {
        let (changed_tx, changed_rx) = mpsc::unbounded_channel();
        let servers: Vec<ServerHandle> = config
            .servers
            .iter()
            .map(|spec| supervisor::spawn(spec, &config.ssrf_whitelist, changed_tx.clone()))
            .collect();
        let by_name = servers
            .iter()
            .map(|s| (s.name().clone(), s.clone()))
            .collect();
        let (events, _) = broadcast::channel(256);
        let inner = Arc::new(Inner {
            servers,
            by_name,
            catalog: RwLock::new(Arc::new(Catalog::default())),
            events,
            sessions: std::sync::Mutex::new(HashMap::new()),
        });
        tokio::spawn(catalog_task(Arc::downgrade(&inner), changed_rx));
        Hub { inner }
    }

    /// Subscribes to [`HubEvent`]s.
    pub fn subscribe(&self) -> broadcast::Receiver<HubEvent> {
        self.inner.events.subscribe()
    }

    /// The merged catalog as of now (cheap: an `Arc` clone).
    pub fn catalog(&self) -> Arc<Catalog> {
        self.inner
            .catalog
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Every server's status, in config order, with tool counts from the merged catalog.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        let catalog = self.catalog();
        self.inner
            .servers
            .iter()
            .map(|s| {
                let mut status = s.snapshot().status;
                if status.state == ServerState::Running {
                    status.tools = catalog.tool_count_for(s.name());
                }
                status
            })
            .collect()
    }

    /// The handle of the server called `name`.
    pub fn server(&self, name: &str) -> Option<&ServerHandle> {
        self.inner.by_name.get(name)
    }

    /// Waits until no server is `starting` (or `timeout` passes) and the catalog has caught up.
    pub async fn settle(&self, timeout: Duration) {
        let deadline = tokio::time::Instant::now() + timeout;
        for server in &self.inner.servers {
            let mut watch = server.watch();
            let _ = tokio::time::timeout_at(
                deadline,
                watch.wait_for(|s| s.status.state != ServerState::Starting),
            )
            .await;
        }
        // Let the catalog task fold in the last change.
        tokio::time::sleep(COALESCE + Duration::from_millis(20)).await;
    }

    /// Calls the wrapped tool `name` and always returns a `tools/call` result: upstream answers
    /// are passed through; every failure (unknown tool, server down, timeout, JSON-RPC error)
    /// becomes `isError: true` with a readable message naming the server.
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        downstream: Option<&Downstream>,
    ) -> CallToolResult {
        let catalog = self.catalog();
        let Some(route) = catalog.route(name) else {
            return error_result(format!("unknown tool \"{name}\""));
        };
        let Some(server) = self.inner.by_name.get(&route.server) else {
            return error_result(format!("unknown tool \"{name}\""));
        };
        let Some(live) = server.live() else {
            let status = server.snapshot().status;
            return error_result(not_running(&status));
        };
        let timeout = server
            .config()
            .map_or(Duration::from_secs(30), |c| c.tool_timeout);
        let attempt = |live: Arc<supervisor::Live>, arguments: Option<JsonObject>| async move {
            call::call(
                &live.peer,
                &live.progress,
                &route.target,
                arguments,
                timeout,
                downstream,
            )
            .await
        };
        let mut outcome = attempt(live.clone(), arguments.clone()).await;
        if outcome == Err(CallError::SessionExpired) {
            // DESIGN §7: session gone → reconnect (shared with concurrent callers), retry once.
            tracing::info!(server = %route.server, tool = name, "session expired; reconnecting");
            outcome = match server.reconnect(live).await {
                Ok(fresh) => attempt(fresh, arguments).await,
                Err(why) => Err(CallError::Transport { reason: why }),
            };
        }
        match outcome {
            Ok(result) => result,
            Err(e) => {
                tracing::info!(server = %route.server, tool = name, error = %e, "call failed");
                error_result(describe_failure(&route.server, &e))
            }
        }
    }

    /// Stops every server in parallel and waits for their processes to be gone.
    pub async fn shutdown(&self) {
        let stops = self.inner.servers.iter().map(|s| s.stop());
        futures::future::join_all(stops).await;
    }
}

fn not_running(status: &ServerStatus) -> String {
    match &status.last_error {
        Some(err) => format!(
            "server \"{}\" is {}: {err}",
            status.name,
            status.state.as_str()
        ),
        None => format!("server \"{}\" is {}", status.name, status.state.as_str()),
    }
}

fn describe_failure(server: &str, e: &CallError) -> String {
    match e {
        CallError::Rpc { .. } => format!("server \"{server}\" returned an error: {e}"),
        _ => format!("server \"{server}\": {e}"),
    }
}

fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

async fn catalog_task(hub: std::sync::Weak<Inner>, mut changed: mpsc::UnboundedReceiver<Arc<str>>) {
    while let Some(first) = changed.recv().await {
        let mut names = vec![first];
        while let Ok(more) = changed.try_recv() {
            names.push(more);
        }
        let Some(inner) = hub.upgrade() else { return };
        rebuild(&inner);
        names.sort();
        names.dedup();
        for name in names {
            let _ = inner.events.send(HubEvent::ServerChanged(name));
        }
        drop(inner);
        tokio::time::sleep(COALESCE).await;
    }
}

fn rebuild(inner: &Inner) {
    let lives: Vec<_> = inner.servers.iter().map(|s| (s, s.live())).collect();
    let inputs: Vec<CatalogInput<'_>> = lives
        .iter()
        .filter_map(|(s, live)| {
            let live = live.as_ref()?;
            let cfg = s.config()?;
            Some(CatalogInput {
                server: s.name(),
                enabled_tools: &cfg.enabled_tools,
                listing: &live.listing,
            })
        })
        .collect();
    let next = Catalog::build(&inputs);
    let mut slot = inner.catalog.write().unwrap_or_else(|p| p.into_inner());
    // Rebuilds happen on every state change: warn only about problems that are new.
    for warning in next
        .warnings()
        .iter()
        .filter(|w| !slot.warnings().contains(w))
    {
        tracing::warn!(server = %warning.log_server(), "{warning}");
    }
    let changed = slot.tools() != next.tools();
    *slot = Arc::new(next);
    drop(slot);
    // A server that reconnected (new session) is announced even when its tools look the same:
    // agents should re-list, since the server may have changed behind the same names.
    let mut sessions = inner.sessions.lock().unwrap_or_else(|p| p.into_inner());
    let mut reconnected = false;
    for (server, live) in &lives {
        if let Some(live) = live {
            let before = sessions.insert(server.name().clone(), live.session);
            reconnected |= before.is_some_and(|b| b != live.session);
        }
    }
    drop(sessions);
    let changed = changed || reconnected;
    if changed {
        let _ = inner.events.send(HubEvent::ToolsChanged);
    }
}
