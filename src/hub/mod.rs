//! The hub: every server's supervisor, the merged catalog, change events and call routing.
//!
//! One task, the *owner* (`owner/`), holds the hub's state: the server set, the merged
//! [`Catalog`], each server's session generation at the last rebuild, and the hold-back state of
//! `tools/list_changed` during a reload. Everyone else holds a [`Hub`], a cheap handle with two
//! channels — the only two synchronisation primitives in this module:
//!
//! - an **inbox** (`mpsc`): reload, start/stop/restart, stop-all, shutdown, settle requests, and
//!   the change reports of the supervisors, all handled one at a time by the owner;
//! - a **view** (`watch`): what the owner last published (server set, catalog, change counters),
//!   read without waiting by calls, `status`, `tools/list` and the tray.
//!
//! Supervisors report every state change by name; the owner folds reports into a rebuilt
//! catalog at most once per [`COALESCE`]. A rebuild that changes the wrapped tools (or sees a
//! server come back on a new session) announces [`HubEvent::ToolsChanged`], which the endpoint
//! turns into `notifications/tools/list_changed` — unless a reload is running: then the
//! announcement is held back and made once when the reload is done, so agents hear one
//! `list_changed` per reload and never miss the last one.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the handle: its requests, the published view, [`HubEvents`] |
//! | `owner/` | the owner task: the inbox loop, coalescing, hold-back; server commands and reloads |
//! | `rebuild.rs` | rebuilding the catalog from the running servers |
//! | `reload.rs` | [`Hub::reload`]: diffing a new config against the running set |
//! | `forward.rs` | [`Forward`]: the one call state machine both forwarding paths drive — deadline, the retry rule, error texts |
//! | `route.rs` | [`Hub::call`]: routing, approval, the attempts, finding a retry its session |
//! | `ready.rs` | a call's route, server and live session: waiting for a restarting server, or why not |
//! | `approve.rs` | `Hub::approve`: the call policy (`toolPolicy`, annotation defaults), applied once for both paths |
//! | `approvals.rs` | [`Approvals`]: the calls waiting for the person, and the approvers attached |
//! | `listings.rs` | [`Hub::listings`]: each view's and server's `tools/list` JSON, for `tools --tokens` |
//! | `native.rs` | prompts, resources, completions, subscriptions and log levels passed to their server ([`Hub::complete`], [`Hub::subscribe_resource`]…) |
//! | `native_get.rs` | `prompts/get` and `resources/read` sent as tool calls are: the server may ask the agent for input ([`Hub::get_prompt`], [`Hub::read_resource`]) |
//! | `agents.rs` | who is connected: each agent session's process, `clientInfo`, profile and calls ([`Hub::agents`]) |
//! | `fast.rs` | [`Hub::fast_target`]: which calls the agent endpoint may forward on a fast lane |
//! | `record.rs` | [`CallRecord`]: what both paths tell the activity log of each call; listings and server events |
//! | `pins.rs` | pinned tool definitions: what waits for the person's approval, [`Hub::trust`], `pins.json` |
//! | `profiles/` | each profile's catalog, [`Hub::for_profile`]: the one view of the hub every session of a profile reads |
//! | `search.rs` | the search tools of a view with `toolSearch` on: `search_tools` answered from the session's catalog, `call_tool` as the call it names |
//! | `settled.rs` | [`Hub::wait_settled`]: what an agent's first `tools/list` waits for |
//! | `sign_in.rs` | [`Hub::sign_ins`]: the servers' sign-ins in progress, and the statuses that show them |
//! | `instructions.rs` | the `instructions` agents get: the companion's line and each running server's own, labelled |
//! | `roots.rs` | [`Hub::roots_changed`]: `notifications/roots/list_changed` sent upstream |
//! | `tasks/` | the Tasks utility: task-augmented calls and `tasks/*` passed to the task's server, each agent session's [`Tasks`] table of task ids |

