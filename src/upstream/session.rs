//! [`Session`]: a connected upstream server as its owner (the supervisor, or a one-off probe)
//! sees it, whatever the transport: a peer to send requests on, what the server listed, a way
//! to learn that it ended ([`Session::closed`]) and a way to end it ([`Session::shutdown`]).

use std::sync::Arc;
use std::time::Duration;

use rmcp::service::{QuitReason, RunningService, RunningServiceCancellationToken};
use rmcp::{Peer, RoleClient};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::ending::{End, Ending};
use super::handler::{UpstreamEvent, UpstreamHandler};
use super::http_lane::HttpLane;
use super::lane::FastLane;
use super::listener::Listener;
use crate::catalog::ServerListing;
use crate::process::child::{self as stdio, StdioChild};

/// How long [`Session::shutdown`] waits for the rmcp service to wind down after the process is
/// gone.
const SERVICE_CLOSE_GRACE: Duration = Duration::from_millis(500);
/// How long [`Session::closed`] waits for a stdio process's exit status once its session closed.
const EXIT_STATUS_WAIT: Duration = Duration::from_secs(1);

/// How a session ended on its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Closed {
    /// The server's process exited; the text describes how (`exit code 3`,
    /// `signal 9 (SIGKILL)`).
    Exited(String),
    /// The connection closed (remote servers, or a process whose exit status is not known).
    Disconnected,
    /// The HTTP server answered that it no longer knows our session (it restarted, or
    /// expired the session); the text is what it said.
    SessionGone(String),
    /// The sign-in is no longer valid ([`super::signed_in`]): the server needs a new one.
    SignInLost {
        /// What happened and the command that fixes it.
        why: String,
        /// The refusal's `WWW-Authenticate`, for the next `login`.
        challenge: Option<String>,
    },
}

impl std::fmt::Display for Closed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Closed::Exited(how) => write!(f, "process exited ({how})"),
            Closed::Disconnected => f.write_str("the session closed"),
            Closed::SessionGone(what) => {
                write!(f, "the server no longer knows our session ({what})")
            }
            Closed::SignInLost { why, .. } => f.write_str(why),
        }
    }
}

/// A live upstream session and, for stdio servers, the process tree behind it. Dropping it
/// kills the process tree at once; [`Session::shutdown`] is the orderly way.
pub struct Session {
    peer: Peer<RoleClient>,
    listing: ServerListing,
    child: Option<StdioChild>,
    events: Option<mpsc::UnboundedReceiver<UpstreamEvent>>,
    stop: Option<RunningServiceCancellationToken>,
    quit: JoinHandle<Result<QuitReason, tokio::task::JoinError>>,
    quit_done: bool,
    /// Streamable HTTP: fires when the server answers "no such session".
    gone: Option<super::http::SessionGone>,
    lane: Option<FastLane>,
    /// A stdio session's writer to the server's stdin (its lane, used by the fast path or not).
    stdin: Option<FastLane>,
    /// A 2026-07-28 session's `subscriptions/listen` stream ([`super::listener`]).
    listener: Option<Arc<Listener>>,
    /// The lane for forwarded calls of a streamable-HTTP session ([`super::http_lane`]).
    http_lane: Option<HttpLane>,
    /// A stdio session's ending, noted by [`Session::closed`] for the calls in flight
    /// ([`super::ending`]).
    ending: Option<Ending>,
}

impl Session {
    /// Wraps a session whose handshake and first listing succeeded.
    pub(super) fn new(
        service: RunningService<RoleClient, UpstreamHandler>,
        listing: ServerListing,
        child: Option<StdioChild>,
        events: mpsc::UnboundedReceiver<UpstreamEvent>,
    ) -> Session {
        let peer = service.peer().clone();
        let stop = Some(service.cancellation_token());
        let modern = peer
            .peer_info()
            .is_some_and(|info| super::era::is_modern(&info.protocol_version));
        let listener =
            modern.then(|| Arc::new(Listener::spawn(peer.clone(), service.service().clone())));
        let ending = child.is_some().then(Ending::new);
        Session {
            peer,
            listing,
            child,
            events: Some(events),
            stop,
            quit: tokio::spawn(service.waiting()),
            quit_done: false,
            gone: None,
            lane: None,
            stdin: None,
            listener,
            http_lane: None,
            ending,
        }
    }

    /// Whether the session speaks 2026-07-28 ([`super::era`]).
    pub fn is_modern(&self) -> bool {
        self.peer
            .peer_info()
            .is_some_and(|info| super::era::is_modern(&info.protocol_version))
    }

    /// The session's `subscriptions/listen` stream, for a server of the 2026-07-28 era.
    pub fn listener(&self) -> Option<Arc<Listener>> {
        self.listener.clone()
    }

    /// Ends the session (see [`Session::closed`]) when `gone` fires: a streamable HTTP server
    /// that forgot the session leaves the connection looking healthy.
    pub(super) fn ending_on(mut self, gone: super::http::SessionGone) -> Session {
        self.gone = Some(gone);
        self
    }

    /// The session with a fast lane beside rmcp (stdio only, [`super::lane`]).
    pub(super) fn with_lane(mut self, lane: Option<FastLane>) -> Session {
        self.lane = lane;
        self
    }

