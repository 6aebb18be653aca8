//! One task per server, owning its session and process (DESIGN §7; STYLE §3).
//!
//! The task is the only owner of the child process and the rmcp service. Everyone else holds a
//! [`ServerHandle`]: a command channel, and a `watch` of the latest [`Snapshot`] (status plus the
//! live session to send calls on). Calls do not queue through the task; they clone the live
//! peer from the snapshot, so one slow call never delays another.
//!
//! States (shown by `status`, the tray and the window):
//!
//! ```text
//!            start                 ok
//! stopped ─────────▶ starting ──────────▶ running
//!    ▲                  ▲ │ error            │ exit / session lost
//!    │ stop             │ ▼                  ▼
//!    └──────────────  backoff ◀──── (1 s, 2 s, 4 s, 8 s) ──┘
//!                        │ 5th failure in a row
//!                        ▼
//!                      failed ──start──▶ starting
//!
//! starting ── HTTP 401 ──▶ needs sign-in ──login / start──▶ starting
//! ```
//!
//! A configuration problem (command not found, missing `${VAR}`, bad `cwd`) goes straight to
//! `failed`: retrying cannot fix it. Every state change is published on the snapshot `watch`
//! and then reported to the owner (the hub) through a [`Reporter`].

mod backoff;
mod connector;
mod running;
mod status;
mod task;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use rmcp::{Peer, RoleClient};
use tokio::sync::{mpsc, oneshot, watch};
use tracing::Instrument;

use crate::catalog::ServerListing;
use crate::config::{ConfigError, ServerConfig, ServerSpec, SsrfWhitelist};
use crate::upstream;
use crate::upstream::askers::Askers;
use crate::upstream::handler::ProgressRoutes;
use crate::upstream::lane::FastLane;
use crate::upstream::roots::EntryRoots;
use crate::upstream::stderr::LogRing;

pub use backoff::{HEALTHY_AFTER, MAX_DELAY, MAX_FAILURES, delay_for};
pub use connector::{Connect, ConnectArgs, StartFailure, upstream_connect, upstream_connect_with};
pub use status::{ServerState, ServerStatus};

/// The live session of a running server, shared with callers.
#[derive(Debug)]
pub struct Live {
    /// Sends requests to the server.
    pub peer: Peer<RoleClient>,
    /// Everything the server listed, as of the last (re-)listing.
    pub listing: Arc<ServerListing>,
    /// Where the server's progress notifications go.
    pub progress: ProgressRoutes,
    /// The calls in flight on this session: every call sent on `peer` enters it for its
    /// lifetime ([`Askers::enter`]), so the server's requests reach the calling agent.
    pub askers: Askers,
    /// The session's fast lane (stdio servers, when the fast path is on).
    pub lane: Option<FastLane>,
    /// A stdio session's writer to the server's stdin, fast path or not: the rmcp path
    /// withdraws a request that waited past its deadline to be written
    /// ([`FastLane::withdraw`]).
    pub stdin: Option<FastLane>,
    /// The session's fast lane (streamable HTTP servers, when the fast path is on).
    pub http_lane: Option<crate::upstream::http_lane::HttpLane>,
    /// How the session ended, once its process exited (stdio only): a call that lost the
    /// session quotes it ([`crate::upstream::ending::explain`]).
    pub ending: Option<crate::upstream::ending::Ending>,
    /// Which session this is (counts up from 1 with every (re)connect); a caller that saw this
    /// session fail asks for a reconnect of exactly this generation.
    pub generation: u64,
    /// A 2026-07-28 session's `subscriptions/listen` stream: agents' resource subscriptions go
    /// there instead of `resources/subscribe` ([`crate::upstream::listener`]).
    pub listener: Option<Arc<crate::upstream::listener::Listener>>,
}

impl Live {
    /// The session a call goes on ([`crate::upstream::call::call`] and `rounds`).
    pub fn upstream(&self) -> crate::upstream::call::Upstream<'_> {
        crate::upstream::call::Upstream {
            peer: &self.peer,
            askers: &self.askers,
            stdin: self.stdin.as_ref(),
        }
    }
}

