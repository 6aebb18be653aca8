//! Profiles in the hub: each profile's catalog, rebuilt with the default one, and the one
//! rule every agent session's view of the hub follows.
//!
//! A [`Hub`] handle carries the profile its session got: named by the socket it connected to,
//! or, on the main socket, chosen once at `initialize` by the agent's `clientInfo.name`
//! ([`Hub::choose_for_client`]); otherwise the default view, everything.
//! Every read of the catalog by a session — `tools/list` on both paths, routing a call on the
//! fast path ([`Hub::fast_target`]) and on the rmcp path ([`Hub::call`]), prompts, resources,
//! templates, completions, subscriptions — goes through [`Hub::catalog`], which answers with
//! the profile's catalog; so what a profile does not serve is unknown to its sessions, with
//! the same errors as a name no server has. A profile whose entry is invalid, or that a reload
//! removed, serves nothing.
//!
//! `list_changed` follows the profile's catalog: a profile's sessions hear of a change only
//! when its own catalog changed (or one of its servers came back on a new session), once per
//! reload like the default view.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::owner::Owner;
use super::{Hub, Servers, View};
use crate::catalog::{Catalog, CatalogInput, Route, unmatched_globs};
use crate::config::{ProfileConfig, ProfileSpec};

/// One profile as published: its entry and, when valid, its catalog.
#[derive(Clone, Debug)]
pub(crate) struct ProfileView {
    /// The validated entry, or why it cannot be served.
    entry: Arc<Result<ProfileConfig, String>>,
    catalog: Arc<Catalog>,
    /// As [`View::known`], under the profile's names.
    known: Arc<HashMap<String, Route>>,
    /// Changes whenever the profile's sessions should re-list; unique across profiles.
    epoch: u64,
    /// Its globs that match nothing its servers list (once they all listed).
    unmatched: Arc<[String]>,
}

/// A profile as `status` shows it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProfileStatus {
    /// The key under `profiles`.
    pub name: String,
    /// The servers it serves from (every server when its entry names none), in config order.
    pub servers: Vec<String>,
    /// How many tools it serves now.
    pub tools: usize,
    /// `wrapped`, `server` or `raw`.
    pub naming: String,
    /// Whether its `toolSearch` is on: its agents list only the search tools and the pinned
    /// ones.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tool_search: bool,
    /// Why it serves nothing: its entry's error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Its globs that match nothing its servers list, as `tools "x*"`; checked once every
    /// server of the profile is running.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmatched: Vec<String>,
    /// Why its socket could not be opened (a valid profile whose agents cannot connect), as
    /// the endpoint reported it ([`Hub::profile_socket_failed`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket_error: Option<String>,
}

impl ProfileStatus {
    /// Whether agents can get this profile now: a valid entry and an open socket.
    pub fn is_served(&self) -> bool {
        self.error.is_none() && self.socket_error.is_none()
    }
}

/// Per profile, why the endpoint could not open its socket; written by the endpoint, read by
/// `status`.
#[derive(Clone, Debug, Default)]
pub(crate) struct SocketErrors(Arc<std::sync::Mutex<HashMap<String, String>>>);

impl View {
    /// The catalog `profile` serves (`None`: the default view; an unknown or invalid profile:
    /// an empty catalog).
    pub(super) fn catalog_for(&self, profile: Option<&str>) -> Arc<Catalog> {
        match profile {
            None => self.catalog.clone(),
            Some(p) => self
                .profiles
                .get(p)
                .map(|v| v.catalog.clone())
                .unwrap_or_default(),
        }
    }

    /// The remembered routes of servers out of the catalog, under `profile`'s names.
    pub(super) fn known_for(&self, profile: Option<&str>) -> Arc<HashMap<String, Route>> {
        match profile {
            None => self.known.clone(),
            Some(p) => self
                .profiles
                .get(p)
                .map(|v| v.known.clone())
                .unwrap_or_default(),
        }
    }

