//! The fast lane of a stdio session: requests written straight onto the server's stdin, and
//! their answers handed back as raw line bytes, without passing through rmcp's service loop.
//!
//! ```text
//!  rmcp service loop ──send──▶ LaneTransport ──┐            ┌──▶ rmcp (decoded, as before)
//!                                              ├─▶ stdin    │
//!  fast call ──Ticket::send─▶ FastLane writer ─┘   stdout ──┤ peek "id": "fp-<n>"?
//!                                                           └──▶ the waiting Ticket (raw bytes)
//! ```
//!
//! One writer serves both: every frame (one line) is written whole under one lock, so lines
//! never interleave. A server that stops reading its input fills the pipe and holds that lock;
//! requests give up waiting for it at their deadline ([`write`]: [`Ticket::send_until`] on the
//! fast path, [`FastLane::withdraw`] for rmcp's requests), and one given up before its first
//! byte is never written. Fast-lane requests use string ids `"fp-<n>"`, a space rmcp never uses (its
//! ids are numbers), so an answer is routed by its id alone. Everything that is not the answer
//! to a waiting fast-lane request is decoded and handed to rmcp exactly as rmcp's own stdio
//! transport would ([`LaneTransport`]).
//!
//! The lane ends once: when the server's stdout ends or fails ([`LaneEnd::Lost`]) or when our
//! side closes the session ([`LaneEnd::Closed`]); every waiting ticket then learns why.

mod peek;
mod queued;
mod transport;
mod waiting;
mod write;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

use self::waiting::{Delivery, Swept, Waiter, Waiting};
use self::write::SharedWriter;

pub use transport::LaneTransport;
pub use write::{Interrupted, Unsent};

/// The environment variable that switches the fast path off: `0`, `off`, `false` or `no`
/// (any other value, or none, leaves it on).
pub const SWITCH_ENV: &str = "MCP_COMPANION_FAST_PATH";

/// Whether new stdio sessions get a fast lane (and agents' calls use it): on unless
/// [`SWITCH_ENV`] turns it off. Read once per process.
pub fn enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    *ENABLED.get_or_init(|| {
        !matches!(
            std::env::var(SWITCH_ENV)
                .map(|v| v.trim().to_ascii_lowercase())
                .as_deref(),
            Ok("0" | "off" | "false" | "no")
        )
    })
}

/// The write half of a lane: the server's stdin (or a test's stream).
type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// Why a lane carries no more answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LaneEnd {
    /// The server's output ended or failed; the text says how ("the connection closed").
    Lost(String),
    /// Our side closed the session (the server was stopped, restarted or removed).
    Closed,
}

/// A handle on one session's fast lane; cheap to clone. Held by [`crate::supervisor::Live`].
#[derive(Clone)]
pub struct FastLane {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for FastLane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FastLane")
            .field("waiting", &self.lock_waiting().map.len())
            .field("ended", &self.shared.ended.get())
            .finish()
    }
}

struct Shared {
    /// `None` once our side closed the session.
    writer: SharedWriter,
    /// The tickets waiting for their answer lines, with their deadlines ([`waiting`]).
    waiting: Mutex<Waiting>,
    /// Wakes the deadline sweeper ([`waiting::spawn_sweeper`]).
    wake: Arc<Notify>,
    next: AtomicU64,
    ended: OnceLock<LaneEnd>,
    /// rmcp's requests waiting to be written ([`queued`]).
    queued: queued::Queued,
}

