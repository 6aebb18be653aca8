//! Rebuilding the merged catalog from every running server's listing (the owner task's part
//! that reads the supervisors' snapshots).

use std::collections::HashSet;
use std::sync::Arc;

use super::owner::Owner;
use super::profiles::remembered;
use crate::catalog::{Catalog, CatalogInput};

impl Owner {
    /// Replaces the catalog with one built from the servers' current snapshots. Returns whether
    /// agents should re-list: the wrapped tools changed, or a server came back on a new session
    /// (it may have changed behind the same names).
    pub(super) fn rebuild_catalog(&mut self) -> bool {
        let servers = self.servers.clone();
        let lives: Vec<_> = servers.order.iter().map(|s| (s, s.live())).collect();
        // Each listing narrowed to the tools agents may see (`pins.rs`), before any catalog
        // (the default one and every profile's) is built from it.
        let mut waiting = super::pins::WaitingByServer::new();
        let narrowed: Vec<_> = lives
            .iter()
            .filter_map(|(s, live)| {
                let live = live.as_ref()?;
                let cfg = s.config()?;
                let listing = self.pins.narrow(
                    s.name(),
                    cfg.auto_approve_changes,
                    &live.listing,
                    &mut waiting,
                );
                Some((s, cfg, listing))
            })
            .collect();
        self.pins.finish(waiting);
        let inputs: Vec<CatalogInput<'_>> = narrowed
            .iter()
            .map(|(s, cfg, listing)| CatalogInput {
                server: s.name(),
                enabled_tools: &cfg.enabled_tools,
                listing,
            })
            .collect();
        // A URI no table lists goes to the only server with resources only while every
        // configured server is running: one that is out of sight might own it.
        let all_running = lives
            .iter()
            .all(|(s, live)| live.is_some() || s.config().is_none_or(|cfg| cfg.disabled));
        let mut next =
            Catalog::build_with(&inputs, self.wrap_resources).with_tool_search(&self.tool_search);
        if !all_running {
            next = next.listed_uris_only();
        }
        // Rebuilds happen on every state change: warn only about problems that are new.
        for warning in next
            .warnings()
            .iter()
            .filter(|w| !self.catalog.warnings().contains(w))
        {
            tracing::warn!(server = %warning.log_server(), "{warning}");
        }
        let changed = self.catalog.tools() != next.tools()
            || self.catalog.listed() != next.listed()
            || !self.catalog.native().same_lists(next.native());
        let mut reconnected = HashSet::new();
        for (server, live) in &lives {
            if let Some(live) = live {
                let before = self
                    .generations
                    .insert(server.name().clone(), live.generation);
                if before.is_some_and(|b| b != live.generation) {
                    reconnected.insert(server.name().clone());
                }
            }
        }
        self.rebuild_profiles(&inputs, &reconnected, all_running);
        drop(inputs);
        drop(narrowed);
        drop(lives);
        self.known = remembered(&self.catalog, &next, &self.known, &self.servers);
        self.catalog = Arc::new(next);
        changed || !reconnected.is_empty()
    }
}

impl Owner {
    /// Drops the remembered routes of servers that are no longer in the config.
    pub(super) fn forget_removed_routes(&mut self) {
        if self
            .known
            .values()
            .any(|r| !self.servers.by_name.contains_key(&r.server))
        {
            let known = self
                .known
                .iter()
                .filter(|(_, r)| self.servers.by_name.contains_key(&r.server))
                .map(|(name, r)| (name.clone(), r.clone()))
                .collect();
            self.known = Arc::new(known);
        }
    }
}