    /// What a session of `profile` compares to know whether to re-list.
    pub(super) fn tools_epoch_for(&self, profile: Option<&str>) -> u64 {
        match profile {
            None => self.tools_epoch,
            Some(p) => self.profiles.get(p).map_or(0, |v| v.epoch),
        }
    }

    /// Whether `profile`'s sessions may see `server` at all.
    pub(super) fn profile_has_server(&self, profile: Option<&str>, server: &str) -> bool {
        match profile {
            None => true,
            Some(p) => self
                .profiles
                .get(p)
                .and_then(|v| v.entry.as_ref().as_ref().ok())
                .is_some_and(|c| c.has_server(server)),
        }
    }

    /// Whether `profile` (`None`: the default view) would serve the withheld capability `w`
    /// of `server` once approved: its server and its globs, as a profile's catalog is narrowed
    /// (`catalog::profile`). What a profile would not serve is unknown to its sessions, withheld
    /// or not.
    pub(super) fn profile_would_serve(
        &self,
        profile: Option<&str>,
        server: &str,
        w: &crate::catalog::pin::Waiting,
    ) -> bool {
        use crate::catalog::naming::{CapabilityKind, base_name};
        use crate::catalog::pin::Kind;
        let Some(p) = profile else { return true };
        let Some(cfg) = self
            .profiles
            .get(p)
            .and_then(|v| v.entry.as_ref().as_ref().ok())
        else {
            return false;
        };
        if !cfg.has_server(server) {
            return false;
        }
        let name = w.listed.definition["name"].as_str().unwrap_or_default();
        match w.kind {
            Kind::Tool => {
                let wrapped = base_name(server, CapabilityKind::Tool, &w.tool);
                crate::config::any_match(cfg.tools.as_deref(), &[&w.tool, &wrapped])
            }
            Kind::Prompt => {
                let wrapped = base_name(server, CapabilityKind::Prompt, &w.tool);
                crate::config::any_match(cfg.prompts.as_deref(), &[&w.tool, &wrapped])
            }
            Kind::Resource => {
                let wrapped = base_name(server, CapabilityKind::Resource, name);
                crate::config::any_match(cfg.resources.as_deref(), &[name, &w.tool, &wrapped])
            }
            Kind::ResourceTemplate => {
                let wrapped = base_name(server, CapabilityKind::ResourceTemplate, name);
                crate::config::any_match(cfg.resources.as_deref(), &[name, &w.tool, &wrapped])
            }
        }
    }
}

/// Which profile a handle's session reads through.
#[derive(Clone, Debug, Default)]
pub(super) enum Chosen {
    /// The default view: everything (handles outside any agent session: the CLI's calls, the
    /// window).
    #[default]
    Everything,
    /// A profile named by the socket the agent connected to, before its session starts.
    Named(Arc<str>),
    /// One agent session: its profile as the socket named it, or chosen once at `initialize`
    /// by the agent's `clientInfo.name` ([`Hub::choose_for_client`]), or set later by the
    /// person ([`Hub::set_agent_profile`]). Shared by every clone of the session's handle.
    Session(Arc<SessionChoice>),
}

/// How an agent session got its profile (`agents` shows it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ProfileSource {
    /// No profile: the main socket, and no `clients` rule matched (or it has not initialized).
    Default,
    /// The profile's own socket (`bridge --profile NAME` connects there).
    Socket,
    /// A profile's `clients` rule matched the agent's `clientInfo.name`.
    Client,
    /// The person set it for this session (`agents --set`, the window).
    Person,
}

/// One agent session's profile; changes by the person wake the session's [`super::HubEvents`].
#[derive(Debug)]
pub(crate) struct SessionChoice {
    state: std::sync::RwLock<Choice>,
    /// Counts the person's changes, so the session re-lists after each.
    changes: tokio::sync::watch::Sender<u64>,
}

#[derive(Clone, Debug)]
struct Choice {
    profile: Option<Arc<str>>,
    source: ProfileSource,
    /// Whether `clientInfo.name` may still choose (a main-socket session before `initialize`).
    open: bool,
    /// For a profile chosen by client: its tools epoch when it was chosen.
    epoch: Option<u64>,
}

