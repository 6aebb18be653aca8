//! The activity log: every call, listing and server event, recorded in a local SQLite database
//! (WAL mode) by one writer thread, never on the call path.
//!
//! ```text
//! call path ── Activity::record(Entry) ── try_send ─▶ bounded queue (QUEUE_CAPACITY)
//!                     │ full: counted in `dropped`, nothing waits          │
//!                     ▼                                                     ▼
//!               (the call goes on)                writer thread: batches ─▶ activity.db
//!                                                 shapes / masks payloads, retention
//! ```
//!
//! What a call costs on its path: a clone of its arguments and result on the rmcp path; on
//! the fast path a copy of the raw arguments' text and a handle on the reply's own result
//! bytes (shared, never copied, so a large result costs the log no memory of its own while it
//! waits); and one `try_send`. Turning them into shapes, masking, counting bytes and the
//! SQLite insert happen on the writer thread. When the queue is full
//! the entry is dropped and counted; the writer writes the count as a `dropped` entry once it
//! catches up, so the log says what it is missing.
//!
//! **What is stored** (one row per entry, [`store`]): time, kind (`call`, `list`, `server`,
//! `dropped`; later kinds such as an approval or a pinned definition get rows of their own
//! kind), the agent (`clientInfo` name and version), server, tool, path, duration, outcome
//! (`ok`, `isError`, `error` with a kind, `timeout`, `cancelled`), bytes in and out, and the
//! arguments and result: by default their **shape** (keys and types, string lengths, array
//! sizes; never a value, `shape.rs`), with `"recordPayloads": true` in full. Every secret the
//! companion knows ([`crate::net::scrub_known`]) is masked in both. The agent's name and
//! version are outside text: known secrets masked, stored escaped ([`crate::io::text::inert`])
//! and cut to [`AGENT_TEXT_MAX`] characters.
//!
//! **Other consumers** of the same rows: a [`Sink`] (the OpenTelemetry export,
//! `crate::telemetry`) is handed every row the writer makes, after its insert, on the writer
//! thread — one source of truth for what happened, and nothing more on the call path. With
//! the database switched off and a sink present, the writer runs for the sink alone.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | [`Activity`]: the handle calls record through, the queue and the drop count |
//! | `entry.rs` | [`Entry`]: what is queued, and [`Agent`] |
//! | `shape.rs` | arguments and results as shapes, or in full with secrets masked |
//! | `store/` | the database: opening (0600, WAL), the schema, inserts, retention |
//! | `writer.rs` | the writer thread: batches, drop notes, periodic retention, the [`Sink`] |
//! | `query.rs` | reading the log back: filters, `--follow`, rows as text or JSON |
//! | `time.rs` | UTC timestamps for display and `--since` |

mod entry;
pub mod query;
mod shape;
pub mod store;
mod time;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

pub use entry::{
    AGENT_TEXT_MAX, Agent, CallEntry, Ended, Entry, ListingEntry, Payload, ServerEntry,
};
pub use store::{Row, StoreError};
pub use time::{format_ms, now_ms, parse_since};
pub use writer::Sink;

use crate::config::ActivityConfig;

/// Entries the queue holds before new ones are dropped (and counted).
pub const QUEUE_CAPACITY: usize = 8192;

/// The handle the call path records through: cheap to clone; [`Activity::off`] records
/// nothing.
#[derive(Clone, Debug, Default)]
pub struct Activity {
    inner: Option<Arc<Shared>>,
}

#[derive(Debug)]
struct Shared {
    queue: mpsc::SyncSender<writer::Msg>,
    /// Entries dropped because the queue was full, since the start.
    dropped: Arc<AtomicU64>,
    path: Option<PathBuf>,
}

impl Activity {
    /// A handle that records nothing (the log is switched off, or could not be opened).
    pub fn off() -> Activity {
        Activity::default()
    }

    /// Opens (creating it, mode 0600) the database `config` names and starts the writer
    /// thread, which also hands every row to `sink` when there is one. [`Activity::off`] when
    /// the log is switched off and there is no sink; the writer without a database when the log
    /// is off and a sink is present.
    ///
    /// # Errors
    /// [`StoreError`] naming the file when it cannot be created, opened or set up.
    pub fn open(
        config: &ActivityConfig,
        sink: Option<Box<dyn Sink>>,
    ) -> Result<Activity, StoreError> {
        if !config.enabled {
            return Ok(match sink {
                Some(sink) => Activity::start(None, Some(sink), config, QUEUE_CAPACITY),
                None => Activity::off(),
            });
        }
        let path = config.database_path().ok_or(StoreError::NoDataDir)?;
        Activity::open_with(&path, config, QUEUE_CAPACITY, sink)
    }

