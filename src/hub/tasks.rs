//! The Tasks utility (MCP 2025-11-25 basic/utilities/tasks) passed to the server that owns
//! each task: a task-augmented `tools/call` (`params.task`) goes to the tool's server, whose
//! `CreateTaskResult` names the task; `tasks/get`, `tasks/result` and `tasks/cancel` go to
//! that server; `tasks/list` merges the servers' lists.
//!
//! Task ids are namespaced per agent session by a table ([`Tasks`]), never by reading a
//! prefix back: the agent sees `<server>:<id>` (`<server>:<id>~<n>` when that is taken), and
//! the table says which server, which of its sessions (generation) and which id the server
//! knows. An agent only reaches the tasks it created (the companion's one session with a
//! server is shared by every agent).
//!
//! A server's `notifications/tasks/status` reaches the agent whose task it is, under its id
//! ([`Hub::task_status_for`]); one the server sends before its `CreateTaskResult` (the agent
//! does not know the task yet) is dropped, as is any for another agent's task.
//!
//! A task outlives neither its server's process nor a restart of it: once the session that
//! created it is gone, `tasks/get` and `tasks/list` report it `failed` with a status message
//! naming the server, and `tasks/result` and `tasks/cancel` answer an error saying so.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::ErrorData as McpError;
use serde_json::{Value, json};

use super::Hub;
use crate::catalog::Target;

/// `_meta` key naming the task a `tasks/result` answer belongs to (MCP 2025-11-25 tasks).
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// Most `tasks/list` pages read from one server.
const MAX_LIST_PAGES: usize = 100;

/// The tasks one agent session created through the companion, by the id the agent knows.
#[derive(Clone, Debug, Default)]
pub struct Tasks(Arc<Mutex<TaskTable>>);

#[derive(Debug, Default)]
struct TaskTable {
    /// Agent's id → where the task lives.
    by_served: HashMap<String, Entry>,
    /// The agent's ids in the order the tasks were created.
    order: Vec<String>,
}

/// Where one task lives.
#[derive(Clone, Debug)]
struct Entry {
    server: Arc<str>,
    /// The server session (its generation) that created the task.
    generation: u64,
    /// The id the server gave it.
    upstream: String,
    /// The task as last reported to the agent (agent's id), for a report once it is lost.
    last: Value,
}

impl Tasks {
    fn lock(&self) -> std::sync::MutexGuard<'_, TaskTable> {
        // Each critical section is one map update: a poisoned table is consistent.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records the task `upstream` that `server`'s session `generation` created; returns the
    /// id the agent gets: `<server>:<upstream>`, with `~<n>` added when that is taken.
    fn insert(&self, server: &Arc<str>, generation: u64, upstream: &str) -> String {
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
            },
        );
        table.order.push(served.clone());
        served
    }

    fn get(&self, served: &str) -> Option<Entry> {
        self.lock().by_served.get(served).cloned()
    }

    fn remember(&self, served: &str, task: &Value) {
        if let Some(entry) = self.lock().by_served.get_mut(served) {
            entry.last = task.clone();
        }
    }

    /// The agent's id of the task `upstream` that `server`'s session `generation` created.
    fn served_for(&self, server: &str, generation: u64, upstream: &str) -> Option<String> {
        let table = self.lock();
        (table.by_served.iter())
            .find(|(_, e)| {
                &*e.server == server && e.generation == generation && e.upstream == upstream
            })
            .map(|(served, _)| served.clone())
    }

    fn all(&self) -> Vec<(String, Entry)> {
        let table = self.lock();
        (table.order.iter())
            .filter_map(|id| Some((id.clone(), table.by_served.get(id)?.clone())))
            .collect()
    }
}