impl SessionChoice {
    fn new(profile: Option<Arc<str>>) -> SessionChoice {
        let source = if profile.is_some() {
            ProfileSource::Socket
        } else {
            ProfileSource::Default
        };
        SessionChoice {
            state: std::sync::RwLock::new(Choice {
                open: profile.is_none(),
                profile,
                source,
                epoch: None,
            }),
            changes: tokio::sync::watch::Sender::new(0),
        }
    }

    fn read(&self) -> Choice {
        // A poisoned lock still holds a whole `Choice`: every write replaces fields that are
        // each valid on their own.
        self.state
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn write(&self, f: impl FnOnce(&mut Choice)) {
        f(&mut self
            .state
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner));
    }

    /// The profile and how it was got.
    pub(crate) fn current(&self) -> (Option<Arc<str>>, ProfileSource) {
        let c = self.read();
        (c.profile, c.source)
    }

    /// The person sets the session's profile (`None`: everything); its agent re-lists.
    pub(crate) fn set_by_person(&self, profile: Option<Arc<str>>) {
        self.write(|c| {
            c.profile = profile;
            c.source = ProfileSource::Person;
            c.open = false;
            c.epoch = None;
        });
        self.changes.send_modify(|n| *n += 1);
    }

    /// Follows the person's changes (see [`super::HubEvents`]).
    pub(crate) fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }
}

impl Chosen {
    /// The profile's name; `None` for the default view.
    pub(super) fn get(&self) -> Option<Arc<str>> {
        match self {
            Chosen::Everything => None,
            Chosen::Named(name) => Some(name.clone()),
            Chosen::Session(choice) => choice.read().profile,
        }
    }

    /// For a profile chosen by client: its tools epoch when it was chosen.
    pub(super) fn epoch_at_choice(&self) -> Option<u64> {
        match self {
            Chosen::Session(choice) => choice.read().epoch,
            _ => None,
        }
    }

    /// The session's choice, when this handle belongs to an agent session.
    pub(super) fn session(&self) -> Option<&Arc<SessionChoice>> {
        match self {
            Chosen::Session(choice) => Some(choice),
            _ => None,
        }
    }
}

impl Hub {
    /// This hub as a session of `profile` sees it (see the module docs); `None` is the
    /// default view. The profile is looked up on every read, so one that a reload adds,
    /// changes or removes takes effect for connected sessions.
    #[must_use]
    pub fn for_profile(mut self, profile: Option<&str>) -> Hub {
        self.profile = profile.map_or(Chosen::Everything, |p| Chosen::Named(Arc::from(p)));
        self
    }

    /// A handle for one agent session: the profile its socket named, or, on the main socket,
    /// one left to [`Hub::choose_for_client`] at `initialize`; the person may change it later.
    /// Clone it for the session's parts *after* this call, so they share the choice.
    #[must_use]
    pub fn for_session(mut self) -> Hub {
        self.session_choice();
        self
    }

    /// This handle's session choice, made one (as [`Hub::for_session`]) when it has none.
    pub(super) fn session_choice(&mut self) -> Arc<SessionChoice> {
        let choice = match &self.profile {
            Chosen::Everything => Arc::new(SessionChoice::new(None)),
            Chosen::Named(name) => Arc::new(SessionChoice::new(Some(name.clone()))),
            Chosen::Session(choice) => choice.clone(),
        };
        self.profile = Chosen::Session(choice.clone());
        choice
    }

