//! The agent connection's transport with its bounds ([`super::limits`]): a [`LineTransport`]
//! that stops reading while its agent has too much in flight or leaves its answers unread, and
//! that notices when its agent has gone.
//!
//! Where rmcp buffers (rmcp 3.11 `serve_inner`): every request read is handed to a spawned
//! handler at once, and every answer becomes a spawned write of the whole message. Neither is
//! bounded, so an agent that writes requests without reading answers made the companion hold
//! every answer. Here `receive` does not read another line while [`MAX_IN_FLIGHT`] requests are
//! unanswered or [`MAX_QUEUED_BYTES`] of messages are unwritten (backpressure: the agent's own
//! writes then block), so rmcp never holds more than that per connection.
//!
//! The agent is *gone* when a write to it fails, when reading fails or stalls mid-line, or at
//! end of input when the socket says the agent closed both directions ([`Hangup`]; a client
//! that only closed its sending half — `mcp-companion bridge` does that when its stdin ends —
//! still gets every answer). Once gone: nothing more is read (its unread requests never run),
//! writes fail at once, and the `gone` token fires, which ends every call of the connection
//! (the endpoint drops them, sending `notifications/cancelled` upstream).
//!
//! Calls the fast path takes ([`super::fast`]) never reach rmcp and count just the same: the
//! relay enters each in the [`Budget`] as it takes the line, queues its answer's bytes as
//! `send` does, and cancels it (upstream too) when `gone` fires. [`LineTransport::step`]
//! returns after every line it hands over or a tap takes, so each line waits for room here.
//!
//! [`MAX_IN_FLIGHT`]: super::limits::MAX_IN_FLIGHT
//! [`MAX_QUEUED_BYTES`]: super::limits::MAX_QUEUED_BYTES

use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ClientNotification, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use super::limits::Budget;
use super::line::{End, LineTransport, Step, encode_line};

/// How often a connection whose input has ended, or that is paused, checks whether its agent
/// closed the socket.
const HANGUP_POLL: Duration = Duration::from_millis(100);

/// Tells a half-closed connection (the agent will still read) from one its agent closed.
#[derive(Debug)]
pub struct Hangup(Probe);

#[derive(Debug)]
enum Probe {
    /// A duplicate (close-on-exec) of the socket's (or handed-over stdout's) descriptor, polled
    /// for `POLLHUP` and `POLLERR`.
    #[cfg(unix)]
    Socket(std::os::fd::OwnedFd),
    /// End of input means the agent is gone (a Windows named pipe has no half-close).
    #[cfg(windows)]
    EofIsHangup,
    /// Nothing to ask: end of input is a half-close; only a failed write says the agent left.
    Unknown,
}

impl Hangup {
    /// The probe for an accepted agent connection.
    pub fn of(stream: &crate::ipc::socket::ServerStream) -> Self {
        #[cfg(unix)]
        {
            match rustix::io::fcntl_dupfd_cloexec(stream, 0) {
                Ok(fd) => Hangup(Probe::Socket(fd)),
                Err(e) => {
                    tracing::debug!(error = %e, "could not duplicate the agent socket to watch it");
                    Hangup(Probe::Unknown)
                }
            }
        }
        #[cfg(windows)]
        {
            let _ = stream;
            Hangup(Probe::EofIsHangup)
        }
    }

    /// The probe for a handed-over stdout (`mcp-companion bridge`'s, [`crate::ipc::handoff`]):
    /// a pipe's write end reports an error, a socket a hang-up, once the agent closed its end.
    #[cfg(unix)]
    pub fn of_fd(fd: std::os::fd::BorrowedFd<'_>) -> Self {
        match rustix::io::fcntl_dupfd_cloexec(fd, 0) {
            Ok(fd) => Hangup(Probe::Socket(fd)),
            Err(e) => {
                tracing::debug!(error = %e, "could not duplicate the agent's stdout to watch it");
                Hangup(Probe::Unknown)
            }
        }
    }

    /// No probe: for in-memory streams (tests).
    pub fn unknown() -> Self {
        Hangup(Probe::Unknown)
    }

    fn eof_is_hangup(&self) -> bool {
        #[cfg(windows)]
        {
            matches!(self.0, Probe::EofIsHangup)
        }
        #[cfg(not(windows))]
        {
            false
        }
    }

    fn can_poll(&self) -> bool {
        #[cfg(unix)]
        {
            matches!(self.0, Probe::Socket(_))
        }
        #[cfg(not(unix))]
        {
            false
        }
    }

    /// Whether the peer closed the connection in both directions (or it failed).
    fn hung_up(&self) -> bool {
        match &self.0 {
            #[cfg(unix)]
            Probe::Socket(fd) => {
                use rustix::event::{PollFd, PollFlags, Timespec, poll};
                let mut fds = [PollFd::new(fd, PollFlags::empty())];
                let now = Timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                poll(&mut fds, Some(&now))
                    .is_ok_and(|_| fds[0].revents().intersects(PollFlags::HUP | PollFlags::ERR))
            }
            #[cfg(windows)]
            Probe::EofIsHangup => false,
            Probe::Unknown => false,
        }
    }

