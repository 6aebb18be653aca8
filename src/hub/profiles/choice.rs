//! Which profile an agent session reads through, and who chose it: the socket it connected
//! to, its `clientInfo.name` at `initialize` (once, on the main socket), or the person later.
//! One choice per session, shared by every clone of the session's [`Hub`] handle.

use std::sync::Arc;

use crate::hub::Hub;

/// Which profile a handle's session reads through.
#[derive(Clone, Debug, Default)]
pub(in crate::hub) enum Chosen {
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

/// One agent session's profile; changes by the person wake the session's [`crate::hub::HubEvents`].
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

    /// Follows the person's changes (see [`crate::hub::HubEvents`]).
    pub(crate) fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }
}

impl Chosen {
    /// The profile's name; `None` for the default view.
    pub(in crate::hub) fn get(&self) -> Option<Arc<str>> {
        match self {
            Chosen::Everything => None,
            Chosen::Named(name) => Some(name.clone()),
            Chosen::Session(choice) => choice.read().profile,
        }
    }

    /// For a profile chosen by client: its tools epoch when it was chosen.
    pub(in crate::hub) fn epoch_at_choice(&self) -> Option<u64> {
        match self {
            Chosen::Session(choice) => choice.read().epoch,
            _ => None,
        }
    }

    /// The session's choice, when this handle belongs to an agent session.
    pub(in crate::hub) fn session(&self) -> Option<&Arc<SessionChoice>> {
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
    pub(in crate::hub) fn session_choice(&mut self) -> Arc<SessionChoice> {
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
}
