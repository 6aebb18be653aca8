//! Rebuilding the merged catalog from every running server's listing (the owner task's part
//! that reads the supervisors' snapshots).

use std::sync::Arc;

use super::owner::Owner;
use crate::catalog::{Catalog, CatalogInput};

impl Owner {
    /// Replaces the catalog with one built from the servers' current snapshots. Returns whether
    /// agents should re-list: the wrapped tools changed, or a server came back on a new session
    /// (it may have changed behind the same names).
    pub(super) fn rebuild_catalog(&mut self) -> bool {
        let lives: Vec<_> = self.servers.order.iter().map(|s| (s, s.live())).collect();
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
        // Rebuilds happen on every state change: warn only about problems that are new.
        for warning in next
            .warnings()
            .iter()
            .filter(|w| !self.catalog.warnings().contains(w))
        {
            tracing::warn!(server = %warning.log_server(), "{warning}");
        }
        let changed = self.catalog.tools() != next.tools();
        self.catalog = Arc::new(next);
        let mut reconnected = false;
        for (server, live) in &lives {
            if let Some(live) = live {
                let before = self
                    .generations
                    .insert(server.name().clone(), live.generation);
                reconnected |= before.is_some_and(|b| b != live.generation);
            }
        }
        changed || reconnected
    }
}
