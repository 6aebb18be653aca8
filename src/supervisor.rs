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
//! stopped ──start──▶ starting ──ok──▶ running ──exit/stop──▶ failed / stopped
//!                        └──error──▶ failed ──start──▶ starting
//! ```
//!
//! Remote servers whose HTTP session expired are reconnected on request
//! ([`ServerHandle::reconnect`]): concurrent callers share one reconnect, and the new session
//! gets a new [`Live::session`] number, which makes the hub announce `tools/list_changed`.
//!
//! Every state change is published on the snapshot `watch` and announced to the hub through the
//! `changed` channel (the server's name), which rebuilds the merged catalog.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::{Peer, RoleClient};
use serde::Serialize;
use tokio::sync::{mpsc, oneshot, watch};
use tracing::Instrument;

use crate::catalog::ServerListing;
use crate::config::{ConfigError, ServerConfig, ServerSpec, SsrfWhitelist};
use crate::upstream::handler::{ProgressRoutes, UpstreamEvent};
use crate::upstream::stderr::LogRing;
use crate::upstream::{self, Session, stdio};

/// How long a stop waits for the rmcp service to wind down after the process is gone.
const SERVICE_CLOSE_GRACE: Duration = Duration::from_millis(500);

/// Lifecycle state of one server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerState {
    /// Not running, by configuration (`disabled`) or by request.
    Stopped,
    /// Spawning, initializing or listing.
    Starting,
    /// Serving calls.
    Running,
    /// Waiting before a restart.
    Backoff,
    /// Gave up: configuration error, start failure or exit. `last_error` says why.
    Failed,
}

impl ServerState {
    /// The lower-case name used in CLI output and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            ServerState::Stopped => "stopped",
            ServerState::Starting => "starting",
            ServerState::Running => "running",
            ServerState::Backoff => "backoff",
            ServerState::Failed => "failed",
        }
    }
}

/// What `status` shows for one server.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    /// The server's name in the config.
    pub name: String,
    /// `stdio`, `sse`, `streamableHttp`, or `unknown` for an entry that failed to parse.
    pub transport: String,
    /// Current state.
    pub state: ServerState,
    /// Why the server is `failed` (or last failed), readable by a person.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// When the state last changed, in milliseconds since the Unix epoch.
    pub since_ms: u64,
    /// Process id of a running stdio server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Wrapped tools this server contributes to the merged catalog (filled in by the hub).
    pub tools: usize,
}

/// The live session of a running server, shared with callers.
#[derive(Debug)]
pub struct Live {
    /// Sends requests to the server.
    pub peer: Peer<RoleClient>,
    /// Everything the server listed, as of the last (re-)listing.
    pub listing: Arc<ServerListing>,
    /// Where the server's progress notifications go.
    pub progress: ProgressRoutes,
    /// Which connect of this server the session came from (1, 2, …); unchanged by re-listing.
    pub session: u64,
}

/// The latest state of one server.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// What `status` shows.
    pub status: ServerStatus,
    /// The session, while `running`.
    pub live: Option<Arc<Live>>,
}

/// The answer to a reconnect request: the new session, or why there is none.
type ReconnectReply = oneshot::Sender<Result<Arc<Live>, String>>;

enum Command {
    Start,
    Stop(oneshot::Sender<()>),
    /// The session `stale` is gone (HTTP 404 on its session id): reconnect unless that already
    /// happened, and reply with the current session.
    Reconnect {
        stale: Arc<Live>,
        reply: ReconnectReply,
    },
}

/// A cheap handle on one server's supervisor task.
#[derive(Clone, Debug)]
pub struct ServerHandle {
    name: Arc<str>,
    config: Option<Arc<ServerConfig>>,
    commands: mpsc::Sender<Command>,
    snapshot: watch::Receiver<Snapshot>,
    log: LogRing,
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Command::Start => "Start",
            Command::Stop(_) => "Stop",
            Command::Reconnect { .. } => "Reconnect",
        })
    }
}