/// The latest state of one server.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// What `status` shows.
    pub status: ServerStatus,
    /// The session, while `running`.
    pub live: Option<Arc<Live>>,
    /// The `WWW-Authenticate` challenge of the answer that put the server in `needs sign-in`
    /// (kept until a session starts): the next sign-in starts from it.
    pub sign_in_challenge: Option<String>,
}

/// How a supervisor tells its owner that a snapshot changed: called with the server's name
/// after every change, from the supervisor task; it must return at once (post a message, do
/// not wait).
pub type Reporter = Arc<dyn Fn(&Arc<str>) + Send + Sync>;

/// Why [`ServerHandle::reconnect`] has no session to offer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ReconnectError(pub String);

enum Command {
    Start(oneshot::Sender<()>),
    Stop(oneshot::Sender<()>),
    Restart(oneshot::Sender<()>),
    Reconnect {
        generation: u64,
        reply: oneshot::Sender<Result<Arc<Live>, ReconnectError>>,
    },
}

/// A cheap handle on one server's supervisor task.
#[derive(Clone, Debug)]
pub struct ServerHandle {
    name: Arc<str>,
    config: Option<Arc<ServerConfig>>,
    /// Why the entry is invalid, when it is (then `config` is `None` and there is no task).
    invalid: Option<ConfigError>,
    commands: mpsc::Sender<Command>,
    snapshot: watch::Receiver<Snapshot>,
    log: LogRing,
    whitelist: SsrfWhitelist,
    /// The entry's `roots`, shared with the task's sessions; edited by [`Self::with_entry`].
    roots: EntryRoots,
}

impl ServerHandle {
    /// This handle with `cfg` as its entry, for a reload that changed nothing that needs a
    /// restart (see `hub::reload`): when `cfg.roots` differs from the current roots, they are
    /// replaced and the running session (if any) gets `notifications/roots/list_changed`.
    pub fn with_entry(&self, cfg: &ServerConfig) -> ServerHandle {
        if self.roots.replace(&cfg.roots) {
            tracing::info!(server = %self.name, roots = cfg.roots.len(), "roots changed: roots/list_changed sent");
            if let Some(live) = self.live() {
                tokio::spawn(async move {
                    let _ = live.peer.notify_roots_list_changed().await;
                });
            }
        }
        ServerHandle {
            config: Some(Arc::new(cfg.clone())),
            ..self.clone()
        }
    }

    /// The `ssrfWhitelist` this server was started with (it matters for remote servers only).
    pub fn whitelist(&self) -> &SsrfWhitelist {
        &self.whitelist
    }

    /// The server's name.
    pub fn name(&self) -> &Arc<str> {
        &self.name
    }

    /// The validated config entry (`None` when the entry failed validation).
    pub fn config(&self) -> Option<&Arc<ServerConfig>> {
        self.config.as_ref()
    }

    /// The validation error of an invalid entry (`None` for a valid one).
    pub fn entry_error(&self) -> Option<&ConfigError> {
        self.invalid.as_ref()
    }

    /// The latest snapshot.
    pub fn snapshot(&self) -> Snapshot {
        self.snapshot.borrow().clone()
    }

    /// The live session, if the server is running.
    pub fn live(&self) -> Option<Arc<Live>> {
        self.snapshot.borrow().live.clone()
    }

    /// A receiver that sees every snapshot change.
    pub fn watch(&self) -> watch::Receiver<Snapshot> {
        self.snapshot.clone()
    }

    /// The server's captured stderr.
    pub fn log(&self) -> &LogRing {
        &self.log
    }

    /// Starts the server (no-op while starting or running) and forgets past failures; returns
    /// once the server is `starting` (or already was starting or running).
    pub async fn start(&self) {
        let (done, wait) = oneshot::channel();
        if self.commands.send(Command::Start(done)).await.is_ok() {
            let _ = wait.await;
        }
    }

