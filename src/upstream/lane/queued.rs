//! The rmcp path's requests whose lines wait to be written to a stdio server's stdin
//! ([`super::LaneTransport`]'s `send`), so a call that gives up (its `toolTimeout` passed, its
//! agent cancelled) can withdraw a request the server never got ([`super::FastLane::withdraw`])
//! instead of leaving it to be written, and run, once the server reads its input again.
//!
//! rmcp writes each request from a task of its own, so its caller cannot stop the write; the
//! write instead stops at its entry's token here, and reports whether any of it was written.

use std::collections::HashMap;
use std::sync::Mutex;

use rmcp::model::RequestId;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// One queued request: the token that stops its write, and whether the write had begun.
struct Entry {
    stop: CancellationToken,
    begun: oneshot::Receiver<bool>,
}

/// The requests being written (behind one lock; each critical section is one insert or
/// remove, so a poisoned table is consistent).
#[derive(Default)]
pub(super) struct Queued {
    map: Mutex<HashMap<RequestId, Entry>>,
}

/// The writer's side of one entry: stop when `stop` fires, then say through `begun` whether
/// any byte was written.
pub(super) struct Writing {
    pub(super) stop: CancellationToken,
    pub(super) begun: oneshot::Sender<bool>,
}

impl Queued {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Entry>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Enters request `id`, about to be written.
    pub(super) fn enter(&self, id: RequestId) -> Writing {
        let stop = CancellationToken::new();
        let (tx, rx) = oneshot::channel();
        self.lock().insert(
            id,
            Entry {
                stop: stop.clone(),
                begun: rx,
            },
        );
        Writing { stop, begun: tx }
    }

    /// Forgets request `id` (its write is over).
    pub(super) fn leave(&self, id: &RequestId) {
        self.lock().remove(id);
    }

    /// Stops the write of request `id`; `true` when none of it was written, so the server
    /// never gets it. `false` when it was written (or is being finished), or is unknown.
    pub(super) async fn withdraw(&self, id: &RequestId) -> bool {
        let Some(entry) = self.lock().remove(id) else {
            return false;
        };
        entry.stop.cancel();
        matches!(entry.begun.await, Ok(false))
    }
}
