//! Status notifications that arrive before their task is known.
//!
//! The problem: a server may send `notifications/tasks/status` for a new task before its
//! answer to the task-augmented `tools/call` (the `CreateTaskResult` naming the task). Until
//! that answer is in the session's table, the notification belongs to no task the agent
//! knows, and could be another agent's.
//!
//! The strategy: while an agent session has a task-augmented call to a server session in
//! flight ([`Pending`]), that server session's notifications for unknown tasks are held, at
//! most [`MAX_HELD`] per agent session (the oldest dropped first) and at most [`HOLD_FOR`]
//! each. When an answer with a task has been written to the agent ([`Tasks::release`]), and
//! before any later notification is passed on, the held ones whose task is now known go out,
//! in the order the server sent them. Held ones whose server session has no such call in
//! flight any more were another agent's, and are dropped, as are expired ones.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Tasks;

/// Most status notifications one agent session holds.
pub const MAX_HELD: usize = 32;
/// Longest one status notification is held.
pub const HOLD_FOR: Duration = Duration::from_secs(10);

/// The held notifications of one agent session, and its task-augmented calls in flight.
#[derive(Debug, Default)]
pub(super) struct Hold {
    /// Calls in flight per server session (server, generation).
    pending: HashMap<(Arc<str>, u64), usize>,
    /// Oldest first.
    held: VecDeque<Note>,
}

#[derive(Debug)]
struct Note {
    server: Arc<str>,
    generation: u64,
    upstream: String,
    params: Value,
    at: Instant,
}

/// A task-augmented call in flight: while it lives, status notifications for unknown tasks of
/// its server session are held.
#[derive(Debug)]
pub struct Pending {
    tasks: Tasks,
    key: (Arc<str>, u64),
}

impl Drop for Pending {
    fn drop(&mut self) {
        let mut table = self.tasks.lock();
        if let Some(n) = table.hold.pending.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                table.hold.pending.remove(&self.key);
            }
        }
    }
}

impl Tasks {
    /// Counts a task-augmented call to `server`'s session `generation` until the guard drops.
    pub(super) fn pending(&self, server: &Arc<str>, generation: u64) -> Pending {
        let key = (server.clone(), generation);
        *self.lock().hold.pending.entry(key.clone()).or_default() += 1;
        Pending {
            tasks: self.clone(),
            key,
        }
    }

    /// Says that an answer with a task has been written to the agent: the session's
    /// notification loop then passes on what was held for it.
    pub fn release(&self) {
        self.0.released.notify_one();
    }

    /// Waits for the next [`Tasks::release`].
    pub async fn released(&self) {
        self.0.released.notified().await;
    }

    /// What the agent gets for `server`'s status notification `params` (its session
    /// `generation`, `None` when it is not running) arriving at `now` (module doc).
    pub(super) fn on_status(
        &self,
        server: &str,
        generation: Option<u64>,
        params: &Value,
        now: Instant,
    ) -> Vec<Value> {
        let mut table = self.lock();
        let mut out = table.release_held(now);
        let (Some(generation), Some(upstream)) =
            (generation, params.get("taskId").and_then(Value::as_str))
        else {
            return out;
        };
        if let Some(served) = table.served_for(server, generation, upstream) {
            out.push(table.as_served(&served, params));
            return out;
        }
        let key = (Arc::<str>::from(server), generation);
        if !table.hold.pending.contains_key(&key) {
            return out;
        }
        if table.hold.held.len() >= MAX_HELD
            && let Some(dropped) = table.hold.held.pop_front()
        {
            tracing::debug!(
                server = %dropped.server,
                task = dropped.upstream,
                "too many task status notifications held; dropped the oldest"
            );
        }
        table.hold.held.push_back(Note {
            server: key.0,
            generation,
            upstream: upstream.to_owned(),
            params: params.clone(),
            at: now,
        });
        out
    }

    /// The held notifications whose task is now known, in order (module doc).
    pub(super) fn release_held(&self, now: Instant) -> Vec<Value> {
        self.lock().release_held(now)
    }
}

impl super::TaskTable {
    fn release_held(&mut self, now: Instant) -> Vec<Value> {
        let mut out = Vec::new();
        let mut kept = VecDeque::new();
        while let Some(note) = self.hold.held.pop_front() {
            if let Some(served) = self.served_for(&note.server, note.generation, &note.upstream) {
                out.push(self.as_served(&served, &note.params));
            } else if now.saturating_duration_since(note.at) < HOLD_FOR
                && (self.hold.pending).contains_key(&(note.server.clone(), note.generation))
            {
                kept.push_back(note);
            }
        }
        self.hold.held = kept;
        out
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn status(id: &str, message: &str) -> Value {
        json!({ "taskId": id, "status": "working", "statusMessage": message })
    }

    fn messages(out: &[Value]) -> Vec<&str> {
        out.iter()
            .map(|v| v["statusMessage"].as_str().unwrap_or_default())
            .collect()
    }

    #[test]
    fn notifications_before_the_answer_go_out_in_order_once_the_task_is_known() {
        let tasks = Tasks::default();
        let server: Arc<str> = "s".into();
        let now = Instant::now();
        let pending = tasks.pending(&server, 1);
        assert!(
            tasks
                .on_status("s", Some(1), &status("t", "one"), now)
                .is_empty()
        );
        assert!(
            tasks
                .on_status("s", Some(1), &status("t", "two"), now)
                .is_empty()
        );
        // Another server session's, and one of a server with no call in flight: not held.
        assert!(
            tasks
                .on_status("s", Some(2), &status("t", "old"), now)
                .is_empty()
        );
        assert!(
            tasks
                .on_status("x", Some(1), &status("t", "x"), now)
                .is_empty()
        );
        let served = tasks.insert(&server, 1, "t");
        drop(pending);
        let out = tasks.on_status("s", Some(1), &status("t", "three"), now);
        assert_eq!(messages(&out), ["one", "two", "three"]);
        assert!(out.iter().all(|v| v["taskId"] == json!(served)));
        assert!(tasks.release_held(now).is_empty(), "delivered once");
    }

    #[test]
    fn held_notifications_are_bounded_in_count_and_time_and_dropped_when_unclaimed() {
        let tasks = Tasks::default();
        let server: Arc<str> = "s".into();
        let now = Instant::now();
        let pending = tasks.pending(&server, 1);
        for n in 0..MAX_HELD + 3 {
            tasks.on_status("s", Some(1), &status("t", &n.to_string()), now);
        }
        tasks.insert(&server, 1, "t");
        let out = tasks.release_held(now);
        assert_eq!(out.len(), MAX_HELD, "the oldest went first");
        assert_eq!(messages(&out)[0], "3");

        tasks.on_status("s", Some(1), &status("late", "expired"), now);
        assert!(tasks.release_held(now + HOLD_FOR).is_empty());
        tasks.insert(&server, 1, "late");
        let later = tasks.release_held(now + HOLD_FOR);
        assert!(later.is_empty(), "expired: {later:?}");
        tasks.on_status("s", Some(1), &status("other", "unclaimed"), now + HOLD_FOR);
        drop(pending);
        // The call is answered and the task is not this session's: another agent's.
        assert!(tasks.release_held(now + HOLD_FOR).is_empty());
        tasks.insert(&server, 1, "other");
        assert!(tasks.release_held(now + HOLD_FOR).is_empty(), "dropped");
    }
}