    /// Stops the server and waits until its process tree is gone (at most about 2 × 2 s).
    pub async fn stop(&self) {
        let (done, wait) = oneshot::channel();
        if self.commands.send(Command::Stop(done)).await.is_ok() {
            let _ = wait.await;
        }
    }

    /// Stops the server (if running) and starts it again; returns once it is `starting`.
    pub async fn restart(&self) {
        let (done, wait) = oneshot::channel();
        if self.commands.send(Command::Restart(done)).await.is_ok() {
            let _ = wait.await;
        }
    }

    /// Asks for a fresh session because a call found session `generation` broken, and waits
    /// for it. Concurrent callers that saw the same generation share one reconnect: exactly one
    /// new process is started. A caller that saw an older generation gets the current session.
    ///
    /// # Errors
    /// [`ReconnectError`] when the server is stopped, failed, or could not start.
    pub async fn reconnect(&self, generation: u64) -> Result<Arc<Live>, ReconnectError> {
        let (reply, wait) = oneshot::channel();
        let gone = || ReconnectError(format!("server \"{}\" is shutting down", self.name));
        self.commands
            .send(Command::Reconnect { generation, reply })
            .await
            .map_err(|_| gone())?;
        wait.await.map_err(|_| gone())?
    }
}

/// Starts the supervisor task of `spec`, connecting with [`upstream_connect`]. The server
/// connects at once unless it is `disabled` or its entry is invalid. The task ends when every
/// [`ServerHandle`] is dropped, stopping the server first.
pub fn spawn(spec: &ServerSpec, whitelist: &SsrfWhitelist, report: Reporter) -> ServerHandle {
    spawn_with(spec, whitelist, report, upstream_connect())
}

/// Like [`spawn`], connecting with `connect` (tests drive the restart policy with a fake).
pub fn spawn_with(
    spec: &ServerSpec,
    whitelist: &SsrfWhitelist,
    report: Reporter,
    connect: Connect,
) -> ServerHandle {
    let name: Arc<str> = Arc::from(spec.name.as_str());
    let (config, initial) = match &spec.entry {
        Ok(cfg) => (
            Some(Arc::new(cfg.clone())),
            initial_status(&name, Some(cfg), None),
        ),
        Err(e) => (None, initial_status(&name, None, Some(e))),
    };
    let (publish, snapshot) = watch::channel(Snapshot {
        status: initial,
        live: None,
        sign_in_challenge: None,
    });
    let (commands, inbox) = mpsc::channel(64);
    let log = LogRing::new();
    let roots = config
        .as_ref()
        .map(|c| EntryRoots::new(&c.roots))
        .unwrap_or_default();
    let handle = ServerHandle {
        name: name.clone(),
        config: config.clone(),
        invalid: spec.entry.as_ref().err().cloned(),
        commands,
        snapshot,
        log: log.clone(),
        whitelist: whitelist.clone(),
        roots: roots.clone(),
    };
    match config {
        Some(cfg) => {
            let autostart = !cfg.disabled;
            let span = tracing::info_span!("server", name = %name);
            let task = task::Task::new(name, cfg, publish, report, log, whitelist.clone(), connect)
                .with_roots(roots);
            tokio::spawn(task.run(inbox, autostart).instrument(span));
        }
        None => {
            // An invalid entry has no task; its snapshot stays `failed` with the config error,
            // and commands other than status get "invalid entry" from the hub.
            report(&name);
        }
    }
    handle
}

fn initial_status(
    name: &str,
    cfg: Option<&ServerConfig>,
    error: Option<&ConfigError>,
) -> ServerStatus {
    let state = match (cfg, error) {
        (_, Some(_)) => ServerState::Failed,
        (Some(c), None) if c.disabled => ServerState::Stopped,
        _ => ServerState::Starting,
    };
    let transport = cfg.map_or("unknown", |c| upstream::transport_name(&c.transport));
    ServerStatus {
        last_error: error.map(|e| e.to_string()),
        since_ms: now_ms(),
        ..ServerStatus::new(name, transport, state)
    }
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
