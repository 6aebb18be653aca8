//! The writer thread: the one owner of the database connection. It takes entries off the
//! queue in batches (one transaction each), turns them into rows (shapes or masked payloads,
//! byte counts), writes a `dropped` row when entries were lost to a full queue, and enforces
//! retention at start, every [`MAINTENANCE_EVERY`] and every [`MAINTENANCE_ROWS`] rows.
//!
//! A batch is what the queue holds when the writer wakes, plus what arrives in the
//! [`BATCH_WINDOW`] after (unless it already has [`BATCH`] entries or a flush waits): a
//! transaction's commit costs as much as a few inserts, so calls one after another would
//! otherwise pay one commit each; and while the writer sleeps, queueing an entry wakes
//! nobody.
//!
//! Every row also goes to the [`Sink`], when there is one, after its batch's insert; the
//! writer runs without a database when only the sink wants rows.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::entry::{AGENT_TEXT_MAX, CallEntry, Ended, Entry, ListingEntry, Payload, ServerEntry};
use super::shape::{is_error, render, render_result};
use super::store::{Row, Store};
use super::time::now_ms;

/// At most this many entries go into one transaction.
const BATCH: usize = 512;
/// How long a batch that is not full waits for more entries before it is written.
const BATCH_WINDOW: Duration = Duration::from_millis(10);
/// Retention runs this often…
const MAINTENANCE_EVERY: Duration = Duration::from_secs(600);
/// …and after this many rows were written since it last ran.
const MAINTENANCE_ROWS: u64 = 20_000;

/// What the queue carries.
#[derive(Debug)]
pub(super) enum Msg {
    Entry(Entry),
    /// Answered once everything queued before it is written.
    Flush(Flush),
}

/// The answers to one flush: `stored` once the entries queued before it are in the database,
/// `sent` once the sink was also told to send what it holds ([`Sink::flush`]), which may wait
/// on a collector.
#[derive(Debug)]
pub(super) struct Flush {
    pub(super) stored: Option<mpsc::Sender<()>>,
    pub(super) sent: mpsc::Sender<()>,
}

/// Another consumer of the rows (the OpenTelemetry export): called on the writer thread, so
/// it must not block on the network in [`Sink::row`].
pub trait Sink: Send {
    /// One row, as inserted (arguments and result are shapes or masked payloads; a sink
    /// that must not see them ignores those fields).
    fn row(&mut self, row: &Row);
    /// Send what was handed over so far, waiting (bounded by the sink's own timeouts): asked
    /// by [`super::Activity::flush`].
    fn flush(&mut self);
}

/// Where rows go: the database, the sink, or both.
pub(super) struct Outputs {
    pub store: Option<Store>,
    pub sink: Option<Box<dyn Sink>>,
}

/// What the writer keeps and for how long.
#[derive(Clone, Debug)]
pub(super) struct Rules {
    pub record_payloads: bool,
    pub max_age: Duration,
    pub max_size_bytes: u64,
}

/// Starts the writer on `outputs`; returns the queue's sending side (`capacity` entries).
pub(super) fn spawn(
    outputs: Outputs,
    rules: Rules,
    capacity: usize,
    dropped: Arc<AtomicU64>,
) -> mpsc::SyncSender<Msg> {
    let (tx, rx) = mpsc::sync_channel(capacity);
    let spawned = std::thread::Builder::new()
        .name("activity-writer".into())
        .spawn(move || run(outputs, &rules, &rx, &dropped));
    if let Err(e) = spawned {
        tracing::error!(error = %e, "cannot start the activity log's writer; nothing is recorded");
    }
    tx
}