mod agents;
pub mod approvals;
mod approve;
mod fast;
pub mod forward;
mod instructions;
mod listings;
mod native;
mod native_get;
mod owner;
mod pins;
mod profiles;
mod ready;
mod rebuild;
pub mod record;
mod reload;
mod roots;
mod route;
mod search;
mod settled;
mod sign_in;
mod tasks;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};

use crate::auth::pending::SignIns;
use crate::catalog::{Catalog, Route};
use crate::config::Config;
use crate::supervisor::{ServerHandle, ServerState, ServerStatus};
use crate::upstream::elicitor::SharedElicitor;
use crate::upstream::notice::Notices;

pub use agents::{AgentError, AgentGuard, AgentStatus, CLIENT_TEXT_MAX, PeerProcesses};
pub use approvals::{Answer, ApprovalEvent, Approvals, Approver, Ask};
pub use approve::{Source as PolicySource, policy_of};
pub use fast::{FastTarget, Lane};
pub use forward::{Forward, Verdict, describe_failure, error_result, passed_error};
pub use listings::{Listing, Listings};
pub use native::{RESOURCE_NOT_FOUND, severity, to_agent};
pub use pins::{PINS_FILE, WaitingByServer, pinned_tools};
pub use profiles::{ProfileSource, ProfileStatus};
pub use record::CallRecord;
pub use reload::{RELOAD_SETTLE, ReloadReport};
pub use route::Attempted;
pub use tasks::Tasks;

/// What [`Hub::trust`] approved: per server, the tools that had waited.
pub type Approved = Vec<(String, Vec<crate::catalog::pin::Waiting>)>;

/// Minimum time between two catalog rebuilds (and so between two `list_changed` announcements).
pub const COALESCE: Duration = Duration::from_millis(100);

/// Something that changed in the hub, as seen by a [`HubEvents`] subscriber.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HubEvent {
    /// A server's status changed (state, error, pid, restarts or tool count), or a reload added
    /// or removed servers. Re-read [`Hub::statuses`].
    ServersChanged,
    /// The merged tool list changed: agents should re-list (`tools/list_changed`).
    ToolsChanged,
}

/// Why a server command was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HubError {
    /// No server has that name.
    #[error(transparent)]
    UnknownServer(#[from] crate::config::UnknownServer),
    /// The server's config entry is invalid, so it cannot run.
    #[error("server \"{name}\" has an invalid config entry: {reason}")]
    InvalidEntry {
        /// The server.
        name: String,
        /// The validation error.
        reason: String,
    },
    /// The hub is shutting down (or gone) and takes no more commands.
    #[error("the companion is shutting down")]
    ShuttingDown,
}

/// A cheap, cloneable handle on the hub. The owner task ends (stopping every server) when the
/// last handle is dropped.
#[derive(Clone, Debug)]
pub struct Hub {
    inbox: mpsc::UnboundedSender<owner::Msg>,
    view: watch::Receiver<Arc<View>>,
    /// The servers' sign-ins in progress (`sign_in.rs`).
    sign_ins: SignIns,
    /// Every server's resource updates and log messages, for agent sessions.
    notices: Notices,
    /// The agents' resource subscriptions and log levels, as sent upstream (`native.rs`).
    interest: native::Interest,
    /// Where calls, listings and server events are recorded (`record.rs`); off by default.
    activity: crate::activity::Activity,
    /// The profile this handle's session reads through (`profiles/`).
    profile: profiles::Chosen,
    /// Why profile sockets could not be opened, shared by every handle (`profiles/`).
    profile_sockets: profiles::SocketErrors,
    /// The calls waiting for the person's approval, and who can answer them (`approvals.rs`).
    approvals: Approvals,
    /// Every connected agent session (`agents.rs`).
    agents: agents::Agents,
    /// This handle's own session in that registry, when it is an agent session's.
    agent: Option<Arc<agents::Slot>>,
}

/// The server set in config order, with a by-name index.
#[derive(Debug, Default)]
pub(crate) struct Servers {
    order: Vec<ServerHandle>,
    by_name: HashMap<Arc<str>, ServerHandle>,
}

