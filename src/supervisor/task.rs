//! The supervisor task of one server: the state machine of [`super`]'s module docs.
//!
//! The task is a loop over four phases — idle (stopped or failed), backoff, starting, running —
//! and every phase keeps answering commands, so `stop` is never stuck behind a slow start and a
//! caller waiting for a reconnect is never stuck behind a backoff delay.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use super::backoff::{Backoff, Verdict};
use super::connector::{Connect, ConnectArgs, StartFailure};
use super::{Command, Live, ReconnectError, Reporter, ServerState, Snapshot, now_ms};
use crate::config::{ServerConfig, SsrfWhitelist};
use crate::upstream::askers::Askers;
use crate::upstream::handler::ProgressRoutes;
use crate::upstream::roots::EntryRoots;
use crate::upstream::stderr::LogRing;

type Waiter = oneshot::Sender<Result<Arc<Live>, ReconnectError>>;

/// What the task does next.
enum Next {
    Idle,
    StartNow,
    Backoff(Duration),
    Exit,
}

/// How a running session ended.
pub(super) enum Ended {
    /// The user asked for a stop; reply when done.
    Stopped(oneshot::Sender<()>),
    /// The user asked for a restart.
    Restart(oneshot::Sender<()>),
    /// Every handle is gone: shut down.
    Orphaned,
    /// The sign-in is no longer valid: wait in `needs sign-in` for `login`.
    SignInLost {
        /// Why, readable by a person, with the command that fixes it.
        why: String,
        /// The refusal's `WWW-Authenticate`, for the next `login`.
        challenge: Option<String>,
    },
    /// The process exited or the session broke. `reported` is set when a call saw it first.
    Lost {
        /// Why, readable by a person.
        why: String,
        /// A call saw the session break first.
        reported: bool,
    },
}

pub(super) struct Task {
    pub(super) name: Arc<str>,
    pub(super) cfg: Arc<ServerConfig>,
    pub(super) publish: watch::Sender<Snapshot>,
    pub(super) report: Reporter,
    pub(super) log: LogRing,
    /// `ssrfWhitelist` as loaded with this entry; used by remote servers only.
    pub(super) whitelist: SsrfWhitelist,
    pub(super) connect: Connect,
    pub(super) backoff: Backoff,
    pub(super) generation: u64,
    pub(super) waiters: Vec<Waiter>,
    /// Start and restart requests to answer once `starting` is published.
    pub(super) started_acks: Vec<oneshot::Sender<()>>,
    /// The entry's `roots`, shared with the [`super::ServerHandle`] that edits them on reload.
    pub(super) roots: EntryRoots,
    /// The era the server's last session spoke, for the next connect ([`crate::upstream::era`]).
    era: crate::upstream::era::Remembered,
}

impl Task {
    pub(super) fn new(
        name: Arc<str>,
        cfg: Arc<ServerConfig>,
        publish: watch::Sender<Snapshot>,
        report: Reporter,
        log: LogRing,
        whitelist: SsrfWhitelist,
        connect: Connect,
    ) -> Task {
        Task {
            name,
            cfg,
            publish,
            report,
            log,
            whitelist,
            connect,
            backoff: Backoff::default(),
            generation: 0,
            waiters: Vec::new(),
            started_acks: Vec::new(),
            roots: EntryRoots::default(),
            era: crate::upstream::era::Remembered::default(),
        }
    }

    /// Answers `roots/list` from `roots` (shared with the server's handle).
    pub(super) fn with_roots(mut self, roots: EntryRoots) -> Task {
        self.roots = roots;
        self
    }

    pub(super) async fn run(mut self, mut inbox: mpsc::Receiver<Command>, autostart: bool) {
        let mut next = if autostart {
            Next::StartNow
        } else {
            Next::Idle
        };
        loop {
            next = match next {
                Next::Exit => return,
                Next::Idle => self.idle(&mut inbox).await,
                Next::Backoff(delay) => self.wait_backoff(delay, &mut inbox).await,
                Next::StartNow => self.start_and_serve(&mut inbox).await,
            };
        }
    }

    /// Stopped or failed: wait for the user.
    async fn idle(&mut self, inbox: &mut mpsc::Receiver<Command>) -> Next {
        loop {
            match inbox.recv().await {
                None => return Next::Exit,
                Some(Command::Start(done) | Command::Restart(done)) => {
                    self.fresh_start();
                    self.started_acks.push(done);
                    return Next::StartNow;
                }
                Some(Command::Stop(done)) => {
                    if !matches!(self.state(), ServerState::Failed | ServerState::NeedsSignIn) {
                        self.set_idle(ServerState::Stopped, None);
                    }
                    let _ = done.send(());
                }
                Some(Command::Reconnect { reply, .. }) => {
                    let _ = reply.send(Err(self.not_running()));
                }
            }
        }
    }