fn run(outputs: Outputs, rules: &Rules, rx: &mpsc::Receiver<Msg>, dropped: &AtomicU64) {
    let Outputs {
        mut store,
        mut sink,
    } = outputs;
    // Without a database the payloads are never rendered: no sink reads them.
    let payloads = store.is_some();
    let mut written_dropped = 0;
    let mut since_maintenance = 0;
    maintain(store.as_mut(), rules);
    let mut next_maintenance = Instant::now() + MAINTENANCE_EVERY;
    loop {
        let wait = next_maintenance.saturating_duration_since(Instant::now());
        let first = match rx.recv_timeout(wait) {
            Ok(m) => Some(m),
            Err(mpsc::RecvTimeoutError::Timeout) => None,
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        };
        let mut batch = Batch::default();
        let mode = Mode {
            full: rules.record_payloads,
            payloads,
        };
        batch.take(first, rx, mode);
        if !batch.rows.is_empty() && batch.taken < BATCH && batch.flushes.is_empty() {
            std::thread::sleep(BATCH_WINDOW);
            let next = rx.try_recv().ok();
            batch.take(next, rx, mode);
        }
        let Batch {
            mut rows, flushes, ..
        } = batch;
        let lost = dropped.load(Ordering::Relaxed);
        if lost > written_dropped {
            rows.push(Row {
                at_ms: now_ms(),
                kind: "dropped",
                detail: Some("the activity queue was full".into()),
                count: Some(lost - written_dropped),
                ..Row::default()
            });
        }
        if let Some(store) = store.as_mut().filter(|_| !rows.is_empty()) {
            match store.insert(&rows) {
                Ok(()) => {
                    written_dropped = lost;
                    since_maintenance += rows.len() as u64;
                }
                Err(e) => {
                    // Counted as dropped, so the next successful batch says so.
                    let n = rows.iter().filter(|r| r.kind != "dropped").count() as u64;
                    dropped.fetch_add(n, Ordering::Relaxed);
                    tracing::warn!(path = %store.path().display(), error = %e, entries = n, "could not write to the activity log");
                }
            }
        } else {
            written_dropped = lost;
        }
        for flush in &flushes {
            if let Some(stored) = &flush.stored {
                let _ = stored.send(());
            }
        }
        if let Some(sink) = sink.as_mut() {
            for row in &rows {
                sink.row(row);
            }
            if !flushes.is_empty() {
                sink.flush();
            }
        }
        for flush in flushes {
            let _ = flush.sent.send(());
        }
        if Instant::now() >= next_maintenance || since_maintenance >= MAINTENANCE_ROWS {
            maintain(store.as_mut(), rules);
            since_maintenance = 0;
            next_maintenance = Instant::now() + MAINTENANCE_EVERY;
        }
    }
}

/// The entries and flushes taken off the queue for one transaction.
#[derive(Default)]
struct Batch {
    rows: Vec<Row>,
    flushes: Vec<Flush>,
    taken: usize,
}

/// How a row keeps arguments and results.
#[derive(Clone, Copy)]
struct Mode {
    /// In full (masked), else as shapes.
    full: bool,
    /// At all (not when only a sink reads the rows).
    payloads: bool,
}

impl Batch {
    /// Takes `first`, then what the queue holds without waiting, up to [`BATCH`] messages.
    fn take(&mut self, first: Option<Msg>, rx: &mpsc::Receiver<Msg>, mode: Mode) {
        let mut next = first;
        while let Some(m) = next.take() {
            match m {
                Msg::Entry(e) => self.rows.push(to_row(e, mode)),
                Msg::Flush(done) => self.flushes.push(done),
            }
            self.taken += 1;
            if self.taken < BATCH {
                next = rx.try_recv().ok();
            }
        }
    }
}

fn maintain(store: Option<&mut Store>, rules: &Rules) {
    let Some(store) = store else {
        return;
    };
    match store.retain(now_ms(), rules.max_age, rules.max_size_bytes) {
        Ok(0) => {}
        Ok(n) => tracing::debug!(entries = n, "activity log: retention deleted old entries"),
        Err(e) => {
            tracing::warn!(path = %store.path().display(), error = %e, "activity log: retention failed")
        }
    }
}

/// The row of `entry`, its payloads rendered as `mode` says.
fn to_row(entry: Entry, mode: Mode) -> Row {
    match entry {
        Entry::Call(call) => call_row(*call, mode),
        Entry::Listing(listing) => listing_row(listing),
        Entry::Server(server) => server_row(server),
    }
}