    /// Chooses this session's profile by the agent's `clientInfo.name` (once, and only on
    /// the main socket; later calls change nothing): the first valid profile, in config
    /// order, one of whose `clients` globs matches `client`. Returns the profile the session
    /// reads through from now on.
    pub fn choose_for_client(&self, client: &str) -> Option<String> {
        let Chosen::Session(choice) = &self.profile else {
            return self.profile().map(|p| p.to_string());
        };
        if choice.read().open {
            let view = self.view();
            let found = view.profile_order.iter().find(|name| {
                view.profiles
                    .get(*name)
                    .and_then(|p| p.entry.as_ref().as_ref().ok())
                    .is_some_and(|cfg| cfg.matches_client(client))
            });
            choice.write(|c| {
                if !c.open {
                    return;
                }
                c.open = false;
                if let Some(name) = found {
                    c.profile = Some(name.clone());
                    c.source = ProfileSource::Client;
                    c.epoch = Some(view.tools_epoch_for(Some(name)));
                }
            });
        }
        self.profile().map(|p| p.to_string())
    }

    /// The profile this handle serves (`None`: the default view).
    pub fn profile(&self) -> Option<Arc<str>> {
        self.profile.get()
    }

    /// Whether this handle's session may hear of `server` (its log messages): always for the
    /// default view, else when the profile is valid and has the server.
    pub fn sees_server(&self, server: &str) -> bool {
        self.view()
            .profile_has_server(self.profile().as_deref(), server)
    }

    /// Every profile of the config in effect, in config order.
    pub fn profiles(&self) -> Vec<ProfileStatus> {
        let view = self.view();
        let socket_errors = self
            .profile_sockets
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        view.profile_order
            .iter()
            .filter_map(|name| {
                let p = view.profiles.get(name)?;
                let all = || -> Vec<String> {
                    view.servers
                        .order
                        .iter()
                        .map(|s| s.name().to_string())
                        .collect()
                };
                Some(match p.entry.as_ref() {
                    Ok(cfg) => ProfileStatus {
                        name: name.to_string(),
                        servers: cfg.servers.clone().unwrap_or_else(all),
                        tools: p.catalog.len(),
                        naming: cfg.naming.as_str().to_owned(),
                        tool_search: cfg.tool_search.enabled,
                        error: None,
                        unmatched: p.unmatched.to_vec(),
                        socket_error: socket_errors.get(name.as_ref() as &str).cloned(),
                    },
                    Err(why) => ProfileStatus {
                        name: name.to_string(),
                        servers: Vec::new(),
                        tools: 0,
                        naming: String::new(),
                        tool_search: false,
                        error: Some(why.clone()),
                        unmatched: Vec::new(),
                        socket_error: None,
                    },
                })
            })
            .collect()
    }
}

impl Hub {
    /// Records that profile `name`'s socket could not be opened, with the reason `status` and
    /// `bridge --profile` show.
    pub fn profile_socket_failed(&self, name: &str, why: String) {
        self.socket_errors().insert(name.to_owned(), why);
    }

    /// Records that profile `name`'s socket is open, or that the profile is gone: no error.
    pub fn profile_socket_cleared(&self, name: &str) {
        self.socket_errors().remove(name);
    }

    fn socket_errors(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.profile_sockets
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The owner's profile state.
#[derive(Debug, Default)]
pub(super) struct Profiles {
    /// The config's profiles, in file order.
    specs: Vec<ProfileSpec>,
    /// What is published.
    pub(super) views: Arc<HashMap<Arc<str>, ProfileView>>,
    pub(super) order: Arc<[Arc<str>]>,
    /// Profiles whose sessions should re-list at the next announcement.
    pending: HashSet<Arc<str>>,
    /// Source of unique epochs.
    clock: u64,
}

impl Profiles {
    /// Profiles as `specs` has them; applied at the next rebuild.
    pub(super) fn new(specs: &[ProfileSpec]) -> Profiles {
        let mut p = Profiles::default();
        p.set(specs);
        p
    }

    /// Replaces the config's profiles (a reload); applied at the next rebuild.
    pub(super) fn set(&mut self, specs: &[ProfileSpec]) {
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
    pub(super) fn announce(&mut self) {
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
    pub(super) fn rebuild_profiles(
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

/// The routes of servers that left `next` (see [`View::known`]): a server that lists again
/// replaces its old routes, one that left the config loses them.
pub(super) fn remembered(
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