    /// Waits out a restart delay; a start, restart or a caller waiting for a reconnect cuts it
    /// short.
    async fn wait_backoff(&mut self, delay: Duration, inbox: &mut mpsc::Receiver<Command>) -> Next {
        let retry_at = now_ms() + delay.as_millis() as u64;
        self.update(|snap| {
            snap.status.state = ServerState::Backoff;
            snap.status.retry_at_ms = Some(retry_at);
            snap.status.pid = None;
            snap.status.protocol = None;
            snap.live = None;
        });
        tracing::info!(
            delay_ms = delay.as_millis() as u64,
            "restarting after a delay"
        );
        tokio::select! {
            () = tokio::time::sleep(delay) => Next::StartNow,
            cmd = inbox.recv() => match cmd {
                None => Next::Exit,
                Some(Command::Start(done) | Command::Restart(done)) => {
                    self.fresh_start();
                    self.started_acks.push(done);
                    Next::StartNow
                }
                Some(Command::Stop(done)) => {
                    self.set_idle(ServerState::Stopped, None);
                    let _ = done.send(());
                    Next::Idle
                }
                Some(Command::Reconnect { reply, .. }) => {
                    self.waiters.push(reply);
                    Next::StartNow
                }
            },
        }
    }

    async fn start_and_serve(&mut self, inbox: &mut mpsc::Receiver<Command>) -> Next {
        self.update(|snap| {
            snap.status.state = ServerState::Starting;
            snap.status.retry_at_ms = None;
        });
        // Whoever asked for this start learns of it once `starting` is published.
        for done in self.started_acks.drain(..) {
            let _ = done.send(());
        }
        let progress = ProgressRoutes::default();
        let askers = Askers::default();
        let started = {
            let connect = (self.connect)(ConnectArgs {
                cfg: self.cfg.clone(),
                log: self.log.clone(),
                whitelist: self.whitelist.clone(),
                progress: progress.clone(),
                askers: askers.clone(),
                roots: self.roots.clone(),
                era: self.era.clone(),
            });
            tokio::pin!(connect);
            loop {
                tokio::select! {
                    r = &mut connect => break r,
                    cmd = inbox.recv() => match cmd {
                        // Dropping the connect future kills the half-started process.
                        None => return Next::Exit,
                        Some(Command::Stop(done)) => {
                            self.fail_waiters("the server was stopped");
                            self.set_idle(ServerState::Stopped, None);
                            let _ = done.send(());
                            return Next::Idle;
                        }
                        // Already starting.
                        Some(Command::Start(done) | Command::Restart(done)) => { let _ = done.send(()); }
                        Some(Command::Reconnect { reply, .. }) => self.waiters.push(reply),
                    },
                }
            }
        };
        let session = match started {
            Ok(session) => session,
            Err(failure) => return self.after_start_failure(failure),
        };

        self.generation += 1;
        let pid = session.pid();
        let protocol = session.protocol_version();
        let live = Arc::new(Live {
            peer: session.peer().clone(),
            listing: Arc::new(session.listing().clone()),
            progress,
            askers,
            lane: session.lane().cloned(),
            stdin: session.stdin().cloned(),
            http_lane: session.http_lane().cloned(),
            ending: session.ending().cloned(),
            generation: self.generation,
            listener: session.listener(),
        });
        tracing::info!(
            pid,
            generation = self.generation,
            tools = live.listing.tools.len(),
            resources = live.listing.resources.len(),
            resource_templates = live.listing.resource_templates.len(),
            prompts = live.listing.prompts.len(),
            "running"
        );
        self.update(|snap| {
            snap.status.state = ServerState::Running;
            snap.status.pid = pid;
            snap.status.protocol = protocol;
            snap.live = Some(live.clone());
            snap.sign_in_challenge = None;
        });
        for waiter in self.waiters.drain(..) {
            let _ = waiter.send(Ok(live.clone()));
        }

        let since = Instant::now();
        match self.serve(session, inbox).await {
            Ended::Stopped(done) => {
                self.set_idle(ServerState::Stopped, None);
                let _ = done.send(());
                Next::Idle
            }
            Ended::Restart(done) => {
                self.fresh_start();
                self.started_acks.push(done);
                Next::StartNow
            }
            Ended::Orphaned => Next::Exit,
            Ended::SignInLost { why, challenge } => {
                tracing::warn!(reason = %why, "the sign-in is no longer valid");
                self.fail_waiters(&why);
                self.update(|snap| snap.sign_in_challenge = challenge);
                self.set_idle(ServerState::NeedsSignIn, Some(why));
                Next::Idle
            }
            Ended::Lost { why, reported } => {
                tracing::warn!(reason = %why, "session lost");
                self.after_loss(why, since.elapsed(), reported)
            }
        }
    }

