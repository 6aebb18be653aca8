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
//!
//! This file owns the published profile views and what `status` shows of them; `choice.rs`
//! which profile a session reads through and who chose it, `rebuild.rs` the owner's profile
//! state and the rebuild of each profile's catalog.

use std::collections::HashMap;
use std::sync::Arc;

use super::{Hub, View};
use crate::catalog::{Catalog, Route};
use crate::config::ProfileConfig;

mod choice;
mod rebuild;

pub(super) use self::choice::Chosen;
pub use self::choice::ProfileSource;
pub(crate) use self::choice::SessionChoice;
pub(super) use self::rebuild::{Profiles, remembered};

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

impl Hub {
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
