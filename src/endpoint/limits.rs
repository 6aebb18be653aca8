//! What one connection on the local sockets may hold, so that one agent cannot hurt the others
//! or the machine (SECURITY.md, "Hostile or broken agents"). The two control-socket bounds are
//! defined with the control API; the table lists them too, so every bound is in one place.
//!
//! | resource | bound | when reached |
//! |---|---|---|
//! | requests in flight on one agent connection | [`MAX_IN_FLIGHT`] | its next line is not read until one is answered |
//! | answer bytes waiting to be written to one agent connection | [`MAX_QUEUED_BYTES`] | its next line is not read until they are written |
//! | server notifications waiting to be written to one agent connection | [`AGENT_NOTICE_BYTES`](crate::upstream::notice::AGENT_NOTICE_BYTES) | further ones are dropped for that connection, counted and warned once ([`crate::upstream::notice`]) |
//! | progress of one call waiting to be written | [`SINK_BYTES`](crate::upstream::progress::SINK_BYTES) | the call's further progress is dropped, warned once |
//! | one line (message) | 64 MiB (`upstream::MAX_MESSAGE_BYTES`) agent, 64 KiB control | -32700 / `tooLong`, the rest of the line skipped |
//! | a line begun but not finished | [`LINE_DEADLINE`] | the connection is closed |
//! | a connection that has not finished `initialize` | [`INITIALIZE_TIMEOUT`] | the connection is closed |
//! | open agent connections | a quarter of the descriptor limit, at most [`MAX_AGENT_CONNECTIONS`] ([`crate::ipc::descriptors`]) | the oldest connection that has not finished `initialize` is closed; with none, the new one gets one JSON-RPC error line (`data.reason` `connectionLimit`) and is closed |
//! | open control connections | a sixteenth of the descriptor limit, at most [`MAX_CONTROL_CONNECTIONS`](crate::control::MAX_CONTROL_CONNECTIONS) | the oldest connection that has sent no request is closed; with none, the new one gets one `busy` reply and is closed |
//! | a control reply the client does not read | [`CONTROL_WRITE_TIMEOUT`](crate::control::CONTROL_WRITE_TIMEOUT) | the connection is closed |
//!
//! No request is ever dropped (only the notifications above are): backpressure only delays reading, and every request that was
//! read gets exactly one answer (or, once the agent is gone, is cancelled upstream with
//! `notifications/cancelled`). Each pause is logged once when it starts and once when it ends.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rmcp::model::RequestId;
use tokio::sync::Notify;
use tokio::time::Instant;

/// Requests one agent connection may have in flight (read, not yet answered). A 65th is not
/// read until one of the 64 is answered and its answer written.
pub const MAX_IN_FLIGHT: usize = 64;

/// Bytes of answers and notifications one agent connection may have waiting to be written
/// (4 MiB) before its next line is not read until the agent reads what it was sent. One
/// message larger than this is still sent whole, and the calls already in flight (up to
/// [`MAX_IN_FLIGHT`]) still queue their answers: the queue's worst case is this plus their
/// answers.
pub const MAX_QUEUED_BYTES: usize = 4 * 1024 * 1024;

/// How long a line may take from its first byte to its newline (60 s) before the connection
/// is closed: a client that sends half a message and stalls holds its buffer no longer.
pub const LINE_DEADLINE: Duration = Duration::from_secs(60);

/// How long an agent connection may take to finish the MCP handshake (`initialize`, or the
/// first request of an `initialize`-less session) before it is closed (60 s).
pub const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(60);

/// Agent connections served at once, at most (a lower descriptor limit lowers it:
/// [`crate::ipc::descriptors`]). Each holds a task, a socket and its buffers; with
/// [`MAX_IN_FLIGHT`] and [`MAX_QUEUED_BYTES`] this bounds what all agents together may hold.
pub const MAX_AGENT_CONNECTIONS: usize = 256;

/// How long answers must have waited with none of them written, while the connection is
/// paused, before the agent is said not to read them (logged once per episode).
pub const NOT_READING_AFTER: Duration = Duration::from_secs(1);

/// The in-flight requests and queued answer bytes of one agent connection, and the wait for
/// room under [`MAX_IN_FLIGHT`] and [`MAX_QUEUED_BYTES`]. Shared between the reading side
/// (which waits) and the writes (which free room as they finish).
#[derive(Debug)]
pub struct Budget {
    state: Mutex<State>,
    changed: Notify,
    max_in_flight: usize,
    max_queued: usize,
}

