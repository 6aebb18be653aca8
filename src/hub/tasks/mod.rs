//! Tasks passed to the server that owns each task, for agents of both protocol eras.
//!
//! | agent | what it sends | how it reaches a 2025-11-25 server |
//! |---|---|---|
//! | `initialize` era (MCP 2025-11-25 basic/utilities/tasks) | a task-augmented `tools/call` (`params.task`), `tasks/get`, `tasks/result`, `tasks/cancel`, `tasks/list` | as sent, ids translated; `tasks/list` merges the servers' lists ([`legacy`]) |
//! | 2026-07-28 (the `io.modelcontextprotocol/tasks` extension, SEP-2663) | `tools/call` declaring the extension, `tasks/get`, `tasks/update`, `tasks/cancel` | a call of a tool whose `taskSupport` is `required` goes as a task-augmented call; `tasks/get` as `tasks/get`, with `tasks/result` folded in once the task has ended; `tasks/cancel` as `tasks/cancel` ([`modern`]) |
//!
//! A server of the 2026-07-28 era that declares the extension makes tasks of its own; how
//! agents of both eras reach them is [`from_modern`]'s table.
//!
//! Task ids are namespaced per agent session by a table ([`Tasks`]), never by reading a
//! prefix back: the agent sees `<server>:<id>` (`<server>:<id>~<n>` when that is taken), and
//! the table says which server, which of its sessions (generation) and which id the server
//! knows. An agent only reaches the tasks it created (the companion's one session with a
//! server is shared by every agent).
//!
//! A server's `notifications/tasks/status` reaches the `initialize`-era agent whose task it
//! is, under its id ([`Hub::task_status_for`]); one the server sends before its
//! `CreateTaskResult` is held until the agent has the task's id ([`held`]); any for another
//! agent's task is dropped.
//!
//! A 2026-07-28 agent is sent no task status: it has no session to push on, and the extension
//! delivers `notifications/tasks` only on a `subscriptions/listen` stream whose
//! acknowledgement agreed to the task ("In its acknowledgement notification, the server
//! includes the list of task IDs it has agreed to send task status notifications for, if
//! any"). The companion agrees to none: rmcp 3.11's `SubscriptionFilter` has no `taskIds`, so
//! they are dropped from the acknowledgement, and its stream sink refuses
//! `notifications/tasks`. The agent, told no ids, polls `tasks/get` ("Clients **SHOULD**
//! continue polling until the task reaches a terminal status"), which carries the same state.
//!
//! A call that becomes a task passes the call policy first, as every call does ([`gate`]).
//!
//! What a server says of its task (errors, status messages, a result's `related-task`)
//! reaches the agent with the agent's id in place of the server's ([`ids`]).
//!
//! A task outlives neither its server's process nor a restart of it: once the session that
//! created it is gone, or when it ends while a request waits, `tasks/get` and `tasks/list`
//! report it `failed` with a status message naming the server, and `tasks/result`,
//! `tasks/cancel` and `tasks/update` answer an error saying so ([`lost`]). A task that had
//! ended before keeps the terminal status the agent knew, and its result when the companion
//! had it ([`ended`]).

mod asking;
mod ended;
mod from_modern;
mod gate;
mod held;
mod ids;
mod legacy;
mod lost;
mod modern;
mod polled;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::ErrorData as McpError;
use serde_json::{Value, json};

use super::Hub;

/// `_meta` key naming the task a `tasks/result` answer belongs to (MCP 2025-11-25 tasks).
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// Most `tasks/list` pages read from one server.
const MAX_LIST_PAGES: usize = 100;

/// The tasks one agent session created through the companion, by the id the agent knows.
#[derive(Clone, Debug, Default)]
pub struct Tasks(Arc<Shared>);