impl Servers {
    fn from_handles(order: Vec<ServerHandle>) -> Servers {
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
    servers: Arc<Servers>,
    catalog: Arc<Catalog>,
    /// The last known routes of servers that are in the config but not in the catalog right
    /// now (restarting, backing off, stopped, failed): a call for one of their tools waits for
    /// the server or says why it cannot, instead of "unknown tool" (see `route.rs`).
    known: Arc<HashMap<String, Route>>,
    /// Servers a running reload is replacing: a call for one of them waits for the new one.
    replacing: Arc<HashSet<Arc<str>>>,
    /// Each running server's session generation the catalog was last built from.
    generations: Arc<HashMap<Arc<str>, u64>>,
    /// The warnings of the config in effect (unknown keys), as [`Config::warnings`] words them.
    warnings: Arc<[String]>,
    /// Counts announced tool-list changes (one per `tools/list_changed`).
    tools_epoch: u64,
    /// Counts rebuilds that followed a server report, and server-set changes.
    servers_epoch: u64,
    /// Each profile of the config in effect, by name (`profiles/`).
    profiles: Arc<HashMap<Arc<str>, profiles::ProfileView>>,
    /// The profiles' names in config order.
    profile_order: Arc<[Arc<str>]>,
    /// Tools withheld until the person approves them, by server (`pins.rs`).
    waiting: Arc<WaitingByServer>,
}

impl View {
    /// Whether the catalog holds `server`'s current session (true when it has none).
    fn folded(&self, server: &ServerHandle) -> bool {
        server
            .live()
            .is_none_or(|live| self.generations.get(server.name()) == Some(&live.generation))
    }
}

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
    /// Starts a supervisor for every server in `config` (all connecting concurrently) and the
    /// owner task; `elicitation/create` with no capable agent is answered `cancel`. Must be
    /// called inside a Tokio runtime.
    pub fn start(config: &Config) -> Hub {
        Hub::start_with(config, crate::upstream::elicitor::headless())
    }

    /// Like [`Hub::start`], asking `elicitor` when a server's `elicitation/create` has no calling
    /// agent able to answer it (the desktop app's window).
    pub fn start_with(config: &Config, elicitor: SharedElicitor) -> Hub {
        Hub::start_pinned(config, elicitor, None)
    }

    /// Like [`Hub::start_with`], pinning tool definitions in `pins` (a `pins.json`; see
    /// `pins.rs`): a changed or new tool is withheld from agents until [`Hub::trust`] approves
    /// it. `None`: no pinning, every listing is served as it is.
    pub fn start_pinned(
        config: &Config,
        elicitor: SharedElicitor,
        pins: Option<std::path::PathBuf>,
    ) -> Hub {
        let notices = Notices::default();
        let pins = pins.map_or_else(pins::Pins::off, pins::Pins::open);
        let (inbox, view) = owner::spawn(config, elicitor, notices.clone(), pins);
        Hub {
            inbox,
            view,
            sign_ins: SignIns::default(),
            notices,
            interest: native::Interest::default(),
            activity: crate::activity::Activity::off(),
            profile: profiles::Chosen::default(),
            profile_sockets: profiles::SocketErrors::default(),
            approvals: Approvals::default(),
            agents: agents::Agents::default(),
            agent: None,
        }
    }

    /// The calls waiting for the person's approval; attach an approver here (the desktop
    /// window, a control-API watcher) to answer them.
    pub fn approvals(&self) -> &Approvals {
        &self.approvals
    }

    /// This hub, recording its calls, listings and server events in `activity` from now on.
    /// Call it before cloning the handle: clones made earlier keep the log they had.
    #[must_use]
    pub fn with_activity(mut self, activity: crate::activity::Activity) -> Hub {
        self.activity = activity;
        self.record_server_events();
        self
    }

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