fn call_row(call: CallEntry, mode: Mode) -> Row {
    let full = mode.full;
    // The arguments' JSON text: the fast path's raw text as it is, the rmcp path's encoded.
    let encoded;
    let arguments = match &call.arguments {
        Payload::None => None,
        Payload::Object(o) => {
            encoded = serde_json::to_string(o).ok();
            encoded.as_deref()
        }
        Payload::Raw(raw) => Some(raw.get()),
    };
    let mut row = Row {
        at_ms: call.at_ms,
        kind: "call",
        agent: call.agent.name.as_deref().map(outside_text),
        agent_version: call.agent.version.as_deref().map(outside_text),
        agent_pid: call.agent.pid,
        agent_exe: call.agent.exe,
        profile: call.profile.map(|p| p.to_string()),
        server: call.server.map(|s| s.to_string()),
        tool: Some(call.tool),
        path: Some(call.path),
        duration_ms: Some(call.duration.as_secs_f64() * 1000.0),
        bytes_in: Some(arguments.map_or(0, |a| a.len() as u64)),
        arguments: arguments.filter(|_| mode.payloads).map(|a| render(a, full)),
        attempts: (call.attempts > 0).then_some(call.attempts),
        ..Row::default()
    };
    match call.ended {
        Ended::Result(result) => {
            if let Ok(text) = serde_json::to_string(&result) {
                with_result(&mut row, &text, mode);
            }
        }
        Ended::Raw(bytes) => with_result(&mut row, &String::from_utf8_lossy(&bytes), mode),
        Ended::Failed {
            outcome,
            kind,
            detail,
            message,
        } => {
            row.outcome = Some(outcome.to_owned());
            row.error_kind = Some(kind);
            let said = if full { message } else { detail };
            row.detail = Some(crate::net::scrub_known(&said));
        }
        Ended::Cancelled => row.outcome = Some("cancelled".to_owned()),
    }
    if row.detail.is_none() {
        row.detail = call.approval.map(str::to_owned);
    }
    row
}

/// Fills in `row`'s outcome, size and (as `mode` says) result from `result`, a call's result
/// as JSON text.
fn with_result(row: &mut Row, result: &str, mode: Mode) {
    let (stored, is_error) = if mode.payloads {
        let (stored, is_error) = render_result(result, mode.full);
        (Some(stored), is_error)
    } else {
        (None, is_error(result))
    };
    row.outcome = Some(if is_error { "isError" } else { "ok" }.to_owned());
    row.bytes_out = Some(result.len() as u64);
    row.result = stored;
}

/// An agent's name or version as stored: known secrets masked ([`crate::net::scrub_known`]),
/// escaped ([`crate::io::text::inert`]) and cut to
/// [`AGENT_TEXT_MAX`] characters, marked `…` when cut (an agent chooses its `clientInfo`
/// freely, and one sent a 200 KB name).
fn outside_text(text: &str) -> String {
    let masked = crate::net::scrub_known(text);
    let inert = crate::io::text::inert(&masked);
    match inert.char_indices().nth(AGENT_TEXT_MAX) {
        Some((end, _)) => format!("{}…", &inert[..end]),
        None => inert.into_owned(),
    }
}

fn listing_row(listing: ListingEntry) -> Row {
    Row {
        at_ms: listing.at_ms,
        kind: "list",
        agent: listing.agent.name.as_deref().map(outside_text),
        agent_version: listing.agent.version.as_deref().map(outside_text),
        agent_pid: listing.agent.pid,
        agent_exe: listing.agent.exe,
        profile: listing.profile.map(|p| p.to_string()),
        tool: Some(listing.method.to_owned()),
        path: Some(listing.path),
        outcome: Some("ok".to_owned()),
        detail: listing.cursor.map(|c| format!("cursor {c}")),
        count: Some(listing.items as u64),
        ..Row::default()
    }
}

fn server_row(server: ServerEntry) -> Row {
    let detail = match (server.previous, server.detail) {
        (Some(p), Some(d)) => Some(format!("was {p}; {d}")),
        (Some(p), None) => Some(format!("was {p}")),
        (None, d) => d,
    };
    Row {
        at_ms: server.at_ms,
        kind: "server",
        server: Some(server.server),
        outcome: Some(server.state),
        detail: detail.map(|d| crate::net::scrub(&d)),
        ..Row::default()
    }
}