#[derive(Debug, Default)]
struct Shared {
    table: Mutex<TaskTable>,
    /// Wakes the session's notification loop when an answer with a task has been written to
    /// the agent, so status notifications held for it go out ([`held`]).
    released: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct TaskTable {
    /// Agent's id → where the task lives.
    by_served: HashMap<String, Entry>,
    /// The agent's ids in the order the tasks were created.
    order: Vec<String>,
    /// Status notifications that came before their task's `CreateTaskResult`.
    hold: held::Hold,
    /// Agent's id → the questions its `input_required` task waits on (2026-07-28 agents).
    asking: HashMap<String, asking::Asking>,
}

/// Where one task lives.
#[derive(Clone, Debug)]
struct Entry {
    server: Arc<str>,
    /// The server session (its generation) that created the task.
    generation: u64,
    /// The id the server gave it.
    upstream: String,
    /// The task as last reported to the agent (agent's id, 2025-11-25 shape), for a report
    /// once it is lost.
    last: Value,
    /// The server speaks the Tasks extension of 2026-07-28 ([`from_modern`]), not the
    /// `initialize` era's Tasks utility.
    modern: bool,
    /// The result a 2026-07-28 server answered at once to an `initialize`-era agent's
    /// task-augmented call: the task is the companion's own, already completed
    /// ([`from_modern`]).
    answered: Option<Value>,
    /// What the task ended with, as the agent got it: its result or its JSON-RPC error
    /// ([`ended`]).
    kept: Option<Result<Value, McpError>>,
}

impl Tasks {
    fn lock(&self) -> std::sync::MutexGuard<'_, TaskTable> {
        // Each critical section is one map update: a poisoned table is consistent.
        self.0.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records the task `upstream` that `server`'s session `generation` created; returns the
    /// id the agent gets: `<server>:<upstream>`, with `~<n>` added when that is taken.
    fn insert(&self, server: &Arc<str>, generation: u64, upstream: &str) -> String {
        self.insert_as(server, generation, upstream, false)
    }

    /// [`Tasks::insert`] of a task of a 2026-07-28 server (the Tasks extension).
    fn insert_modern(&self, server: &Arc<str>, generation: u64, upstream: &str) -> String {
        self.insert_as(server, generation, upstream, true)
    }

    fn insert_as(
        &self,
        server: &Arc<str>,
        generation: u64,
        upstream: &str,
        modern: bool,
    ) -> String {
        let mut table = self.lock();
        let base = format!("{server}:{upstream}");
        let mut served = base.clone();
        let mut n = 2;
        while table.by_served.contains_key(&served) {
            served = format!("{base}~{n}");
            n += 1;
        }
        table.by_served.insert(
            served.clone(),
            Entry {
                server: server.clone(),
                generation,
                upstream: upstream.to_owned(),
                last: Value::Null,
                modern,
                answered: None,
                kept: None,
            },
        );
        table.order.push(served.clone());
        served
    }

    /// Records a task of the companion's own, already completed with `result`, for the
    /// answer `server`'s session `generation` gave at once to a task-augmented call; returns
    /// the task (2025-11-25 shape), its id `<server>:answered` (`~<n>` added when taken).
    fn insert_answered(&self, server: &Arc<str>, generation: u64, result: Value) -> Value {
        let served = self.insert_as(server, generation, "answered", true);
        let now = rmcp::task_manager::current_timestamp();
        let task = json!({ "taskId": served, "status": "completed", "createdAt": now,
            "lastUpdatedAt": now, "ttl": null });
        if let Some(entry) = self.lock().by_served.get_mut(&served) {
            entry.last = task.clone();
            entry.answered = Some(result);
        }
        task
    }

    /// Whether this agent session has created no task (the endpoint declares the Tasks
    /// extension while it has one, so that `tasks/get` of it is served whatever became of its
    /// server).
    pub fn is_empty(&self) -> bool {
        self.lock().by_served.is_empty()
    }

    fn get(&self, served: &str) -> Option<Entry> {
        self.lock().by_served.get(served).cloned()
    }

