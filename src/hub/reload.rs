//! [`Hub::reload`]: apply a new config to the running set without disturbing what did not
//! change (DESIGN §3; control API `reload`).
//!
//! | entry in old vs new config | effect |
//! |---|---|
//! | only in new | a supervisor is started |
//! | only in old | the server is stopped and removed |
//! | in both, different | stopped, then started with the new entry |
//! | in both, identical | untouched: same process, same session |
//!
//! Agents stay connected throughout and hear one `tools/list_changed` at the end (announcements
//! are held while the reload runs and until the new servers have left `starting`).

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Hub, HubEvent, Servers, rebuild, settle};
use crate::config::{Config, ServerSpec, TransportConfig};
use crate::supervisor::{self, ServerHandle};

/// The longest a reload waits for added or changed servers to finish starting, in seconds.
pub const RELOAD_SETTLE: Duration = Duration::from_secs(60);

/// What a reload did, by server name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReloadReport {
    /// Servers that were started.
    pub added: Vec<String>,
    /// Servers that were stopped and removed.
    pub removed: Vec<String>,
    /// Servers that were restarted with a changed entry.
    pub changed: Vec<String>,
    /// Servers left running as they were.
    pub unchanged: Vec<String>,
}

impl Hub {
    /// Applies `config` to the running set (see the module docs) and returns once the new and
    /// changed servers have started (or failed), at most [`RELOAD_SETTLE`] (60 s).
    pub async fn reload(&self, config: &Config) -> ReloadReport {
        let inner = &self.inner;
        let _serial = inner.reload_lock.lock().await;
        inner.holds.fetch_add(1, Ordering::SeqCst);

        let current = self.servers();
        let mut report = ReloadReport::default();
        let mut to_stop: Vec<ServerHandle> = Vec::new();
        // `None`: to be spawned once the stops are done.
        let mut order: Vec<Option<ServerHandle>> = Vec::new();
        for spec in &config.servers {
            match current.iter().find(|s| **s.name() == *spec.name) {
                Some(old) if same_entry(old, spec, config) => {
                    report.unchanged.push(spec.name.clone());
                    order.push(Some(old.clone()));
                }
                Some(old) => {
                    report.changed.push(spec.name.clone());
                    to_stop.push(old.clone());
                    order.push(None);
                }
                None => {
                    report.added.push(spec.name.clone());
                    order.push(None);
                }
            }
        }
        for old in &current {
            if !config.servers.iter().any(|s| *s.name == **old.name()) {
                report.removed.push(old.name().to_string());
                to_stop.push(old.clone());
            }
        }

        // Stop first, so a changed server never runs twice at once.
        futures::future::join_all(to_stop.iter().map(|s| s.stop())).await;
        let mut fresh = Vec::new();
        let order: Vec<ServerHandle> = order
            .into_iter()
            .zip(&config.servers)
            .map(|(slot, spec)| {
                slot.unwrap_or_else(|| {
                    let handle =
                        supervisor::spawn(spec, &config.ssrf_whitelist, inner.changed.clone());
                    fresh.push(handle.clone());
                    handle
                })
            })
            .collect();
        *inner.servers.write().unwrap_or_else(|p| p.into_inner()) = Servers::from_handles(order);
        let _ = inner.events.send(HubEvent::ServersChanged);
        drop(to_stop);
        tracing::info!(
            added = report.added.len(),
            removed = report.removed.len(),
            changed = report.changed.len(),
            unchanged = report.unchanged.len(),
            "config reloaded"
        );

        settle(inner, &fresh, RELOAD_SETTLE).await;
        rebuild::rebuild(inner);
        if inner.holds.fetch_sub(1, Ordering::SeqCst) == 1
            && inner.held_back.swap(false, Ordering::SeqCst)
        {
            let _ = inner.events.send(HubEvent::ToolsChanged);
        }
        report
    }
}

/// Whether the running server `old` was started from exactly `spec`'s entry (and, for a remote
/// server, the same `ssrfWhitelist`).
fn same_entry(old: &ServerHandle, spec: &ServerSpec, config: &Config) -> bool {
    match (old.config(), &spec.entry) {
        (Some(cfg), Ok(new)) => {
            let remote = !matches!(new.transport, TransportConfig::Stdio(_));
            **cfg == *new && (!remote || *old.whitelist() == config.ssrf_whitelist)
        }
        (None, Err(new_err)) => {
            old.snapshot().status.last_error.as_deref() == Some(new_err.to_string().as_str())
        }
        _ => false,
    }
}
