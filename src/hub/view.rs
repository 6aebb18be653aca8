//! What the owner task publishes and every handle reads without waiting: the server set, the
//! catalog, the change counters and the tools waiting for approval, and the statuses read from
//! them.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::{Hub, WaitingByServer, profiles};
use crate::catalog::{Catalog, Route};
use crate::supervisor::{ServerHandle, ServerState, ServerStatus};

/// The server set in config order, with a by-name index.
#[derive(Debug, Default)]
pub(crate) struct Servers {
    pub(super) order: Vec<ServerHandle>,
    pub(super) by_name: HashMap<Arc<str>, ServerHandle>,
}

impl Servers {
    pub(super) fn from_handles(order: Vec<ServerHandle>) -> Servers {
        let by_name = order
            .iter()
            .map(|s| (s.name().clone(), s.clone()))
            .collect();
        Servers { order, by_name }
    }
}

/// What the owner task last published. Replaced whole on every change, never edited.
#[derive(Debug, Default)]
pub(crate) struct View {
    pub(super) servers: Arc<Servers>,
    pub(super) catalog: Arc<Catalog>,
    /// The last known routes of servers that are in the config but not in the catalog right
    /// now (restarting, backing off, stopped, failed): a call for one of their tools waits for
    /// the server or says why it cannot, instead of "unknown tool" (see `route.rs`).
    pub(super) known: Arc<HashMap<String, Route>>,
    /// Servers a running reload is replacing: a call for one of them waits for the new one.
    pub(super) replacing: Arc<HashSet<Arc<str>>>,
    /// Each running server's session generation the catalog was last built from.
    pub(super) generations: Arc<HashMap<Arc<str>, u64>>,
    /// The warnings of the config in effect (unknown keys), as [`Config::warnings`](crate::config::Config::warnings) words them.
    pub(super) warnings: Arc<[String]>,
    /// Counts announced tool-list changes (one per `tools/list_changed`).
    pub(super) tools_epoch: u64,
    /// Counts rebuilds that followed a server report, and server-set changes.
    pub(super) servers_epoch: u64,
    /// Each profile of the config in effect, by name (`profiles/`).
    pub(super) profiles: Arc<HashMap<Arc<str>, profiles::ProfileView>>,
    /// The profiles' names in config order.
    pub(super) profile_order: Arc<[Arc<str>]>,
    /// Tools withheld until the person approves them, by server (`pins.rs`).
    pub(super) waiting: Arc<WaitingByServer>,
}

impl View {
    /// Whether the catalog holds `server`'s current session (true when it has none).
    pub(super) fn folded(&self, server: &ServerHandle) -> bool {
        server
            .live()
            .is_none_or(|live| self.generations.get(server.name()) == Some(&live.generation))
    }
}

impl Hub {
    pub(super) fn view(&self) -> Arc<View> {
        self.view.borrow().clone()
    }

    /// The catalog this handle's session sees as of now: the merged one, or its profile's
    /// (`profiles/`). Cheap: an `Arc` clone.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.view().catalog_for(self.profile.get().as_deref())
    }

    /// The warnings of the config in effect (the one the hub started with, or the last one
    /// [`Hub::reload`] applied): one sentence each, naming the key (`Config::warnings`); first,
    /// when the file changed since and could not be used, why ([`Hub::config_refused`]).
    pub fn config_warnings(&self) -> Arc<[String]> {
        self.view().warnings.clone()
    }

    /// The tools withheld from agents until the person approves them, by server.
    pub fn waiting(&self) -> Arc<WaitingByServer> {
        self.view().waiting.clone()
    }

    /// Every server's handle, in config order.
    pub fn servers(&self) -> Vec<ServerHandle> {
        self.view().servers.order.clone()
    }

    /// The handle of the server called `name`.
    pub fn server(&self, name: &str) -> Option<ServerHandle> {
        self.view().servers.by_name.get(name).cloned()
    }

    /// Every server's status, in config order, with tool counts from the merged catalog.
    ///
    /// A server is reported `running` only once the merged catalog holds its current session's
    /// listing (until then it is still `starting`), so a status that says `running` and a
    /// `tools/list` that follows it always agree.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        statuses_in(&self.view())
    }
}

/// Every server's status in `view` ([`Hub::statuses`]).
pub(super) fn statuses_in(view: &View) -> Vec<ServerStatus> {
    view.servers
        .order
        .iter()
        .map(|s| {
            let mut status = s.snapshot().status;
            status.waiting_approval = view.waiting.get(s.name()).map_or(0, |w| w.len());
            if status.state == ServerState::Running {
                if view.folded(s) {
                    status.tools = view.catalog.tool_count_for(s.name());
                } else {
                    status.state = ServerState::Starting;
                }
            }
            status
        })
        .collect()
}
