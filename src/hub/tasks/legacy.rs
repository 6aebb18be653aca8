//! The Tasks utility of the `initialize` era (MCP 2025-11-25 basic/utilities/tasks) for
//! agents of that era: each request passed to the server that owns the task, ids translated by
//! the session's table ([`super::Tasks`]).

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::ErrorData as McpError;
use serde_json::{Value, json};

use super::lost::{Unanswered, lost_answer, lost_task};
use super::{MAX_LIST_PAGES, Tasks};
use crate::catalog::Target;
use crate::hub::Hub;
use crate::upstream::askers::Asker;

impl Hub {
    /// A task-augmented `tools/call`: `params` as the agent sent them (`name` the served tool
    /// name, `task` present); the server's `CreateTaskResult` comes back with the task's id
    /// as the agent will know it.
    ///
    /// # Errors
    /// -32602 for a missing `name` or a tool not served; the server's own error; -32603 when
    /// the server is not running or does not answer within its `toolTimeout`.
    ///
    /// The call policy is applied first (`hub/tasks/gate.rs`), asking the person on behalf
    /// of `agent` when it says so; a refused call gets a task of the companion's own, already
    /// completed with the refusal's `isError` result.
    pub async fn call_tool_as_task(
        &self,
        tasks: &Tasks,
        params: Value,
        agent: Option<&rmcp::Peer<rmcp::RoleServer>>,
    ) -> Result<Value, McpError> {
        let name = text_param(&params, "name")?;
        let arguments = params.get("arguments").and_then(Value::as_object);
        if let Some(refused) = Box::pin(self.task_call_refused(name, arguments, agent)).await {
            let catalog = self.catalog();
            let route = catalog.route(name).ok_or_else(|| {
                McpError::invalid_params(format!("unknown tool \"{name}\""), None)
            })?;
            let generation = (self.server(&route.server).and_then(|s| s.live()))
                .map_or(0, |live| live.generation);
            let result = serde_json::to_value(refused)
                .map_err(|e| McpError::internal_error(e.to_string(), None))?;
            let task = tasks.insert_answered(&route.server, generation, result);
            return Ok(json!({ "task": task }));
        }
        self.send_task_call(tasks, params).await
    }

    /// [`Hub::call_tool_as_task`] once the call policy let it run.
    pub(super) async fn send_task_call(
        &self,
        tasks: &Tasks,
        mut params: Value,
    ) -> Result<Value, McpError> {
        let name = text_param(&params, "name")?.to_owned();
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
        let live = self.live_for(&route.server)?;
        if crate::upstream::tasks::offered(&live.peer) {
            let arguments = (params.get_mut("arguments").map(Value::take))
                .and_then(|a| serde_json::from_value(a).ok());
            return (self.legacy_call_on_modern(tasks, &route.server, &live, raw, arguments)).await;
        }
        params["name"] = Value::from(raw.as_str());
        // Until the answer is in the table, the server's status notifications wait for it.
        let _pending = tasks.pending(&route.server, live.generation);
        let mut result = self.raw(&route.server, &live, "tools/call", params).await?;
        if let Some(task) = result.get_mut("task")
            && let Some(upstream) = task.get("taskId").and_then(Value::as_str)
        {
            let served = tasks.insert(&route.server, live.generation, upstream);
            if let Some(entry) = tasks.get(&served) {
                entry.ids(&served).task(task);
            }
            tasks.remember(&served, task);
        }
        Ok(result)
    }