    fn view(&self) -> Arc<View> {
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

    /// Records that the config file changed but cannot be used (`why`, one sentence): it leads
    /// [`Hub::config_warnings`] until a reload applies a config. Nothing else changes.
    pub fn config_refused(&self, why: String) {
        let _ = self.inbox.send(owner::Msg::FileRefused(why));
    }

    /// The tools withheld from agents until the person approves them, by server.
    pub fn waiting(&self) -> Arc<WaitingByServer> {
        self.view().waiting.clone()
    }

    /// Approves the tools that wait for approval of `server` (every server for `None`): they
    /// are pinned as listed now and served from the rebuilt catalog, and agents hear
    /// `tools/list_changed`. With `expect`, only the waiting definitions whose fingerprints
    /// (`listed.fingerprint`) it holds — what the person was shown; one that changed again
    /// since keeps waiting. Returns what was approved once the catalog is published.
    ///
    /// # Errors
    /// [`HubError::UnknownServer`], or [`HubError::ShuttingDown`].
    pub async fn trust(
        &self,
        server: Option<&str>,
        expect: Option<Vec<String>>,
    ) -> Result<Approved, HubError> {
        let server = server.map(str::to_owned);
        self.ask(|reply| owner::Msg::Trust {
            server,
            expect,
            reply,
        })
        .await
        .unwrap_or(Err(HubError::ShuttingDown))
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

    /// Sends `msg` built around a fresh reply channel and waits for the answer; `None` when the
    /// owner is gone.
    async fn ask<T>(&self, msg: impl FnOnce(oneshot::Sender<T>) -> owner::Msg) -> Option<T> {
        let (reply, answer) = oneshot::channel();
        self.inbox.send(msg(reply)).ok()?;
        answer.await.ok()
    }

    async fn server_command(&self, name: &str, op: owner::ServerOp) -> Result<(), HubError> {
        let name = name.to_owned();
        self.ask(|reply| owner::Msg::Server { name, op, reply })
            .await
            .unwrap_or(Err(HubError::ShuttingDown))
    }

    /// Starts `name` (forgetting past failures).
    ///
    /// # Errors
    /// [`HubError`] for an unknown server, an invalid entry, or a hub shutting down.
    pub async fn start_server(&self, name: &str) -> Result<(), HubError> {
        self.server_command(name, owner::ServerOp::Start).await
    }

    /// Stops `name` and waits until its processes are gone and its tools have left the
    /// catalog.
    ///
    /// # Errors
    /// [`HubError::UnknownServer`], or [`HubError::ShuttingDown`].
    pub async fn stop_server(&self, name: &str) -> Result<(), HubError> {
        self.server_command(name, owner::ServerOp::Stop).await
    }

    /// Stops `name` and starts it again.
    ///
    /// # Errors
    /// [`HubError`] for an unknown server, an invalid entry, or a hub shutting down.
    pub async fn restart_server(&self, name: &str) -> Result<(), HubError> {
        self.server_command(name, owner::ServerOp::Restart).await
    }

    /// Starts every server that is stopped or failed and whose entry is valid
    /// (the tray's and window's "Start all"). Returns once every start began.
    pub async fn start_all(&self) {
        let _ = self.ask(owner::Msg::StartAll).await;
    }

    /// Stops every server and waits until their processes are gone (the tray's and window's
    /// "Stop all"). The hub keeps running: servers can be started again.
    pub async fn stop_all(&self) {
        let _ = self.ask(owner::Msg::StopAll).await;
    }

    /// Waits until no server is `starting` (or `timeout` passes) and the catalog has caught up
    /// with every change reported so far.
    pub async fn settle(&self, timeout: Duration) {
        owner::wait_started(&self.servers(), timeout).await;
        let _ = self.ask(owner::Msg::Flush).await;
    }

    /// Stops every server in parallel and waits for their processes to be gone. From then on
    /// the hub refuses starts and reloads ([`HubError::ShuttingDown`]).
    pub async fn shutdown(&self) {
        let _ = self.ask(owner::Msg::Shutdown).await;
    }
}

/// Every server's status in `view` ([`Hub::statuses`]).
fn statuses_in(view: &View) -> Vec<ServerStatus> {
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
