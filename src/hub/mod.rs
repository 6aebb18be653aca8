//! The hub: every server's supervisor, the merged catalog, change events and call routing.
//!
//! The CLI's `serve` and the desktop shell each own one [`Hub`]; the local endpoint, the control
//! API and the tray read from it. Supervisors report changes by name on one channel; a single
//! catalog task coalesces them (at most one rebuild per [`COALESCE`]), rebuilds the merged
//! [`Catalog`] from every running server's listing, and emits [`HubEvent`]s.
//!
//! Events emitted: [`HubEvent::ServerChanged`] on every state change, and
//! [`HubEvent::ToolsChanged`] when the set of wrapped tools (names or definitions) changed,
//! which the endpoint turns into `notifications/tools/list_changed`. A reload holds
//! announcements back until it is done, so agents hear one `list_changed` per reload.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the server set, status, start/stop/restart, shutdown |
//! | `route.rs` | [`Hub::call`]: routing, the retry-once-after-reconnect rule, error results |
//! | `reload.rs` | [`Hub::reload`]: diffing a new config against the running set |
//! | `rebuild.rs` | the catalog task |

mod rebuild;
mod reload;
mod route;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::sync::{broadcast, mpsc};

use crate::catalog::Catalog;
use crate::config::Config;
use crate::supervisor::{self, ServerHandle, ServerState, ServerStatus};

pub use reload::{RELOAD_SETTLE, ReloadReport};

/// Minimum time between two catalog rebuilds (and so between two `list_changed` announcements).
pub const COALESCE: Duration = Duration::from_millis(100);

/// Something that changed in the hub.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HubEvent {
    /// A server's status changed (state, error, pid, restarts or tool count).
    ServerChanged(Arc<str>),
    /// The set of servers changed (a reload added or removed some).
    ServersChanged,
    /// The merged tool list changed.
    ToolsChanged,
}

/// Why a server command was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HubError {
    /// No server has that name.
    #[error("no server named \"{name}\"")]
    UnknownServer {
        /// The name asked for.
        name: String,
    },
    /// The server's config entry is invalid, so it cannot run.
    #[error("server \"{name}\" has an invalid config entry: {reason}")]
    InvalidEntry {
        /// The server.
        name: String,
        /// The validation error.
        reason: String,
    },
}

/// A cheap, cloneable handle on the hub.
#[derive(Clone, Debug)]
pub struct Hub {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Servers {
    order: Vec<ServerHandle>,
    by_name: HashMap<Arc<str>, ServerHandle>,
}

impl Servers {
    fn from_handles(order: Vec<ServerHandle>) -> Servers {
        let by_name = order
            .iter()
            .map(|s| (s.name().clone(), s.clone()))
            .collect();
        Servers { order, by_name }
    }
}

#[derive(Debug)]
struct Inner {
    servers: RwLock<Servers>,
    catalog: RwLock<Arc<Catalog>>,
    events: broadcast::Sender<HubEvent>,
    changed: mpsc::UnboundedSender<Arc<str>>,
    /// Reloads in progress; while non-zero, `ToolsChanged` is held back.
    holds: AtomicUsize,
    /// A `ToolsChanged` was held back and must be sent when the last hold ends.
    held_back: AtomicBool,
    /// Serialises reloads.
    reload_lock: tokio::sync::Mutex<()>,
    /// The [`supervisor::Live::generation`] each running server had at the last rebuild.
    generations: std::sync::Mutex<HashMap<Arc<str>, u64>>,
}

impl Hub {
    /// Starts a supervisor for every server in `config` (all connecting concurrently) and the
    /// catalog task. Must be called inside a Tokio runtime.
    pub fn start(config: &Config) -> Hub {
        let (changed, changed_rx) = mpsc::unbounded_channel();
        let order = config
            .servers
            .iter()
            .map(|spec| supervisor::spawn(spec, &config.ssrf_whitelist, changed.clone()))
            .collect();
        let (events, _) = broadcast::channel(256);
        let inner = Arc::new(Inner {
            servers: RwLock::new(Servers::from_handles(order)),
            catalog: RwLock::new(Arc::new(Catalog::default())),
            events,
            changed,
            holds: AtomicUsize::new(0),
            held_back: AtomicBool::new(false),
            reload_lock: tokio::sync::Mutex::new(()),
            generations: std::sync::Mutex::new(HashMap::new()),
        });
        tokio::spawn(rebuild::catalog_task(Arc::downgrade(&inner), changed_rx));
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

    /// Every server's handle, in config order.
    pub fn servers(&self) -> Vec<ServerHandle> {
        self.inner.read_servers().order.clone()
    }

    /// The handle of the server called `name`.
    pub fn server(&self, name: &str) -> Option<ServerHandle> {
        self.inner.read_servers().by_name.get(name).cloned()
    }

    /// Every server's status, in config order, with tool counts from the merged catalog.
    ///
    /// A server is reported `running` only once the merged catalog holds its current session's
    /// listing (until then it is still `starting`), so a status that says `running` and a
    /// `tools/list` that follows it always agree.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        // Folded first: the catalog read after it is at least as new.
        let folded: Vec<bool> = self
            .servers()
            .iter()
            .map(|s| self.inner.folded(s))
            .collect();
        let catalog = self.catalog();
        self.servers()
            .iter()
            .zip(folded)
            .map(|(s, folded)| {
                let mut status = s.snapshot().status;
                if status.state == ServerState::Running {
                    if folded {
                        status.tools = catalog.tool_count_for(s.name());
                    } else {
                        status.state = ServerState::Starting;
                    }
                }
                status
            })
            .collect()
    }