impl Swept for Shared {
    fn with_waiting<T>(&self, f: impl FnOnce(&mut Waiting) -> T) -> T {
        // Each critical section is one insert, remove or sweep: a poisoned table is consistent.
        f(&mut self.waiting.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn has_ended(&self) -> bool {
        self.ended.get().is_some()
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // The sweeper holds the lane weakly: this is its cue to stop.
        self.wake.notify_one();
    }
}

impl FastLane {
    /// A lane writing to `writer`; pair it with [`LaneTransport::new`] on the read half. Spawns
    /// the lane's deadline sweeper, so it must be called inside a tokio runtime.
    pub fn new(writer: impl AsyncWrite + Send + Unpin + 'static) -> FastLane {
        let wake = Arc::new(Notify::new());
        let shared = Arc::new(Shared {
            writer: Arc::new(tokio::sync::Mutex::new(Some(Box::new(writer)))),
            waiting: Mutex::new(Waiting::default()),
            wake: wake.clone(),
            next: AtomicU64::new(1),
            ended: OnceLock::new(),
            queued: queued::Queued::default(),
        });
        waiting::spawn_sweeper(Arc::downgrade(&shared), wake);
        FastLane { shared }
    }

    fn lock_waiting(&self) -> std::sync::MutexGuard<'_, Waiting> {
        // Each critical section is one insert, remove or drain: a poisoned map is consistent.
        self.shared
            .waiting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Why the lane ended, if it has.
    pub fn ended(&self) -> Option<LaneEnd> {
        self.shared.ended.get().cloned()
    }

    /// Registers a new fast-lane request and returns its ticket (which holds its id); its
    /// answer is given up `timeout` from now ([`NoAnswer::TimedOut`]).
    ///
    /// # Errors
    /// Why the lane ended, when it has: nothing would answer.
    pub fn open(&self, timeout: Duration) -> Result<Ticket, LaneEnd> {
        if let Some(end) = self.ended() {
            return Err(end);
        }
        let n = self.shared.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        let waiter = Waiter {
            tx,
            deadline: Instant::now() + timeout,
        };
        if self.lock_waiting().insert(n, waiter) {
            self.shared.wake.notify_one();
        }
        // Ended between the check and the insert: the drain may have missed this entry.
        if let Some(end) = self.ended() {
            self.lock_waiting().map.remove(&n);
            return Err(end);
        }
        Ok(Ticket {
            lane: self.clone(),
            n,
            answer: rx,
            early: None,
        })
    }

    /// Writes one whole frame (ending in `\n`) under the writer lock, then flushes.
    async fn write_frame(&self, frame: &[u8]) -> std::io::Result<()> {
        let mut writer = self.shared.writer.lock().await;
        let Some(w) = writer.as_mut() else {
            return Err(write::closed());
        };
        w.write_all(frame).await?;
        w.flush().await
    }

    /// Stops the write of rmcp's request `id` if none of it is written yet: `true` when the
    /// server never gets it (the write waited for a server that is not reading its input);
    /// `false` when it was written whole, is being finished, or is not known here.
    pub async fn withdraw(&self, id: &rmcp::model::RequestId) -> bool {
        self.shared.queued.withdraw(id).await
    }

    /// Whether any fast-lane request waits for an answer (the reader peeks ids only then).
    fn has_waiting(&self) -> bool {
        !self.lock_waiting().map.is_empty()
    }

    /// Hands `line` to the ticket waiting for request `n`; gives the line back when none waits.
    fn deliver(&self, n: u64, line: Vec<u8>) -> Result<(), Vec<u8>> {
        let waiter = self.lock_waiting().map.remove(&n);
        match waiter {
            // A ticket dropped meanwhile (its agent cancelled): the answer is not wanted.
            Some(waiter) => {
                let _ = waiter.tx.send(Some(line));
                Ok(())
            }
            None => Err(line),
        }
    }

    /// Records why the lane ended (the first reason wins) and wakes every waiting ticket.
    fn end(&self, why: LaneEnd) {
        let _ = self.shared.ended.set(why);
        self.lock_waiting().map.clear();
        self.shared.wake.notify_one();
    }

    /// Closes the write half (the server sees end of input), as rmcp's `close` does.
    async fn close_writer(&self) {
        let writer = self.shared.writer.lock().await.take();
        if let Some(mut w) = writer {
            let _ = w.shutdown().await;
        }
    }
}

/// One fast-lane request: its id, and the answer when it comes. Dropping it forgets the
/// request (a late answer is then discarded).
#[derive(Debug)]
pub struct Ticket {
    lane: FastLane,
    n: u64,
    answer: oneshot::Receiver<Delivery>,
    /// An answer that came while the request was still being written ([`Self::send_until`]).
    early: Option<Vec<u8>>,
}

/// Why a [`Ticket`] has no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoAnswer {
    /// The `timeout` given to [`FastLane::open`] passed first.
    TimedOut,
    /// The lane ended first.
    Ended(LaneEnd),
}

impl Ticket {
    /// The request id as JSON: `"fp-<n>"`, quotes included.
    pub fn id_json(&self) -> String {
        format!("\"fp-{}\"", self.n)
    }

    /// Writes `frame`, the whole request line carrying [`Self::id_json`], to the server.
    ///
    /// # Errors
    /// The write failed or the session is closed; the server then cannot have read the
    /// whole request.
    pub async fn send(&self, frame: &[u8]) -> std::io::Result<()> {
        self.lane.write_frame(frame).await
    }

    /// The server's answer line (JSON-RPC response or error, `\n` included). Cancel-safe.
    /// Not to be called again after it returned an error.
    ///
    /// # Errors
    /// [`NoAnswer`]: the ticket's timeout passed, or the lane ended, before the answer came.
    pub async fn answer(&mut self) -> Result<Vec<u8>, NoAnswer> {
        if let Some(line) = self.early.take() {
            return Ok(line);
        }
        match (&mut self.answer).await {
            Ok(Some(line)) => Ok(line),
            Ok(None) => Err(NoAnswer::TimedOut),
            Err(_) => Err(NoAnswer::Ended(
                self.lane.ended().unwrap_or(LaneEnd::Closed),
            )),
        }
    }

    /// Sends `notifications/cancelled` for this request with `reason` and forgets it. The
    /// notice is written by a spawned task, after every frame queued before it: the caller
    /// does not wait for a server that is not reading its input.
    pub fn cancel(self, reason: &str) {
        let note = serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": { "requestId": format!("fp-{}", self.n), "reason": reason },
        });
        let mut frame = note.to_string().into_bytes();
        frame.push(b'\n');
        let lane = self.lane.clone();
        drop(self);
        tokio::spawn(async move {
            if let Err(e) = lane.write_frame(&frame).await {
                tracing::debug!(error = %e, "could not send notifications/cancelled upstream");
            }
        });
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.lane.lock_waiting().map.remove(&self.n);
    }
}

#[cfg(test)]
mod tests;
