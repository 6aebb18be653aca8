//! The catalog task: folds supervisor change reports into a rebuilt merged catalog, at most once
//! per [`super::COALESCE`], and emits the hub's events.

use std::sync::{Arc, Weak};

use tokio::sync::mpsc;

use super::{COALESCE, HubEvent, Inner};
use crate::catalog::{Catalog, CatalogInput};

pub(super) async fn catalog_task(hub: Weak<Inner>, mut changed: mpsc::UnboundedReceiver<Arc<str>>) {
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

/// Rebuilds the merged catalog from every running server and announces a changed tool list, or
/// a server that came back on a new session.
pub(super) fn rebuild(inner: &Inner) {
    let servers = inner.read_servers().order.clone();
    let lives: Vec<_> = servers.iter().map(|s| (s, s.live())).collect();
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
    // A server that reconnected (new session generation) is announced even when its tools look
    // the same: the server may have changed behind the same names, so agents should re-list.
    let mut generations = inner.generations.lock().unwrap_or_else(|p| p.into_inner());
    let mut reconnected = false;
    for (server, live) in &lives {
        if let Some(live) = live {
            let before = generations.insert(server.name().clone(), live.generation);
            reconnected |= before.is_some_and(|b| b != live.generation);
        }
    }
    drop(generations);
    if changed || reconnected {
        inner.announce_tools_changed();
    }
}