    /// [`Activity::open`] at `path` with a queue of `capacity` entries.
    ///
    /// # Errors
    /// As [`Activity::open`].
    pub fn open_with(
        path: &Path,
        config: &ActivityConfig,
        capacity: usize,
        sink: Option<Box<dyn Sink>>,
    ) -> Result<Activity, StoreError> {
        let store = store::Store::open(path)?;
        Ok(Activity::start(Some(store), sink, config, capacity))
    }

    fn start(
        store: Option<store::Store>,
        sink: Option<Box<dyn Sink>>,
        config: &ActivityConfig,
        capacity: usize,
    ) -> Activity {
        let path = store.as_ref().map(|s| s.path().to_owned());
        let dropped = Arc::new(AtomicU64::new(0));
        let queue = writer::spawn(
            writer::Outputs { store, sink },
            writer::Rules {
                record_payloads: config.record_payloads,
                max_age: config.max_age,
                max_size_bytes: config.max_size_bytes,
            },
            capacity,
            dropped.clone(),
        );
        Activity {
            inner: Some(Arc::new(Shared {
                queue,
                dropped,
                path,
            })),
        }
    }

    /// Whether entries are recorded (callers skip preparing one when not).
    pub fn is_on(&self) -> bool {
        self.inner.is_some()
    }

    /// Queues `entry` for the writer without waiting; a full queue drops it and counts it.
    pub fn record(&self, entry: Entry) {
        let Some(shared) = &self.inner else {
            return;
        };
        match shared.queue.try_send(writer::Msg::Entry(entry)) {
            Ok(()) => {}
            Err(mpsc::TrySendError::Full(_)) => {
                shared.dropped.fetch_add(1, Ordering::Relaxed);
            }
            // The writer is gone (its database failed): nothing more can be recorded.
            Err(mpsc::TrySendError::Disconnected(_)) => {}
        }
    }

    /// Entries dropped because the queue was full, since the start.
    pub fn dropped(&self) -> u64 {
        self.inner
            .as_ref()
            .map_or(0, |s| s.dropped.load(Ordering::Relaxed))
    }

    /// The database file, when recording to one.
    pub fn path(&self) -> Option<&Path> {
        self.inner.as_ref().and_then(|s| s.path.as_deref())
    }

    /// Waits (blocking, at most `timeout`) until every entry queued before this call is in
    /// the database and handed to the sink, and the sink was told to send what it holds
    /// ([`Sink::flush`]). `false` when the time ran out or the writer is gone.
    pub fn flush(&self, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        let Some((_, sent)) = self.ask_flush(deadline, false) else {
            return self.inner.is_none();
        };
        sent.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()))
            .is_ok()
    }

    /// The flush of a stop: waits at most `timeout` until every entry queued before this call
    /// is in the database (the answer: `false` when the time ran out or the writer is gone),
    /// then at most `sink_grace` more for the sink's send. A collector that hangs delays the
    /// stop by `sink_grace` at most and is no reason to doubt the database.
    pub fn flush_at_exit(&self, timeout: Duration, sink_grace: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        let Some((stored, sent)) = self.ask_flush(deadline, true) else {
            return self.inner.is_none();
        };
        let stored = stored.is_some_and(|s| {
            s.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()))
                .is_ok()
        });
        if stored && sent.recv_timeout(sink_grace).is_err() {
            tracing::debug!("the telemetry export did not finish before the stop");
        }
        stored
    }

    /// Queues a flush (waiting for room until `deadline`); its receivers, `None` when the
    /// log is off, the writer is gone or the queue stayed full.
    fn ask_flush(
        &self,
        deadline: std::time::Instant,
        stored: bool,
    ) -> Option<(Option<mpsc::Receiver<()>>, mpsc::Receiver<()>)> {
        let shared = self.inner.as_ref()?;
        let (stored_tx, stored_rx) = if stored {
            let (tx, rx) = mpsc::channel();
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        let (sent_tx, sent_rx) = mpsc::channel();
        let mut msg = writer::Msg::Flush(writer::Flush {
            stored: stored_tx,
            sent: sent_tx,
        });
        loop {
            match shared.queue.try_send(msg) {
                Ok(()) => return Some((stored_rx, sent_rx)),
                Err(mpsc::TrySendError::Full(m)) if std::time::Instant::now() < deadline => {
                    msg = m;
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(_) => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests;