impl ServerHandle {
    /// The server's name.
    pub fn name(&self) -> &Arc<str> {
        &self.name
    }

    /// The validated config entry (`None` when the entry failed validation).
    pub fn config(&self) -> Option<&Arc<ServerConfig>> {
        self.config.as_ref()
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

    /// Asks the task to start the server (no-op when already starting or running).
    pub async fn start(&self) {
        let _ = self.commands.send(Command::Start).await;
    }

    /// Replaces the session `stale` (whose server forgot it) with a new one: `initialize`, full
    /// listing, `running` published again. Callers that hit the same stale session share one
    /// reconnect; a caller whose session was already replaced gets the current one at once.
    ///
    /// # Errors
    /// Why the server could not be reconnected (it is then `failed`), or that it is not running.
    pub async fn reconnect(&self, stale: Arc<Live>) -> Result<Arc<Live>, String> {
        let (reply, answer) = oneshot::channel();
        self.commands
            .send(Command::Reconnect { stale, reply })
            .await
            .map_err(|_| "the server's supervisor has ended".to_owned())?;
        answer
            .await
            .map_err(|_| "the server stopped while reconnecting".to_owned())?
    }

    /// Stops the server and waits until its process tree is gone (at most about
    /// [`stdio::STOP_GRACE`] × 2).
    pub async fn stop(&self) {
        let (done, wait) = oneshot::channel();
        if self.commands.send(Command::Stop(done)).await.is_ok() {
            let _ = wait.await;
        }
    }
}

/// Starts the supervisor task of `spec`. The server connects at once unless it is `disabled` or
/// its entry is invalid. The task ends when every [`ServerHandle`] is dropped, stopping the
/// server first.
pub fn spawn(
    spec: &ServerSpec,
    whitelist: &SsrfWhitelist,
    changed: mpsc::UnboundedSender<Arc<str>>,
) -> ServerHandle {
    let name: Arc<str> = Arc::from(spec.name.as_str());
    let (config, initial) = match &spec.entry {
        Ok(cfg) => (
            Some(Arc::new(cfg.clone())),
            initial_status(&name, Some(cfg), None),
        ),
        Err(e) => (None, initial_status(&name, None, Some(e))),
    };
    let (tx, rx) = watch::channel(Snapshot {
        status: initial,
        live: None,
    });
    let (commands, inbox) = mpsc::channel(16);
    let log = LogRing::new();
    let handle = ServerHandle {
        name: name.clone(),
        config: config.clone(),
        commands,
        snapshot: rx,
        log: log.clone(),
    };
    if let Some(cfg) = config {
        let autostart = !cfg.disabled;
        let task = Task {
            name: name.clone(),
            cfg,
            publish: tx,
            changed,
            log,
            whitelist: whitelist.clone(),
            connects: std::sync::atomic::AtomicU64::new(0),
        };
        let span = tracing::info_span!("server", name = %name);
        tokio::spawn(task.run(inbox, autostart).instrument(span));
    } else {
        // An invalid entry has no task; its snapshot stays `failed` with the config error.
        let _ = changed.send(name);
        drop(tx);
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
    ServerStatus {
        name: name.to_owned(),
        transport: cfg
            .map_or("unknown", |c| upstream::transport_name(&c.transport))
            .to_owned(),
        state,
        last_error: error.map(|e| e.to_string()),
        since_ms: now_ms(),
        pid: None,
        tools: 0,
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

struct Task {
    name: Arc<str>,
    cfg: Arc<ServerConfig>,
    publish: watch::Sender<Snapshot>,
    changed: mpsc::UnboundedSender<Arc<str>>,
    log: LogRing,
    whitelist: SsrfWhitelist,
    /// Successful connects so far; numbers [`Live::session`].
    connects: std::sync::atomic::AtomicU64,
}

/// How a running session ended.
enum Ended {
    /// The user asked for a stop; reply when done.
    Stopped(oneshot::Sender<()>),
    /// Every handle is gone: shut down.
    Orphaned,
    /// The process exited or the session closed on its own.
    Exited(String),
    /// The server forgot the session: connect again, then reply.
    Reconnect(ReconnectReply),
}

impl Task {
    async fn run(self, mut inbox: mpsc::Receiver<Command>, autostart: bool) {
        let mut want_start = autostart;
        let mut waiting: Vec<ReconnectReply> = Vec::new();
        loop {
            if want_start {
                want_start = false;
                let started = self.start().await;
                let outcome = match &started {
                    Ok(_) => self
                        .publish
                        .borrow()
                        .live
                        .clone()
                        .ok_or_else(|| "not running".to_owned()),
                    Err(why) => Err(why.clone()),
                };
                for reply in waiting.drain(..) {
                    let _ = reply.send(outcome.clone());
                }
                match started {
                    Ok(session) => match self.serve(session, &mut inbox).await {
                        Ended::Stopped(done) => {
                            self.set(ServerState::Stopped, None, None);
                            let _ = done.send(());
                        }
                        Ended::Orphaned => return,
                        Ended::Exited(why) => {
                            tracing::warn!(reason = %why, "server exited");
                            self.set(ServerState::Failed, Some(why), None);
                        }
                        Ended::Reconnect(reply) => {
                            tracing::info!("session expired; reconnecting");
                            waiting.push(reply);
                            want_start = true;
                            continue;
                        }
                    },
                    Err(why) => {
                        tracing::warn!(error = %why, "server failed to start");
                        self.set(ServerState::Failed, Some(why), None);
                    }
                }
            }
            match inbox.recv().await {
                Some(Command::Start) => want_start = true,
                Some(Command::Stop(done)) => {
                    if self.publish.borrow().status.state != ServerState::Failed {
                        self.set(ServerState::Stopped, None, None);
                    }
                    let _ = done.send(());
                }
                Some(Command::Reconnect { reply, .. }) => {
                    let state = self.publish.borrow().status.state;
                    let _ = reply.send(Err(format!("the server is {}", state.as_str())));
                }
                None => return,
            }
        }
    }

    /// Expands the entry, connects, and publishes `running`.
    async fn start(&self) -> Result<Session, String> {
        self.set(ServerState::Starting, None, None);
        let cfg = self.cfg.expand_from_env().map_err(|e| e.to_string())?;
        let progress = ProgressRoutes::default();
        let session = upstream::connect(&cfg, &self.log, progress.clone(), &self.whitelist)
            .await
            .map_err(|e| e.to_string())?;
        let number = 1 + self
            .connects
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let live = Arc::new(Live {
            peer: session.service.peer().clone(),
            listing: Arc::new(session.listing.clone()),
            progress,
            session: number,
        });
        let pid = session.child.as_ref().and_then(|c| c.pid());
        tracing::info!(
            pid,
            tools = live.listing.tools.len(),
            resources = live.listing.resources.len(),
            resource_templates = live.listing.resource_templates.len(),
            prompts = live.listing.prompts.len(),
            "running"
        );
        self.set(ServerState::Running, None, Some((live, pid)));
        Ok(session)
    }

    /// Runs until the session ends; re-lists on upstream `list_changed`.
    async fn serve(&self, session: Session, inbox: &mut mpsc::Receiver<Command>) -> Ended {
        let Session {
            service,
            mut child,
            mut events,
            ..
        } = session;
        let peer = service.peer().clone();
        let stop_service = service.cancellation_token();
        let mut quit = tokio::spawn(service.waiting());
        let mut quit_done = false;
        let ended = loop {
            tokio::select! {
                status = wait_child(&mut child) => {
                    break Ended::Exited(self.exit_reason(Some(stdio::describe_exit(&status))).await);
                }
                _ = &mut quit, if !quit_done => {
                    quit_done = true;
                    // For stdio the process is what matters: the session closing means it is
                    // exiting, so let the exit status speak when it comes soon.
                    if let Some(c) = child.as_mut()
                        && let Ok(Ok(status)) = tokio::time::timeout(Duration::from_secs(1), c.wait()).await
                    {
                        break Ended::Exited(self.exit_reason(Some(stdio::describe_exit(&status))).await);
                    }
                    break Ended::Exited(self.exit_reason(None).await);
                }
                Some(UpstreamEvent::ListChanged) = events.recv() => {
                    while events.try_recv().is_ok() {}
                    self.relist(&peer).await;
                }
                cmd = inbox.recv() => match cmd {
                    Some(Command::Start) => {}
                    Some(Command::Stop(done)) => break Ended::Stopped(done),
                    Some(Command::Reconnect { stale, reply }) => {
                        let current = self.publish.borrow().live.clone();
                        match current {
                            Some(live) if live.session != stale.session => {
                                let _ = reply.send(Ok(live));
                            }
                            _ => break Ended::Reconnect(reply),
                        }
                    }
                    None => break Ended::Orphaned,
                },
            }
        };
        // Drop the session from callers first, so no new call starts on a dying peer.
        if matches!(ended, Ended::Stopped(_) | Ended::Orphaned) {
            self.set(ServerState::Stopped, None, None);
        }
        if let Some(child) = child.as_mut() {
            child.terminate(stdio::STOP_GRACE).await;
        }
        stop_service.cancel();
        if !quit_done {
            let _ = tokio::time::timeout(SERVICE_CLOSE_GRACE, quit).await;
        }
        ended
    }

    async fn relist(&self, peer: &Peer<RoleClient>) {
        match upstream::listing::list_all(peer).await {
            Ok(listing) => {
                let current = self.publish.borrow().live.clone();
                if let Some(old) = current {
                    let live = Arc::new(Live {
                        peer: old.peer.clone(),
                        listing: Arc::new(listing),
                        progress: old.progress.clone(),
                        session: old.session,
                    });
                    let pid = self.publish.borrow().status.pid;
                    tracing::info!(
                        tools = live.listing.tools.len(),
                        "re-listed after list_changed"
                    );
                    self.set(ServerState::Running, None, Some((live, pid)));
                }
            }
            Err(e) => tracing::warn!(error = %e, "re-listing after list_changed failed"),
        }
    }

    /// "exited with exit code 3; last stderr: …", after giving the stderr drain a moment.
    async fn exit_reason(&self, status: Option<String>) -> String {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut why = match status {
            Some(s) => format!("process exited ({s})"),
            None => "the session closed".to_owned(),
        };
        let tail = self.log.tail(upstream::STDERR_LINES_IN_ERRORS);
        if !tail.is_empty() {
            why.push_str("; last stderr: ");
            why.push_str(&tail.join(" | "));
        }
        why
    }

    fn set(
        &self,
        state: ServerState,
        error: Option<String>,
        live: Option<(Arc<Live>, Option<u32>)>,
    ) {
        let (live, pid) = match live {
            Some((l, p)) => (Some(l), p),
            None => (None, None),
        };
        self.publish.send_modify(|snap| {
            let changed_state = snap.status.state != state;
            snap.status.state = state;
            if error.is_some() || state == ServerState::Running {
                snap.status.last_error = error;
            }
            if changed_state {
                snap.status.since_ms = now_ms();
            }
            snap.status.pid = pid;
            snap.live = live;
        });
        let _ = self.changed.send(self.name.clone());
    }
}

async fn wait_child(child: &mut Option<stdio::StdioChild>) -> std::process::ExitStatus {
    match child {
        Some(c) => match c.wait().await {
            Ok(status) => status,
            Err(e) => {
                tracing::debug!(error = %e, "waiting for the child failed");
                std::future::pending().await
            }
        },
        None => std::future::pending().await,
    }
}