    fn remember(&self, served: &str, task: &Value) {
        self.lock().remember(served, task);
    }

    fn all(&self) -> Vec<(String, Entry)> {
        let table = self.lock();
        (table.order.iter())
            .filter_map(|id| Some((id.clone(), table.by_served.get(id)?.clone())))
            .collect()
    }
}

impl TaskTable {
    /// Records `task` as the last report of `served`; a task known to have ended keeps its
    /// status ([`ended`]).
    fn remember(&mut self, served: &str, task: &Value) {
        self.report(served, task);
    }

    /// The agent's id of the task `upstream` that `server`'s session `generation` created.
    fn served_for(&self, server: &str, generation: u64, upstream: &str) -> Option<String> {
        (self.by_served.iter())
            .find(|(_, e)| {
                &*e.server == server && e.generation == generation && e.upstream == upstream
            })
            .map(|(served, _)| served.clone())
    }

    /// A server's status notification `params` under the agent's id `served` (in its
    /// `statusMessage` too), remembered as the task's last report.
    fn as_served(&mut self, served: &str, params: &Value) -> Value {
        let mut params = params.clone();
        match self.by_served.get(served) {
            Some(entry) => entry.ids(served).task(&mut params),
            None => params["taskId"] = Value::from(served),
        }
        self.remember(served, &params);
        params
    }
}

impl Hub {
    /// The session of `entry`'s server when it is still the one that created the task.
    fn live_of(&self, entry: &Entry) -> Option<Arc<crate::supervisor::Live>> {
        let live = self.server(&entry.server)?.live()?;
        (live.generation == entry.generation).then_some(live)
    }

    /// `server`'s `toolTimeout`.
    fn tool_timeout(&self, server: &str) -> std::time::Duration {
        self.server(server)
            .and_then(|s| s.config().map(|c| c.tool_timeout))
            .unwrap_or(crate::config::DEFAULT_TOOL_TIMEOUT)
    }

    /// `method` with `params` to `server`'s session `live`, at most its `toolTimeout`.
    async fn raw(
        &self,
        server: &str,
        live: &crate::supervisor::Live,
        method: &str,
        params: Value,
    ) -> Result<Value, McpError> {
        let timeout = self.tool_timeout(server);
        let request =
            crate::upstream::raw::request(&live.peer, live.lane.as_ref(), method, params, timeout);
        self.bounded(server, method, request).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_servers_equal_task_ids_stay_apart() {
        let tasks = Tasks::default();
        let (a, b): (Arc<str>, Arc<str>) = ("a".into(), "b".into());
        let from_a = tasks.insert(&a, 1, "task-1");
        let from_b = tasks.insert(&b, 1, "task-1");
        assert_ne!(from_a, from_b);
        let (ea, eb) = (
            tasks.get(&from_a).expect("a's"),
            tasks.get(&from_b).expect("b's"),
        );
        assert_eq!((&*ea.server, ea.upstream.as_str()), ("a", "task-1"));
        assert_eq!((&*eb.server, eb.upstream.as_str()), ("b", "task-1"));
    }

    #[test]
    fn ids_that_would_read_alike_get_a_suffix_and_route_by_the_table() {
        let tasks = Tasks::default();
        // "x:y" + "z" and "x" + "y:z" both read "x:y:z".
        let (xy, x): (Arc<str>, Arc<str>) = ("x:y".into(), "x".into());
        let first = tasks.insert(&xy, 1, "z");
        let second = tasks.insert(&x, 1, "y:z");
        assert_eq!(first, "x:y:z");
        assert_eq!(second, "x:y:z~2");
        assert_eq!(&*tasks.get(&second).expect("routed").server, "x");
        // The same id from a restarted server's new session is a new task.
        let again = tasks.insert(&xy, 2, "z");
        assert_eq!(again, "x:y:z~3");
        assert_eq!(tasks.get(&again).expect("routed").generation, 2);
    }
}