    /// `tasks/get`, `tasks/result` or `tasks/cancel` (`method`) of the agent's task
    /// `params.taskId`, sent to the server that created it. While a `tasks/result` waits, the
    /// server's `elicitation/create`, `sampling/createMessage` and `roots/list` (a task in
    /// `input_required` asks them then) go to `asker`, the agent, as during its calls
    /// ([`crate::upstream::ask`]).
    ///
    /// # Errors
    /// -32602 for a missing or non-string `taskId` or a task this session did not create; for
    /// a task whose server restarted or stopped (before the request or while it waited),
    /// `tasks/result` and `tasks/cancel` answer -32603 and -32602 naming the server
    /// (`tasks/get` reports it `failed`, `hub/tasks/lost.rs`); the server's own error (with
    /// the agent's task id in it) otherwise.
    pub async fn task_request(
        &self,
        tasks: &Tasks,
        method: &str,
        mut params: Value,
        asker: Option<Asker>,
    ) -> Result<Value, McpError> {
        let served = text_param(&params, "taskId")?.to_owned();
        let entry = tasks
            .get(&served)
            .ok_or_else(|| McpError::invalid_params(format!("unknown task \"{served}\""), None))?;
        if let Some(result) = &entry.answered {
            return super::from_modern::answered(method, &served, &entry, result);
        }
        let Some(live) = self.live_of(&entry) else {
            return lost_answer(method, &served, &entry);
        };
        if entry.modern {
            return (self.legacy_request_on_modern(tasks, method, &served, &entry, &live, asker))
                .await;
        }
        params["taskId"] = Value::from(entry.upstream.as_str());
        let _asking = (asker.filter(|_| method == "tasks/result")).map(|a| live.askers.enter(a));
        let mut result = match self.raw_task(&served, &entry, &live, method, params).await {
            Ok(result) => result,
            Err(Unanswered::Lost) => return lost_answer(method, &served, &entry),
            Err(Unanswered::Refused(error)) => {
                // The error an ended task's result is, kept for when its server is gone.
                if method == "tasks/result"
                    && tasks.get(&served).is_some_and(|e| e.ended().is_some())
                {
                    tasks.keep(&served, Err(error.clone()));
                }
                return Err(error);
            }
        };
        let ids = entry.ids(&served);
        if method == "tasks/result" {
            ids.result(&mut result);
            // Its URIs as the agent knows them, as in a call's result.
            result = crate::hub::to_agent(self.catalog().native(), &entry.server, result);
            tasks.keep_result(&served, &result);
        } else if result.get("taskId").and_then(Value::as_str) == Some(&entry.upstream) {
            ids.task(&mut result);
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
            // The extension has no `tasks/list`: each such task is read on its own (below).
            if entry.modern || asked.contains(&entry.server) {
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
            let live = self.live_of(entry);
            let task = if entry.answered.is_some() {
                entry.last.clone()
            } else if let Some(session) = live.as_ref().filter(|_| entry.modern) {
                match self.get_on_modern(tasks, served, entry, session).await {
                    Ok(got) => super::from_modern::legacy_task(&got.task.task),
                    Err(Unanswered::Lost) => lost_task(served, entry),
                    Err(_) if entry.last.is_object() => entry.last.clone(),
                    Err(_) => continue,
                }
            } else if live.is_some() {
                match listed.remove(&(entry.server.clone(), entry.upstream.clone())) {
                    Some(mut task) => {
                        entry.ids(served).task(&mut task);
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

    /// What the agent session of `tasks` gets for a server's `notifications/tasks/status`
    /// `params`, in order: the notifications held for tasks it now knows, then this one under
    /// the agent's id when the task is its own. One for a task not known yet is held while
    /// the session has a task-augmented call to that server in flight (`hub/tasks/held.rs`);
    /// one for another agent's task is dropped.
    pub fn task_statuses_for(&self, tasks: &Tasks, server: &str, params: &Value) -> Vec<Value> {
        let generation = self
            .server(server)
            .and_then(|s| s.live())
            .map(|live| live.generation);
        tasks.on_status(server, generation, params, std::time::Instant::now())
    }

    /// The held status notifications of tasks the agent session of `tasks` now knows, in the
    /// order their servers sent them (`hub/tasks/held.rs`).
    pub fn held_task_statuses(&self, tasks: &Tasks) -> Vec<Value> {
        tasks.release_held(std::time::Instant::now())
    }
}

/// The string `params[key]`.
///
/// # Errors
/// -32602 naming `key` when it is missing or not a string.
fn text_param<'a>(params: &'a Value, key: &str) -> Result<&'a str, McpError> {
    let kind = match params.get(key) {
        Some(Value::String(text)) => return Ok(text),
        None | Some(Value::Null) => {
            return Err(McpError::invalid_params(format!("missing \"{key}\""), None));
        }
        Some(Value::Bool(_)) => "a boolean",
        Some(Value::Number(_)) => "a number",
        Some(Value::Array(_)) => "an array",
        Some(Value::Object(_)) => "an object",
    };
    Err(McpError::invalid_params(
        format!("\"{key}\" must be a string, not {kind}"),
        None,
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_missing_or_non_string_id_is_named() {
        let cases = [
            (json!({}), "missing \"taskId\""),
            (json!({ "taskId": null }), "missing \"taskId\""),
            (
                json!({ "taskId": 7 }),
                "\"taskId\" must be a string, not a number",
            ),
            (
                json!({ "taskId": ["a"] }),
                "\"taskId\" must be a string, not an array",
            ),
            (
                json!({ "taskId": {} }),
                "\"taskId\" must be a string, not an object",
            ),
            (
                json!({ "taskId": true }),
                "\"taskId\" must be a string, not a boolean",
            ),
        ];
        for (params, message) in cases {
            let error = text_param(&params, "taskId").expect_err(message);
            assert_eq!((error.code.0, error.message.as_ref()), (-32602, message));
        }
        assert_eq!(
            text_param(&json!({ "taskId": "" }), "taskId").ok(),
            Some("")
        );
    }
}