    /// Returns when [`Self::hung_up`], checking every [`HANGUP_POLL`] from the first one on
    /// (so a wait that ends sooner costs nothing); never without a pollable socket.
    async fn watch(&self) {
        if !self.can_poll() {
            return std::future::pending().await;
        }
        loop {
            tokio::time::sleep(HANGUP_POLL).await;
            if self.hung_up() {
                return;
            }
        }
    }
}

/// A [`LineTransport`] under a [`Budget`], with the `gone` token of its agent.
pub struct Bounded<R, W> {
    inner: LineTransport<R, W>,
    budget: Arc<Budget>,
    gone: CancellationToken,
    hangup: Hangup,
    /// `receive` saw the end of input (or the agent left).
    input_ended: bool,
    /// The "agent left" line was logged.
    said_gone: bool,
}

impl<R, W> Bounded<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// `inner` under `budget`; `gone` fires when the agent has left (see the module doc).
    pub fn new(
        inner: LineTransport<R, W>,
        budget: Arc<Budget>,
        gone: CancellationToken,
        hangup: Hangup,
    ) -> Self {
        Bounded {
            inner,
            budget,
            gone,
            hangup,
            input_ended: false,
            said_gone: false,
        }
    }

    /// Counts what the agent sent: a request is in flight until answered; a cancelled one is not.
    fn track(&self, message: &ClientJsonRpcMessage) {
        match message {
            JsonRpcMessage::Request(request) => self.budget.requested(request.id.clone()),
            JsonRpcMessage::Notification(n) => {
                if let ClientNotification::CancelledNotification(c) = &n.notification
                    && let Some(id) = &c.params.request_id
                {
                    self.budget.cancelled(id);
                }
            }
            _ => {}
        }
    }

    /// The agent left: end every call, read nothing more.
    fn left(&mut self) -> Option<ClientJsonRpcMessage> {
        self.gone.cancel();
        self.input_ended = true;
        if !self.said_gone {
            self.said_gone = true;
            let in_flight = self.budget.in_flight();
            let unread = self.budget.dropped();
            if in_flight > 0 || unread > 0 || self.budget.not_reading() {
                tracing::info!(
                    in_flight,
                    unread_answers = unread,
                    queued_bytes = self.budget.queued(),
                    "agent connection closed; cancelling its calls in flight and dropping what it did not read"
                );
            }
        }
        None
    }
}

impl<R, W> Transport<RoleServer> for Bounded<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answers = match &item {
            JsonRpcMessage::Response(r) => Some(r.id.clone()),
            JsonRpcMessage::Error(e) => e.id.clone(),
            _ => None,
        };
        let encoded = encode_line(item);
        let ticket = self
            .budget
            .queue(answers, encoded.as_ref().map_or(0, Vec::len));
        let write = encoded.map(|bytes| self.inner.write_line(bytes));
        let gone = self.gone.clone();
        async move {
            let write = write?;
            let closed =
                || std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the agent has gone");
            if gone.is_cancelled() {
                return Err(closed());
            }
            let written = tokio::select! {
                biased;
                r = write => r,
                () = gone.cancelled() => Err(closed()),
            };
            match &written {
                Ok(()) => ticket.written(),
                Err(_) => gone.cancel(),
            }
            written
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        // One line per turn, the fast path's included: each waits for room.
        while !self.input_ended {
            // Room first: `watch` arms a timer, which a connection with room never needs
            // (and it first looks after `HANGUP_POLL` anyway).
            let room = tokio::select! {
                biased;
                () = self.gone.cancelled() => false,
                () = self.budget.room() => true,
                () = self.hangup.watch() => false,
            };
            if !room {
                return self.left();
            }
            let step = tokio::select! {
                biased;
                () = self.gone.cancelled() => None,
                step = self.inner.step() => Some(step),
            };
            match step {
                None => return self.left(),
                Some(Step::Taken) => {}
                Some(Step::Message(message)) => {
                    self.track(&message);
                    return Some(*message);
                }
                Some(Step::End) => {
                    self.input_ended = true;
                    let half_close = self.inner.end() == End::Eof && !self.hangup.eof_is_hangup();
                    if !half_close {
                        return self.left();
                    }
                }
            }
        }
        // Input ended: answers still go out until the last one, unless the agent left.
        let budget = self.budget.clone();
        loop {
            let changed = budget.changed();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.gone.is_cancelled() || self.hangup.hung_up() {
                return self.left();
            }
            if self.budget.in_flight() == 0 {
                return None;
            }
            tokio::select! {
                () = self.gone.cancelled() => {}
                () = changed => {}
                () = tokio::time::sleep(HANGUP_POLL), if self.hangup.can_poll() => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // The session is over: calls still running have nobody to answer.
        self.gone.cancel();
        self.inner.close().await
    }
}

#[cfg(test)]
mod tests;
