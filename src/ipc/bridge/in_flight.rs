//! The client's requests still waiting for the companion's response, read from the lines that
//! pass the bridge by their `id` and `method` alone.

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::upstream::MAX_MESSAGE_BYTES;

/// The ids of the client's requests that have no response yet, and whether its input ended.
#[derive(Debug, Default)]
pub(super) struct InFlight {
    /// Each id as JSON text, so `1` and `"1"` stay distinct (JSON-RPC 2.0 §4).
    ids: Mutex<HashSet<String>>,
    input_ended: AtomicBool,
    /// No more of the client's input will be read (it ended, or the companion stopped taking it).
    reading_ended: AtomicBool,
    /// Told of each request noted and of the end of reading ([`Self::requested`]).
    changed: tokio::sync::Notify,
}

/// The two members of a JSON-RPC message the bridge looks at; the rest is skipped unparsed.
#[derive(Deserialize)]
struct Peek {
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(default)]
    method: Option<IgnoredAny>,
}

impl InFlight {
    fn ids(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.ids.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Notes the request (with `method` and `id`) in a line sent to the companion, when the
    /// companion will answer it with that same id: the id a string or an integer (JSON-RPC
    /// 2.0 §4; the companion answers others, batches, lines that are not UTF-8 and lines over
    /// its size limit with an error whose id is `null` or normalised).
    pub(super) fn sent(&self, line: &[u8]) {
        if line.len() > MAX_MESSAGE_BYTES || std::str::from_utf8(line).is_err() {
            return;
        }
        if let Ok(Peek {
            id: Some(id),
            method: Some(_),
        }) = serde_json::from_slice::<Peek>(line.trim_ascii_start())
            && (id.is_string() || id.is_i64() || id.is_u64())
        {
            self.ids().insert(id.to_string());
            self.changed.notify_waiters();
        }
    }

    /// Notes that no more of the client's input will be read.
    pub(super) fn reading_ended(&self) {
        self.reading_ended.store(true, Ordering::SeqCst);
        self.changed.notify_waiters();
    }

    /// Resolves once a request is in flight, or no more input will be read.
    pub(super) async fn requested(&self) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            // Registered before the check, so a change in between is not missed.
            changed.as_mut().enable();
            if !self.ids().is_empty() || self.reading_ended.load(Ordering::SeqCst) {
                return;
            }
            changed.await;
        }
    }

    /// Notes the responses (`id` without `method`) in a line from the companion; true when the
    /// input has ended and nothing is in flight any more.
    pub(super) fn answered(&self, line: &[u8]) -> bool {
        let mut ids = self.ids();
        if !ids.is_empty() {
            for m in peek(line) {
                if let (Some(id), None) = (m.id, m.method) {
                    ids.remove(&id.to_string());
                }
            }
        }
        ids.is_empty() && self.input_ended.load(Ordering::SeqCst)
    }

    /// Every id still in flight (JSON text), forgetting them.
    pub(super) fn take_all(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.ids().drain().collect();
        ids.sort();
        ids
    }

    pub(super) fn has_input_ended(&self) -> bool {
        self.input_ended.load(Ordering::SeqCst)
    }

    /// Marks the input as ended; true when nothing is in flight.
    pub(super) fn input_ended(&self) -> bool {
        let ids = self.ids();
        self.input_ended.store(true, Ordering::SeqCst);
        ids.is_empty()
    }
}

/// The messages of one line: an object, or each object of a batch array; nothing when the line
/// is not JSON-RPC (the companion answers that itself).
fn peek(line: &[u8]) -> Vec<Peek> {
    let trimmed = line.trim_ascii_start();
    if trimmed.first() == Some(&b'[') {
        serde_json::from_slice(trimmed).unwrap_or_default()
    } else {
        serde_json::from_slice(trimmed)
            .map(|m| vec![m])
            .unwrap_or_default()
    }
}
