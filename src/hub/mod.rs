//! The hub: every server's supervisor, the merged catalog, change events and call routing.
//!
//! One task, the *owner* (`owner/`), holds the hub's state: the server set, the merged
//! [`Catalog`](crate::catalog::Catalog), each server's session generation at the last
//! rebuild, and the hold-back state of `tools/list_changed` during a reload. Everyone else
//! holds a [`Hub`], a cheap handle with two channels — the only two synchronisation primitives in this module:
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
//! | `mod.rs` | the handle: what it holds, starting the hub |
//! | `view.rs` | the view the owner publishes and what a handle reads from it: servers, catalog, statuses |
//! | `events.rs` | [`HubEvents`]: a subscription to the hub's changes |
//! | `commands.rs` | the requests a handle sends the owner: server commands, settle, shutdown, [`Hub::trust`] |
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
//! | `unserved.rs` | why a prompt, resource or template an agent named is not served: withheld, ambiguous (which names to use), unknown |
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
mod commands;
mod events;
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
mod unserved;
mod view;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use crate::auth::pending::SignIns;
use crate::config::Config;
use crate::upstream::elicitor::SharedElicitor;
use crate::upstream::notice::Notices;

pub use agents::{AgentError, AgentGuard, AgentStatus, CLIENT_TEXT_MAX, PeerProcesses};
pub use approvals::{Answer, ApprovalEvent, Approvals, Approver, Ask};
pub use approve::{Source as PolicySource, policy_of};
pub use events::HubEvents;
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
pub(crate) use view::{Servers, View};

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
}
