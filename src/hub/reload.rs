//! [`Hub::reload`]: apply a new config to the running set without disturbing what did not
//! change (DESIGN §3; control API `reload`).
//!
//! | entry in old vs new config | effect |
//! |---|---|
//! | only in new | a supervisor is started |
//! | only in old | the server is stopped and removed |
//! | in both, different | stopped, then started with the new entry |
//! | in both, identical | untouched: same process, same session |
//! | in both, only `roots` differ | untouched, but its roots are replaced and it gets `notifications/roots/list_changed` |
//! | in both, only `toolPolicy` / `approvalTimeout` differ | untouched; the next call follows the new policy |
//!
//! Agents stay connected throughout and hear one `tools/list_changed` at the end (the owner
//! holds announcements back while the reload runs and until the new servers have left
//! `starting`). Reloads run one at a time, in the order they were asked for.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::Hub;
use super::owner::Msg;
use crate::config::{Config, ServerConfig, ServerSpec, TransportConfig};
use crate::supervisor::ServerHandle;

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
    /// The reloaded file's warnings (unknown keys, kept in the file but ignored), so whoever
    /// asked for the reload sees them and not only the companion's log. Filled in by the
    /// control API's `reload`; absent from the JSON when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Added or changed servers that did not start (an invalid entry, a command that fails),
    /// each as `name: last error`, so whoever asked sees it. Filled in by the control API's
    /// `reload`; absent from the JSON when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
}

impl Hub {
    /// Applies `config` to the running set (see the module docs) and returns once the new and
    /// changed servers have started (or failed), at most [`RELOAD_SETTLE`] (60 s). A hub that
    /// is shutting down changes nothing and reports nothing.
    pub async fn reload(&self, config: &Config) -> ReloadReport {
        let config = Box::new(config.clone());
        self.ask(|reply| Msg::Reload { config, reply })
            .await
            .unwrap_or_default()
    }
}

/// What a reload will do, decided against the running set before anything is stopped.
pub(super) struct Plan {
    pub(super) report: ReloadReport,
    /// Servers to stop before the new set is spawned (changed and removed ones).
    pub(super) to_stop: Vec<ServerHandle>,
    /// One slot per server of the new config, in its order: the running server to keep, or
    /// `None` for one to spawn.
    pub(super) keep: Vec<Option<ServerHandle>>,
}

/// Diffs `config` against `current`.
pub(super) fn plan(current: &[ServerHandle], config: &Config) -> Plan {
    let mut report = ReloadReport::default();
    let mut to_stop = Vec::new();
    let mut keep = Vec::new();
    for spec in &config.servers {
        match current.iter().find(|s| **s.name() == *spec.name) {
            Some(old) if same_entry(old, spec, config) => {
                report.unchanged.push(spec.name.clone());
                keep.push(Some(old.clone()));
            }
            Some(old) => {
                report.changed.push(spec.name.clone());
                to_stop.push(old.clone());
                keep.push(None);
            }
            None => {
                report.added.push(spec.name.clone());
                keep.push(None);
            }
        }
    }
    for old in current {
        if !config.servers.iter().any(|s| *s.name == **old.name()) {
            report.removed.push(old.name().to_string());
            to_stop.push(old.clone());
        }
    }
    Plan {
        report,
        to_stop,
        keep,
    }
}

/// Whether the running server `old` was started from `spec`'s entry (and, for a remote
/// server, the same `ssrfWhitelist`), apart from `roots`, `toolPolicy` and `approvalTimeout`,
/// which change without a restart.
fn same_entry(old: &ServerHandle, spec: &ServerSpec, config: &Config) -> bool {
    match (old.config(), &spec.entry) {
        (Some(cfg), Ok(new)) => {
            let remote = !matches!(new.transport, TransportConfig::Stdio(_));
            let without_roots = |c: &ServerConfig| ServerConfig {
                roots: Vec::new(),
                tool_policy: crate::config::ToolPolicy::default(),
                approval_timeout: crate::config::DEFAULT_APPROVAL_TIMEOUT,
                ..c.clone()
            };
            without_roots(cfg) == without_roots(new)
                && (!remote || *old.whitelist() == config.ssrf_whitelist)
        }
        // An entry that is still invalid in the same way: nothing to restart.
        (None, Err(new_err)) => old.entry_error() == Some(new_err),
        _ => false,
    }
}
