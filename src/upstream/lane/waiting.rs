//! The fast-lane requests waiting for their answers, and their `toolTimeout` deadlines kept by
//! one sweeper task per lane instead of a timer per call.
//!
//! Why not a timer per call: registering a tokio timer that is due before every other one
//! (true whenever the lane was idle: no other timer is armed) makes the runtime wake its I/O
//! driver through an eventfd, one `write` and one extra `epoll_wait` per call. `strace -c` of
//! 5000 sequential calls counted 2 `write`s per call with a timer per call and 1 without.
//! Here a call's deadline is a number in the table; the sweeper's one timer stays
//! armed for the earliest deadline it knows and is re-armed only when it fires or a call with
//! an earlier deadline comes, so calls of one server (one `toolTimeout`) arm it about once per
//! timeout period.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

/// What a waiting ticket receives: the answer line, or `None` when its deadline passed.
pub(super) type Delivery = Option<Vec<u8>>;

/// One waiting request.
pub(super) struct Waiter {
    pub(super) tx: oneshot::Sender<Delivery>,
    pub(super) deadline: Instant,
}

/// The table of waiting requests (behind the lane's lock).
#[derive(Default)]
pub(super) struct Waiting {
    /// Fast-lane request number → its waiter.
    pub(super) map: HashMap<u64, Waiter>,
    /// The deadline the sweeper's timer is armed for, if it is.
    armed: Option<Instant>,
}

impl Waiting {
    /// Enters request `n`; `true` when the sweeper must look again (its timer is not armed,
    /// or armed for later than `waiter.deadline`).
    pub(super) fn insert(&mut self, n: u64, waiter: Waiter) -> bool {
        let deadline = waiter.deadline;
        self.map.insert(n, waiter);
        let rearm = self.armed.is_none_or(|at| deadline < at);
        if rearm {
            self.armed = Some(deadline);
        }
        rearm
    }

    /// Takes out every waiter whose deadline is `now` or earlier and arms the timer for the
    /// earliest remaining one (or disarms it).
    fn expire(&mut self, now: Instant) -> Vec<Waiter> {
        let due: Vec<u64> = self
            .map
            .iter()
            .filter(|(_, w)| w.deadline <= now)
            .map(|(n, _)| *n)
            .collect();
        let expired = due.iter().filter_map(|n| self.map.remove(n)).collect();
        self.armed = self.map.values().map(|w| w.deadline).min();
        expired
    }
}

/// What the sweeper needs of its lane: the table, and whether the lane ended.
pub(super) trait Swept: Send + Sync + 'static {
    /// Runs `f` on the table under its lock.
    fn with_waiting<T>(&self, f: impl FnOnce(&mut Waiting) -> T) -> T;
    /// Whether the lane ended (the sweeper then stops).
    fn has_ended(&self) -> bool;
}

/// Spawns the sweeper of `lane`: it holds the lane weakly and stops when the lane ends or is
/// dropped (both notify `wake`).
pub(super) fn spawn_sweeper<S: Swept>(lane: Weak<S>, wake: Arc<Notify>) {
    tokio::spawn(async move {
        loop {
            let armed = {
                let Some(lane) = lane.upgrade() else { return };
                if lane.has_ended() {
                    return;
                }
                lane.with_waiting(|w| w.armed)
            };
            match armed {
                None => wake.notified().await,
                Some(at) => tokio::select! {
                    () = tokio::time::sleep_until(at) => {}
                    () = wake.notified() => {}
                },
            }
            let Some(lane) = lane.upgrade() else { return };
            let expired = lane.with_waiting(|w| w.expire(Instant::now()));
            for waiter in expired {
                // A ticket dropped meanwhile does not mind.
                let _ = waiter.tx.send(None);
            }
        }
    });
}