    fn after_start_failure(&mut self, failure: StartFailure) -> Next {
        tracing::warn!(error = %failure.message, permanent = failure.permanent, "start failed");
        self.fail_waiters(&failure.message);
        if failure.sign_in {
            self.update(|snap| snap.sign_in_challenge = failure.challenge);
            self.set_idle(ServerState::NeedsSignIn, Some(failure.message));
            return Next::Idle;
        }
        if failure.permanent {
            self.set_idle(ServerState::Failed, Some(failure.message));
            return Next::Idle;
        }
        match self.backoff.failed(Duration::ZERO) {
            Verdict::GiveUp => {
                let why = format!(
                    "{} (gave up after {} failures in a row)",
                    failure.message,
                    self.backoff.failures()
                );
                self.set_idle(ServerState::Failed, Some(why));
                Next::Idle
            }
            Verdict::RetryAfter(delay) => {
                self.count_restart(failure.message);
                let asked = failure
                    .retry_after
                    .map_or(Duration::ZERO, |d| d.min(super::backoff::MAX_RETRY_AFTER));
                Next::Backoff(delay.max(asked))
            }
        }
    }

    fn after_loss(&mut self, why: String, ran_for: Duration, reported: bool) -> Next {
        match self.backoff.failed(ran_for) {
            Verdict::GiveUp => {
                self.fail_waiters(&why);
                let why = format!(
                    "{why} (gave up after {} failures in a row)",
                    self.backoff.failures()
                );
                self.set_idle(ServerState::Failed, Some(why));
                Next::Idle
            }
            Verdict::RetryAfter(delay) => {
                self.count_restart(why);
                // Callers are waiting to retry on a new session: do not make them sit out the delay.
                if reported || !self.waiters.is_empty() {
                    Next::StartNow
                } else {
                    Next::Backoff(delay)
                }
            }
        }
    }

    fn state(&self) -> ServerState {
        self.publish.borrow().status.state
    }

    pub(super) fn live(&self) -> Option<Arc<Live>> {
        self.publish.borrow().live.clone()
    }

    pub(super) fn not_running(&self) -> ReconnectError {
        let status = &self.publish.borrow().status;
        ReconnectError(match &status.last_error {
            Some(e) => format!("server \"{}\" is {}: {e}", self.name, status.state.as_str()),
            None => format!("server \"{}\" is {}", self.name, status.state.as_str()),
        })
    }

    fn fail_waiters(&mut self, why: &str) {
        for waiter in self.waiters.drain(..) {
            let _ = waiter.send(Err(ReconnectError(format!(
                "server \"{}\" could not reconnect: {why}",
                self.name
            ))));
        }
    }

    /// The user started the server: past failures and their error no longer apply.
    fn fresh_start(&mut self) {
        self.backoff.reset();
        self.update(|snap| snap.status.last_error = None);
    }

    fn count_restart(&self, why: String) {
        self.update(|snap| {
            snap.status.restarts += 1;
            snap.status.last_error = Some(why);
        });
    }

    /// Enters `stopped` or `failed`; `error` replaces the last error when given.
    fn set_idle(&self, state: ServerState, error: Option<String>) {
        self.update(|snap| {
            snap.status.state = state;
            snap.status.retry_at_ms = None;
            snap.status.pid = None;
            snap.status.protocol = None;
            if error.is_some() {
                snap.status.last_error = error;
            }
            snap.live = None;
        });
    }

    /// Applies `f` to the snapshot, stamps state changes, and tells the hub. A last error
    /// that changed is scrubbed of every known secret first: it quotes what the server said
    /// (a `WWW-Authenticate` `error_description`, stderr), and a hostile or careless server
    /// may echo the token it was sent; `status`, the window and agents' errors read it.
    pub(super) fn update(&self, f: impl FnOnce(&mut Snapshot)) {
        self.publish.send_modify(|snap| {
            let before = snap.status.state;
            let error_before = snap.status.last_error.clone();
            f(snap);
            if snap.status.last_error != error_before
                && let Some(error) = snap.status.last_error.as_mut()
            {
                *error = crate::net::scrub_known(error);
            }
            if snap.status.state != before {
                snap.status.since_ms = now_ms();
            }
        });
        (self.report)(&self.name);
    }
}