    /// Starts `name` (forgetting past failures).
    ///
    /// # Errors
    /// [`HubError`] for an unknown server or an invalid entry.
    pub async fn start_server(&self, name: &str) -> Result<(), HubError> {
        self.runnable(name)?.start().await;
        Ok(())
    }

    /// Stops `name` and waits until its processes are gone.
    ///
    /// # Errors
    /// [`HubError::UnknownServer`].
    pub async fn stop_server(&self, name: &str) -> Result<(), HubError> {
        let server = self.server(name).ok_or_else(|| HubError::UnknownServer {
            name: name.to_owned(),
        })?;
        server.stop().await;
        Ok(())
    }

    /// Stops `name` and starts it again.
    ///
    /// # Errors
    /// [`HubError`] for an unknown server or an invalid entry.
    pub async fn restart_server(&self, name: &str) -> Result<(), HubError> {
        self.runnable(name)?.restart().await;
        Ok(())
    }

    fn runnable(&self, name: &str) -> Result<ServerHandle, HubError> {
        let server = self.server(name).ok_or_else(|| HubError::UnknownServer {
            name: name.to_owned(),
        })?;
        if server.config().is_none() {
            return Err(HubError::InvalidEntry {
                name: name.to_owned(),
                reason: server.snapshot().status.last_error.unwrap_or_default(),
            });
        }
        Ok(server)
    }

    /// Waits until no server is `starting` (or `timeout` passes) and the catalog has caught up.
    pub async fn settle(&self, timeout: Duration) {
        settle(&self.inner, &self.servers(), timeout).await;
    }

    /// Stops every server in parallel and waits for their processes to be gone.
    pub async fn shutdown(&self) {
        let servers = self.servers();
        futures::future::join_all(servers.iter().map(|s| s.stop())).await;
    }
}

impl Inner {
    fn read_servers(&self) -> std::sync::RwLockReadGuard<'_, Servers> {
        // Writers replace the whole set in one assignment; a poisoned lock still holds a valid set.
        self.servers.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the merged catalog holds `server`'s current session (true when it has none).
    fn folded(&self, server: &ServerHandle) -> bool {
        let Some(live) = server.live() else {
            return true;
        };
        let generations = self.generations.lock().unwrap_or_else(|p| p.into_inner());
        generations.get(server.name()) == Some(&live.generation)
    }

    fn announce_tools_changed(&self) {
        if self.holds.load(Ordering::SeqCst) > 0 {
            self.held_back.store(true, Ordering::SeqCst);
        } else {
            let _ = self.events.send(HubEvent::ToolsChanged);
        }
    }
}

/// Waits until none of `servers` is `starting`, at most `timeout`, then one coalescing period.
async fn settle(inner: &Inner, servers: &[ServerHandle], timeout: Duration) {
    let deadline = tokio::time::Instant::now() + timeout;
    for server in servers {
        let mut watch = server.watch();
        let _ = tokio::time::timeout_at(
            deadline,
            watch.wait_for(|s| s.status.state != ServerState::Starting),
        )
        .await;
    }
    // Until the catalog task has folded in each new session, so the reload's single
    // `tools/list_changed` comes after every new tool is listed.
    while !servers.iter().all(|s| inner.folded(s)) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
