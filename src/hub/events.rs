//! [`HubEvents`]: a subscription to the hub's changes, following its handle's profile.

use std::sync::Arc;

use tokio::sync::watch;

use super::{Hub, HubEvent, View, profiles};

/// A subscription to the hub's changes. Changes that happen while the subscriber is busy are
/// folded: it sees at most one pending [`HubEvent`] of each kind, never a backlog.
#[derive(Debug)]
pub struct HubEvents {
    view: watch::Receiver<Arc<View>>,
    profile: profiles::Chosen,
    /// The person's changes of this session's profile, when it is an agent session's.
    person: Option<watch::Receiver<u64>>,
    /// How many of those changes this subscriber has announced.
    person_seen: u64,
    /// The profile `tools_seen` counts for: a session's profile chosen at `initialize` (before
    /// the agent listed anything) restarts the count instead of announcing a change.
    counted_for: Option<Arc<str>>,
    tools_seen: u64,
    servers_seen: u64,
}

impl HubEvents {
    /// Waits for the next change. `None` once the hub is gone.
    pub async fn recv(&mut self) -> Option<HubEvent> {
        loop {
            let view = self.view.borrow_and_update().clone();
            let profile = self.profile.get();
            let tools_epoch = view.tools_epoch_for(profile.as_deref());
            // The person moved this session to another profile: it re-lists.
            if let Some(person) = &mut self.person
                && *person.borrow_and_update() != self.person_seen
            {
                self.person_seen = *person.borrow();
                self.counted_for = profile;
                self.tools_seen = tools_epoch;
                return Some(HubEvent::ToolsChanged);
            }
            if profile != self.counted_for {
                self.counted_for = profile;
                self.tools_seen = self.profile.epoch_at_choice().unwrap_or(tools_epoch);
            }
            if tools_epoch != self.tools_seen {
                self.tools_seen = tools_epoch;
                return Some(HubEvent::ToolsChanged);
            }
            if view.servers_epoch != self.servers_seen {
                self.servers_seen = view.servers_epoch;
                return Some(HubEvent::ServersChanged);
            }
            match &mut self.person {
                Some(person) => tokio::select! {
                    r = self.view.changed() => r.ok()?,
                    // The sender lives in the session's choice, which this subscription holds.
                    _ = person.changed() => {}
                },
                None => self.view.changed().await.ok()?,
            }
        }
    }
}

impl Hub {
    /// Subscribes to [`HubEvent`]s from now on; [`HubEvent::ToolsChanged`] follows this
    /// handle's profile.
    pub fn subscribe(&self) -> HubEvents {
        let mut view = self.view.clone();
        let now = view.borrow_and_update().clone();
        HubEvents {
            view,
            profile: self.profile.clone(),
            person: self.profile.session().map(|c| c.changes()),
            person_seen: self.profile.session().map_or(0, |c| *c.changes().borrow()),
            counted_for: self.profile.get(),
            tools_seen: now.tools_epoch_for(self.profile.get().as_deref()),
            servers_seen: now.servers_epoch,
        }
    }
}