impl Hub {
    /// A task-augmented `tools/call`: `params` as the agent sent them (`name` the served tool
    /// name, `task` present); the server's `CreateTaskResult` comes back with the task's id
    /// as the agent will know it.
    ///
    /// # Errors
    /// -32602 for a tool not served; the server's own error; -32603 when the server is not
    /// running or does not answer within its `toolTimeout`.
    pub async fn call_tool_as_task(
        &self,
        tasks: &Tasks,
        mut params: Value,
    ) -> Result<Value, McpError> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let catalog = self.catalog();
        let route = catalog
            .route(&name)
            .filter(|r| matches!(r.target, Target::Tool { .. }))
            .ok_or_else(|| McpError::invalid_params(format!("unknown tool \"{name}\""), None))?;
        let Target::Tool { name: raw } = &route.target else {
            return Err(McpError::invalid_params(
                format!("unknown tool \"{name}\""),
                None,
            ));
        };
        params["name"] = Value::from(raw.as_str());
        let live = self.live_for(&route.server)?;
        let mut result = self.raw(&route.server, &live, "tools/call", params).await?;
        if let Some(task) = result.get_mut("task")
            && let Some(upstream) = task.get("taskId").and_then(Value::as_str)
        {
            let served = tasks.insert(&route.server, live.generation, upstream);
            task["taskId"] = Value::from(served.as_str());
            tasks.remember(&served, task);
        }
        Ok(result)
    }

    /// `tasks/get`, `tasks/result` or `tasks/cancel` (`method`) of the agent's task
    /// `params.taskId`, sent to the server that created it.
    ///
    /// # Errors
    /// -32602 for a task this session did not create; for a task whose server restarted or
    /// stopped, `tasks/result` and `tasks/cancel` answer -32603 and -32602 naming the server
    /// (`tasks/get` reports it `failed`); the server's own error otherwise.
    pub async fn task_request(
        &self,
        tasks: &Tasks,
        method: &str,
        mut params: Value,
    ) -> Result<Value, McpError> {
        let served = params
            .get("taskId")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let entry = tasks
            .get(&served)
            .ok_or_else(|| McpError::invalid_params(format!("unknown task \"{served}\""), None))?;
        let Some(live) = self.live_of(&entry) else {
            let lost = lost_message(&entry.server);
            return match method {
                "tasks/get" => Ok(lost_task(&served, &entry)),
                "tasks/cancel" => Err(McpError::invalid_params(
                    format!("cannot cancel task \"{served}\": {lost}"),
                    None,
                )),
                _ => Err(McpError::internal_error(
                    format!("task \"{served}\" has no result: {lost}"),
                    None,
                )),
            };
        };
        params["taskId"] = Value::from(entry.upstream.as_str());
        let mut result = self.raw(&entry.server, &live, method, params).await?;
        if method == "tasks/result" {
            if let Some(related) = result
                .get_mut("_meta")
                .and_then(|m| m.get_mut(RELATED_TASK))
                .filter(|r| r.get("taskId").and_then(Value::as_str) == Some(&entry.upstream))
            {
                related["taskId"] = Value::from(served.as_str());
            }
        } else if result.get("taskId").and_then(Value::as_str) == Some(&entry.upstream) {
            result["taskId"] = Value::from(served.as_str());
            tasks.remember(&served, &result);
        }
        Ok(result)
    }

    /// `tasks/list`: this session's tasks, as their servers list them (a server that does not
    /// serve `tasks/list` is represented by what it last said of each), the lost ones
    /// `failed`, in the order they were created; one page.
    ///
    /// # Errors
    /// None today: a server's failure to list costs only the fresh status of its tasks.
    pub async fn list_tasks(&self, tasks: &Tasks) -> Result<Value, McpError> {
        let mut listed: HashMap<(Arc<str>, String), Value> = HashMap::new();
        let mut asked: Vec<Arc<str>> = Vec::new();
        let all = tasks.all();
        for (_, entry) in &all {
            if asked.contains(&entry.server) {
                continue;
            }
            asked.push(entry.server.clone());
            let Some(live) = self.live_of(entry) else {
                continue;
            };
            let mut cursor: Option<String> = None;
            for _ in 0..MAX_LIST_PAGES {
                let params = cursor.take().map_or(json!({}), |c| json!({ "cursor": c }));
                let Ok(page) = self.raw(&entry.server, &live, "tasks/list", params).await else {
                    break;
                };
                for task in page
                    .get("tasks")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(id) = task.get("taskId").and_then(Value::as_str) {
                        listed.insert((entry.server.clone(), id.to_owned()), task.clone());
                    }
                }
                cursor = page
                    .get("nextCursor")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                if cursor.is_none() {
                    break;
                }
            }
        }
        let mut out = Vec::with_capacity(all.len());
        for (served, entry) in &all {
            let live = self.live_of(entry).is_some();
            let task = if live {
                match listed.remove(&(entry.server.clone(), entry.upstream.clone())) {
                    Some(mut task) => {
                        task["taskId"] = Value::from(served.as_str());
                        tasks.remember(served, &task);
                        task
                    }
                    None if entry.last.is_object() => entry.last.clone(),
                    None => continue,
                }
            } else {
                lost_task(served, entry)
            };
            out.push(task);
        }
        Ok(json!({ "tasks": out }))
    }

    /// A server's `notifications/tasks/status` `params` as the agent that created the task
    /// gets it (its `taskId` the agent's), or `None` when the task is not one of `tasks`
    /// (another agent's, or not yet answered by its `CreateTaskResult`).
    pub fn task_status_for(&self, tasks: &Tasks, server: &str, params: &Value) -> Option<Value> {
        let upstream = params.get("taskId")?.as_str()?;
        let generation = self.server(server)?.live()?.generation;
        let served = tasks.served_for(server, generation, upstream)?;
        let mut params = params.clone();
        params["taskId"] = Value::from(served.as_str());
        tasks.remember(&served, &params);
        Some(params)
    }

    /// The session of `entry`'s server when it is still the one that created the task.
    fn live_of(&self, entry: &Entry) -> Option<Arc<crate::supervisor::Live>> {
        let live = self.server(&entry.server)?.live()?;
        (live.generation == entry.generation).then_some(live)
    }

    /// `method` with `params` to `server`'s session `live`, at most its `toolTimeout`.
    async fn raw(
        &self,
        server: &str,
        live: &crate::supervisor::Live,
        method: &str,
        params: Value,
    ) -> Result<Value, McpError> {
        let timeout = self
            .server(server)
            .and_then(|s| s.config().map(|c| c.tool_timeout))
            .unwrap_or(crate::config::DEFAULT_TOOL_TIMEOUT);
        let request =
            crate::upstream::raw::request(&live.peer, live.lane.as_ref(), method, params, timeout);
        self.bounded(server, method, request).await
    }
}

/// Why a task is gone: its server's process ended.
fn lost_message(server: &str) -> String {
    format!(
        "the server \"{server}\" restarted or stopped since the task was created; the task ended with its process"
    )
}

/// The agent's task `served` reported `failed` because its server's session is gone.
fn lost_task(served: &str, entry: &Entry) -> Value {
    let mut task = if entry.last.is_object() {
        entry.last.clone()
    } else {
        json!({})
    };
    task["taskId"] = Value::from(served);
    task["status"] = Value::from("failed");
    task["statusMessage"] = Value::from(lost_message(&entry.server));
    task
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

    #[test]
    fn a_lost_task_is_reported_failed_naming_its_server() {
        let entry = Entry {
            server: "s".into(),
            generation: 1,
            upstream: "t".into(),
            last: json!({ "taskId": "s:t", "status": "working", "createdAt": "2026-12-04T00:00:00Z" }),
        };
        let task = lost_task("s:t", &entry);
        assert_eq!(task["status"], "failed");
        assert_eq!(task["createdAt"], "2026-12-04T00:00:00Z");
        assert!(
            task["statusMessage"]
                .as_str()
                .is_some_and(|m| m.contains("\"s\""))
        );
    }
}