    /// The session with `stdin`, the writer below its rmcp transport (stdio only).
    pub(super) fn with_stdin(mut self, stdin: FastLane) -> Session {
        self.stdin = Some(stdin);
        self
    }

    /// A stdio session's writer to the server's stdin, fast path or not: its rmcp requests
    /// that wait to be written can be withdrawn ([`FastLane::withdraw`]).
    pub fn stdin(&self) -> Option<&FastLane> {
        self.stdin.as_ref()
    }

    /// The session with a fast lane beside rmcp's streamable HTTP transport
    /// ([`super::http_lane`]).
    pub(super) fn with_http_lane(mut self, lane: Option<HttpLane>) -> Session {
        self.http_lane = lane;
        self
    }

    /// The streamable HTTP session's fast lane, when it has one.
    pub fn http_lane(&self) -> Option<&HttpLane> {
        self.http_lane.as_ref()
    }

    /// How a stdio session ended, once [`Session::closed`] learnt it (`None` for sessions
    /// without a process).
    pub fn ending(&self) -> Option<&Ending> {
        self.ending.as_ref()
    }

    /// The session's fast lane, when it has one.
    pub fn lane(&self) -> Option<&FastLane> {
        self.lane.as_ref()
    }

    /// Sends requests to the server.
    pub fn peer(&self) -> &Peer<RoleClient> {
        &self.peer
    }

    /// Everything the server listed when it connected.
    pub fn listing(&self) -> &ServerListing {
        &self.listing
    }

    /// The protocol version the server and we settled on (the one `initialize` agreed, or
    /// 2026-07-28 after `server/discover`), see [`super::era`].
    pub fn protocol_version(&self) -> Option<String> {
        self.peer
            .peer_info()
            .map(|info| info.protocol_version.as_str().to_owned())
    }

    /// The process id of a stdio server (the leader of its process group).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(StdioChild::pid)
    }

    /// The server's `list_changed` notifications, for the owner to re-list on. The first call
    /// takes the receiver; later calls get one that is already closed.
    pub fn take_list_changes(&mut self) -> mpsc::UnboundedReceiver<UpstreamEvent> {
        self.events
            .take()
            .unwrap_or_else(|| mpsc::unbounded_channel().1)
    }

    /// Resolves when the session ended on its own: the process exited, the connection
    /// closed, or the HTTP server said it no longer knows the session. For a stdio server
    /// whose connection closed first, the exit status is awaited for up to a second, since it
    /// explains more; the result is noted in the session's [`Ending`] for the calls that were
    /// in flight. Cancel-safe: call it again after a `select!` dropped it.
    pub async fn closed(&mut self) -> Closed {
        let closed = self.closed_on_its_own().await;
        if let Some(ending) = &self.ending {
            ending.note(End::of(&closed));
        }
        closed
    }

    /// [`Session::closed`] without the note.
    async fn closed_on_its_own(&mut self) -> Closed {
        if !self.quit_done {
            let exited = match self.child.as_mut() {
                Some(child) => {
                    tokio::select! {
                        status = child.wait() => status.ok(),
                        _ = &mut self.quit => { self.quit_done = true; None }
                    }
                }
                None => {
                    let gone = self.gone.clone();
                    let gone = async {
                        match gone {
                            Some(gone) => gone.wait().await,
                            None => std::future::pending().await,
                        }
                    };
                    tokio::select! {
                        _ = &mut self.quit => self.quit_done = true,
                        what = gone => return match what {
                            super::http::Gone::Session(what) => Closed::SessionGone(what),
                            super::http::Gone::SignIn { why, challenge } => {
                                Closed::SignInLost { why, challenge }
                            }
                        },
                    }
                    None
                }
            };
            if let Some(status) = exited {
                return Closed::Exited(stdio::describe_exit(&status));
            }
        }
        // The connection closed; for stdio, the process is what matters: it is exiting, so
        // let its exit status speak when it comes soon.
        let status = match self.child.as_mut() {
            Some(c) => tokio::time::timeout(EXIT_STATUS_WAIT, c.wait())
                .await
                .ok()
                .and_then(Result::ok),
            None => None,
        };
        match status {
            Some(status) => Closed::Exited(stdio::describe_exit(&status)),
            None => Closed::Disconnected,
        }
    }

    /// Ends the session: notes the stop in its [`Ending`] (the calls in flight then read
    /// "stopped", not a crash), stops the process tree (SIGTERM, [`stdio::STOP_GRACE`],
    /// SIGKILL), closes the connection (a streamable HTTP session sends its `DELETE`), and
    /// waits briefly for the client to wind down.
    pub async fn shutdown(mut self) {
        if let Some(ending) = &self.ending {
            ending.note(End::Stopped);
        }
        if let Some(child) = self.child.as_mut() {
            child.terminate(stdio::STOP_GRACE).await;
        }
        if let Some(stop) = self.stop.take() {
            stop.cancel();
        }
        if !self.quit_done {
            let _ = tokio::time::timeout(SERVICE_CLOSE_GRACE, &mut self.quit).await;
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // The child kills its tree on drop; the service must not linger either.
        if let Some(stop) = self.stop.take() {
            stop.cancel();
        }
    }
}
