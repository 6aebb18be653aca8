//! The owner's side of a reload: stop the servers it replaces, spawn the new set and publish it,
//! wait for the new servers to start, then rebuild, release the held-back `list_changed` and
//! answer (the diagram in [`super`]).

use std::sync::Arc;

use tokio::sync::oneshot;

use super::{Msg, Owner, wait_started};
use crate::config::Config;
use crate::hub::Servers;
use crate::hub::reload::{self, Plan, ReloadReport};
use crate::supervisor::ServerHandle;

/// A reload between its first and last message.
pub(super) struct Reloading {
    config: Box<Config>,
    plan: Plan,
    reply: oneshot::Sender<ReloadReport>,
}

impl Owner {
    pub(super) fn begin_reload(
        &mut self,
        config: Box<Config>,
        reply: oneshot::Sender<ReloadReport>,
    ) {
        let plan = reload::plan(&self.servers.order, &config);
        // Stop first, so a changed server never runs twice at once.
        let to_stop = plan.to_stop.clone();
        self.after(
            async move {
                futures::future::join_all(to_stop.iter().map(ServerHandle::stop)).await;
            },
            Msg::ReloadStopped,
        );
        // Calls for a changed server wait for its successor instead of failing while it stops.
        self.replacing = Arc::new(
            plan.report
                .changed
                .iter()
                .map(|name| Arc::from(name.as_str()))
                .collect(),
        );
        self.publish();
        self.reloading = Some(Reloading {
            config,
            plan,
            reply,
        });
    }

    pub(super) fn reload_stopped(&mut self) {
        let Some(reloading) = self.reloading.take() else {
            return;
        };
        let config = &reloading.config;
        let mut fresh = Vec::new();
        let order: Vec<ServerHandle> = reloading
            .plan
            .keep
            .iter()
            .zip(&config.servers)
            .map(|(kept, spec)| match (kept, &spec.entry) {
                // Kept servers take the new entry: it differs at most in `roots`, `toolPolicy` and
                // `approvalTimeout`.
                (Some(old), Ok(cfg)) => old.with_entry(cfg),
                (Some(old), Err(_)) => old.clone(),
                (None, _) => {
                    let handle = self.spawn_server(spec, &config.ssrf_whitelist);
                    fresh.push(handle.clone());
                    handle
                }
            })
            .collect();
        // A new handle counts its session generations from 1 again: what the old one had
        // must not make its first session look folded into the catalog.
        for handle in &fresh {
            self.generations.remove(handle.name());
        }
        // Pins outlive edits of an entry (a new command, `disabled` and back, a timeout):
        // what the edited entry lists that differs from what was approved waits like any other
        // change, so an edit never approves anything by itself.
        self.servers = Arc::new(Servers::from_handles(order));
        self.warnings = config.warnings.clone().into();
        self.wrap_resources = config.wrap_resources;
        self.tool_search = config.tool_search.clone();
        self.profiles.set(&config.profiles);
        self.refused = None;
        self.replacing = Arc::default();
        self.forget_removed_routes();
        self.servers_epoch += 1;
        self.publish();
        let report = &reloading.plan.report;
        tracing::info!(
            added = report.added.len(),
            removed = report.removed.len(),
            changed = report.changed.len(),
            unchanged = report.unchanged.len(),
            "config reloaded"
        );
        self.reloading = Some(reloading);
        self.after(
            async move { wait_started(&fresh, reload::RELOAD_SETTLE).await },
            Msg::ReloadSettled,
        );
    }

    pub(super) fn reload_settled(&mut self) {
        if self.reloading.is_none() {
            return;
        }
        // The reload's last rebuild still counts as during the reload: its change joins the
        // held-back one, so agents hear one `list_changed`, not one for it and one for the rest.
        self.rebuild();
        let Some(reloading) = self.reloading.take() else {
            return;
        };
        if std::mem::take(&mut self.held_back) {
            self.tools_epoch += 1;
        }
        self.profiles.announce();
        self.publish();
        let _ = reloading.reply.send(reloading.plan.report);
        if let Some((config, reply)) = self.queued.pop_front() {
            self.begin_reload(config, reply);
        }
    }
}