#[derive(Debug)]
struct State {
    in_flight: HashSet<RequestId>,
    queued: usize,
    /// When the last write finished, or when bytes were queued after none were.
    last_written: Instant,
    /// Since when the agent leaves its answers unread (an episode, logged at both ends).
    not_reading: Option<Instant>,
    /// The in-flight bound was reached (logged the first time per connection).
    reached_in_flight: bool,
    /// Messages given up unwritten (their write failed or was dropped: the agent left).
    dropped: usize,
}

impl Default for State {
    fn default() -> Self {
        State {
            in_flight: HashSet::new(),
            queued: 0,
            last_written: Instant::now(),
            not_reading: None,
            reached_in_flight: false,
            dropped: 0,
        }
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget::new(MAX_IN_FLIGHT, MAX_QUEUED_BYTES)
    }
}

impl Budget {
    /// A budget of `max_in_flight` requests and `max_queued` bytes.
    pub fn new(max_in_flight: usize, max_queued: usize) -> Self {
        Budget {
            state: Mutex::default(),
            changed: Notify::new(),
            max_in_flight,
            max_queued,
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A request with `id` was read; it is in flight until its answer is written.
    pub fn requested(&self, id: RequestId) {
        self.state().in_flight.insert(id);
    }

    /// The agent cancelled request `id` (`notifications/cancelled`): no answer will be sent.
    pub fn cancelled(&self, id: &RequestId) {
        if self.state().in_flight.remove(id) {
            self.changed.notify_waiters();
        }
    }

    /// Requests read and not yet answered.
    pub fn in_flight(&self) -> usize {
        self.state().in_flight.len()
    }

    /// Answer bytes waiting to be written.
    pub fn queued(&self) -> usize {
        self.state().queued
    }

    /// `bytes` of a message (the answer to `answers`, if it is one) are about to be written;
    /// they count until the returned ticket is dropped, which also ends that request. Mark a
    /// message that reached the agent with [`Ticket::written`]; one dropped unmarked counts as
    /// given up ([`Self::dropped`]) and does not end a not-reading episode.
    pub fn queue(self: &Arc<Self>, answers: Option<RequestId>, bytes: usize) -> Ticket {
        let mut s = self.state();
        if s.queued == 0 {
            s.last_written = Instant::now();
        }
        s.queued += bytes;
        drop(s);
        Ticket {
            budget: self.clone(),
            answers,
            bytes,
            written: false,
        }
    }

    /// Returns once the connection may read another line: fewer than the maximum requests in
    /// flight and fewer than the maximum bytes queued. Cancel-safe.
    ///
    /// Logged once per episode, never per message: the first time a connection reaches the
    /// in-flight bound (normal flow control for a busy agent), and when a paused connection's
    /// answers have waited [`NOT_READING_AFTER`] with none written (the agent is not reading;
    /// that episode ends, with one more line, when everything queued has been written).
    pub async fn room(&self) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.has_room() {
                return;
            }
            tokio::select! {
                () = changed => {}
                () = tokio::time::sleep(NOT_READING_AFTER) => {}
            }
        }
    }

    /// Whether there is room now; logs the start of an episode.
    fn has_room(&self) -> bool {
        let mut s = self.state();
        let in_flight = s.in_flight.len();
        let full = in_flight >= self.max_in_flight || s.queued >= self.max_queued;
        if !full {
            return true;
        }
        if in_flight >= self.max_in_flight && !s.reached_in_flight {
            s.reached_in_flight = true;
            tracing::info!(
                "agent connection has {} requests in flight; each further request is read when one is answered",
                self.max_in_flight
            );
        }
        if s.not_reading.is_none() && s.queued > 0 && s.last_written.elapsed() >= NOT_READING_AFTER
        {
            s.not_reading = Some(Instant::now());
            tracing::warn!(
                queued_bytes = s.queued,
                in_flight,
                "agent connection is not reading its answers; pausing its requests until it does"
            );
        }
        false
    }

    /// Whether the agent is in a not-reading episode (for tests and the end-of-session line).
    pub fn not_reading(&self) -> bool {
        self.state().not_reading.is_some()
    }

    /// Messages given up unwritten so far (for the end-of-session line).
    pub fn dropped(&self) -> usize {
        self.state().dropped
    }

    /// A future that completes when the requests in flight or the queued bytes change; to miss
    /// nothing, `enable` it before looking at [`Self::in_flight`].
    pub fn changed(&self) -> tokio::sync::futures::Notified<'_> {
        self.changed.notified()
    }
}

/// Bytes counted against a [`Budget`] until dropped; dropping also ends the request the
/// message answers (written or not: a failed write means the agent is gone).
#[derive(Debug)]
pub struct Ticket {
    budget: Arc<Budget>,
    answers: Option<RequestId>,
    bytes: usize,
    written: bool,
}

