//! The owner's profile state: the config's profiles, each profile's catalog rebuilt with the
//! default one from the same listings, and which profiles' sessions re-list at the next
//! announcement.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::ProfileView;
use crate::catalog::{Catalog, CatalogInput, Route, unmatched_globs};
use crate::config::{ProfileConfig, ProfileSpec};
use crate::hub::Servers;
use crate::hub::owner::Owner;

/// The owner's profile state.
#[derive(Debug, Default)]
pub(in crate::hub) struct Profiles {
    /// The config's profiles, in file order.
    specs: Vec<ProfileSpec>,
    /// What is published.
    pub(in crate::hub) views: Arc<HashMap<Arc<str>, ProfileView>>,
    pub(in crate::hub) order: Arc<[Arc<str>]>,
    /// Profiles whose sessions should re-list at the next announcement.
    pending: HashSet<Arc<str>>,
    /// Source of unique epochs.
    clock: u64,
}

impl Profiles {
    /// Profiles as `specs` has them; applied at the next rebuild.
    pub(in crate::hub) fn new(specs: &[ProfileSpec]) -> Profiles {
        let mut p = Profiles::default();
        p.set(specs);
        p
    }

    /// Replaces the config's profiles (a reload); applied at the next rebuild.
    pub(in crate::hub) fn set(&mut self, specs: &[ProfileSpec]) {
        for spec in specs {
            if let Err(why) = &spec.entry {
                tracing::warn!(profile = %spec.name, "{why}; the profile serves nothing");
            }
        }
        self.specs = specs.to_vec();
        self.order = specs.iter().map(|s| Arc::from(s.name.as_str())).collect();
        // Published at once (status shows them, sockets are opened for them); their
        // catalogs follow at the next rebuild.
        let mut views = HashMap::with_capacity(specs.len());
        for spec in specs {
            let name: Arc<str> = Arc::from(spec.name.as_str());
            let view = match self.views.get(&name) {
                Some(v) => ProfileView {
                    entry: Arc::new(spec.entry.clone()),
                    ..v.clone()
                },
                None => {
                    self.clock += 1;
                    ProfileView {
                        entry: Arc::new(spec.entry.clone()),
                        catalog: Arc::default(),
                        known: Arc::default(),
                        epoch: self.clock,
                        unmatched: Arc::from([]),
                    }
                }
            };
            views.insert(name, view);
        }
        self.views = Arc::new(views);
    }

    /// Makes every pending profile's sessions re-list.
    pub(in crate::hub) fn announce(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let mut views = (*self.views).clone();
        for name in self.pending.drain() {
            if let Some(v) = views.get_mut(&name) {
                self.clock += 1;
                v.epoch = self.clock;
            }
        }
        self.views = Arc::new(views);
    }
}

impl Owner {
    /// Rebuilds every profile's catalog from `inputs` (what the default catalog was built
    /// from); `reconnected` are the servers back on a new session. Profiles whose catalog
    /// changed become pending.
    pub(in crate::hub) fn rebuild_profiles(
        &mut self,
        inputs: &[CatalogInput<'_>],
        reconnected: &HashSet<Arc<str>>,
        all_running: bool,
    ) {
        let old = self.profiles.views.clone();
        let mut views = HashMap::with_capacity(self.profiles.specs.len());
        for spec in &self.profiles.specs {
            let name: Arc<str> = Arc::from(spec.name.as_str());
            let before = old.get(&name);
            let catalog = match &spec.entry {
                Ok(cfg) if all_running => Catalog::build_profile(inputs, self.wrap_resources, cfg),
                Ok(cfg) => {
                    Catalog::build_profile(inputs, self.wrap_resources, cfg).listed_uris_only()
                }
                Err(_) => Catalog::default(),
            };
            let unmatched: Arc<[String]> = match &spec.entry {
                Ok(cfg) if all_listed(cfg, inputs, &self.servers) => {
                    unmatched_globs(inputs, cfg).into()
                }
                _ => before.map_or_else(|| Arc::from([]), |b| b.unmatched.clone()),
            };
            if !unmatched.is_empty() && before.is_none_or(|b| b.unmatched != unmatched) {
                tracing::warn!(
                    profile = %spec.name,
                    "profile entries match nothing its servers list: {}",
                    unmatched.join(", ")
                );
            }
            let changed = before.is_none_or(|b| {
                b.catalog.tools() != catalog.tools()
                    || b.catalog.listed() != catalog.listed()
                    || !b.catalog.native().same_lists(catalog.native())
            }) || spec
                .entry
                .as_ref()
                .is_ok_and(|cfg| reconnected.iter().any(|s| cfg.has_server(s)));
            let known = match before {
                Some(b) => remembered(&b.catalog, &catalog, &b.known, &self.servers),
                None => Arc::default(),
            };
            if changed {
                self.profiles.pending.insert(name.clone());
            }
            views.insert(
                name,
                ProfileView {
                    entry: Arc::new(spec.entry.clone()),
                    catalog: Arc::new(catalog),
                    known,
                    unmatched,
                    epoch: before.map_or_else(
                        || {
                            self.profiles.clock += 1;
                            self.profiles.clock
                        },
                        |b| b.epoch,
                    ),
                },
            );
        }
        self.profiles.views = Arc::new(views);
    }
}

/// Whether every enabled server `profile` names (every server, when it names none) is in
/// `inputs`, i.e. running with its listing in the catalog.
fn all_listed(profile: &ProfileConfig, inputs: &[CatalogInput<'_>], servers: &Servers) -> bool {
    servers
        .order
        .iter()
        .filter(|s| profile.has_server(s.name()))
        .filter(|s| s.config().is_some_and(|c| !c.disabled))
        .all(|s| inputs.iter().any(|i| i.server == &**s.name()))
}

/// The routes of servers that left `next` (see [`crate::hub::View::known`]): a server that
/// lists again replaces its old routes, one that left the config loses them.
pub(in crate::hub) fn remembered(
    prev: &Catalog,
    next: &Catalog,
    known: &HashMap<String, Route>,
    servers: &Servers,
) -> Arc<HashMap<String, Route>> {
    let listed: HashSet<&str> = next.routes().map(|(_, r)| &*r.server).collect();
    let keep = |r: &Route| !listed.contains(&*r.server) && servers.by_name.contains_key(&r.server);
    let mut out: HashMap<String, Route> = known
        .iter()
        .filter(|(_, r)| keep(r))
        .map(|(name, r)| (name.clone(), r.clone()))
        .collect();
    // What is in the catalog now is what a server that leaves it had last.
    out.extend(
        prev.routes()
            .filter(|(_, r)| keep(r))
            .map(|(name, r)| (name.to_owned(), r.clone())),
    );
    Arc::new(out)
}