impl Ticket {
    /// The message reached the agent: drops the ticket as written.
    pub fn written(mut self) {
        self.written = true;
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut s = self.budget.state();
        s.queued = s.queued.saturating_sub(self.bytes);
        if let Some(id) = &self.answers {
            s.in_flight.remove(id);
        }
        if !self.written {
            // The agent left with it unread: its episode (if any) is not over.
            s.dropped += 1;
            drop(s);
            self.budget.changed.notify_waiters();
            return;
        }
        s.last_written = Instant::now();
        if s.queued == 0
            && let Some(since) = s.not_reading.take()
        {
            tracing::info!(
                paused_s = since.elapsed().as_secs_f64(),
                "agent connection read its answers; reading its requests again"
            );
        }
        drop(s);
        self.budget.changed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: i64) -> RequestId {
        RequestId::Number(n)
    }

    async fn has_room_soon(budget: &Budget) -> bool {
        tokio::time::timeout(Duration::from_millis(50), budget.room())
            .await
            .is_ok()
    }

    #[tokio::test]
    async fn reading_pauses_at_the_in_flight_limit_and_resumes_when_an_answer_is_written() {
        let budget = Arc::new(Budget::new(2, 1000));
        budget.requested(id(1));
        assert!(has_room_soon(&budget).await);
        budget.requested(id(2));
        assert!(!has_room_soon(&budget).await);
        let waiting = tokio::spawn({
            let budget = budget.clone();
            async move { budget.room().await }
        });
        let ticket = budget.queue(Some(id(1)), 10);
        assert_eq!(budget.in_flight(), 2, "in flight until written");
        ticket.written();
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("woken")
            .expect("join");
        assert_eq!((budget.in_flight(), budget.queued()), (1, 0));
    }

    #[tokio::test]
    async fn reading_pauses_while_too_many_bytes_wait_to_be_written() {
        let budget = Arc::new(Budget::new(64, 100));
        let a = budget.queue(None, 60);
        assert!(has_room_soon(&budget).await);
        let b = budget.queue(None, 60);
        assert!(!has_room_soon(&budget).await);
        drop(a);
        assert!(has_room_soon(&budget).await);
        drop(b);
        assert_eq!(budget.queued(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn answers_left_unwritten_while_paused_start_one_not_reading_episode() {
        let budget = Arc::new(Budget::new(2, 1 << 20));
        budget.requested(id(1));
        budget.requested(id(2));
        let first = budget.queue(Some(id(1)), 100);
        let second = budget.queue(Some(id(2)), 100);
        assert!(
            tokio::time::timeout(NOT_READING_AFTER * 3, budget.room())
                .await
                .is_err()
        );
        assert!(budget.not_reading());
        first.written();
        // Room again, but the agent has not read everything yet: the episode goes on.
        budget.room().await;
        assert!(budget.not_reading());
        second.written();
        assert!(!budget.not_reading());
    }

    #[tokio::test(start_paused = true)]
    async fn answers_given_up_unwritten_leave_the_episode_open_and_are_counted() {
        let budget = Arc::new(Budget::new(1, 1 << 20));
        budget.requested(id(1));
        let answer = budget.queue(Some(id(1)), 100);
        assert!(
            tokio::time::timeout(NOT_READING_AFTER * 3, budget.room())
                .await
                .is_err()
        );
        assert!(budget.not_reading());
        // The agent left: the write failed and the answer is given up.
        drop(answer);
        assert_eq!((budget.in_flight(), budget.queued()), (0, 0));
        assert!(budget.not_reading(), "the agent never read it");
        assert_eq!(budget.dropped(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_busy_agent_at_the_in_flight_bound_is_not_said_to_stop_reading() {
        let budget = Arc::new(Budget::new(1, 1 << 20));
        budget.requested(id(1));
        assert!(
            tokio::time::timeout(NOT_READING_AFTER * 3, budget.room())
                .await
                .is_err()
        );
        assert!(!budget.not_reading(), "nothing was waiting to be written");
    }

    #[tokio::test]
    async fn a_cancelled_request_leaves_the_count_and_an_unknown_id_changes_nothing() {
        let budget = Arc::new(Budget::new(1, 100));
        budget.requested(id(7));
        assert!(!has_room_soon(&budget).await);
        budget.cancelled(&id(8));
        assert_eq!(budget.in_flight(), 1);
        budget.cancelled(&id(7));
        assert!(has_room_soon(&budget).await);
        // The answer to a cancelled request, if rmcp had already queued it, changes nothing.
        budget.queue(Some(id(7)), 5).written();
        assert_eq!((budget.in_flight(), budget.queued()), (0, 0));
    }
}
