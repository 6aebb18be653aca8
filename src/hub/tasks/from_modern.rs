//! Tasks of a 2026-07-28 server (the Tasks extension, `io.modelcontextprotocol/tasks`,
//! SEP-2663) for agents of both eras. The server's requests go through
//! [`crate::upstream::tasks`], which declares the extension on each.
//!
//! | agent | sends | the server is sent | the agent gets |
//! |---|---|---|---|
//! | 2026-07-28, declaring the extension | `tools/call` of a tool whose server declared the extension | `tools/call` declaring it | the server's `CreateTaskResult` under a namespaced id; its `CallToolResult` when it answers at once; when it asks for input first (`InputRequiredResult`), the call is made again the ordinary way, where its questions reach the agent ([`crate::endpoint`]) |
//! | 2026-07-28 | `tasks/get`, `tasks/update`, `tasks/cancel` | the same | as the server answers, ids translated; a completed task's `result` with its URIs as the agent knows them |
//! | `initialize` era | `tools/list` | — | each tool of such a server marked `execution.taskSupport: "optional"` (2026-07-28 tools carry no `execution`; [`crate::catalog::execution::mark_optional`]) |
//! | `initialize` era | a task-augmented `tools/call` (`params.task`) | `tools/call` declaring the extension | `{"task": …}` in the 2025-11-25 shape (`ttlMs` → `ttl`, `pollIntervalMs` → `pollInterval`); when the server answers at once, a task of the companion's own, already `completed`, holding that result ([`answered`]) |
//! | `initialize` era | `tasks/get` | `tasks/get` | the task in the 2025-11-25 shape |
//! | `initialize` era | `tasks/result` | `tasks/get` every `pollIntervalMs` (within [`MIN_POLL`](super::polled::MIN_POLL)..[`MAX_POLL`](super::polled::MAX_POLL), [`polled`](super::polled)) until the task ends; the questions of an `input_required` task go to the agent as requests ([`crate::upstream::mrtr`]), their answers to the server as `tasks/update` | the result (URIs as the agent knows them, `related-task` naming the agent's id), or the task's JSON-RPC error |
//! | `initialize` era | `tasks/cancel` | `tasks/cancel`, then `tasks/get` | the task |
//! | `initialize` era | `tasks/list` | `tasks/get` of each (the extension has no `tasks/list`) | the tasks |
//!
//! A 2026-07-28 server pushes `notifications/tasks` only on a `subscriptions/listen` stream
//! that asked for the task's id; the companion's stream to it asks for none, so the status
//! of these tasks is known by polling.

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResponse, CallToolResult, CreateTaskResult, GetTaskResult, InputResponses, JsonObject,
    ServerResult, Task, TaskPayload,
};
use serde_json::{Value, json};

use super::ids::Ids;
use super::lost::{Unanswered, lost_answer};
use super::{Entry, RELATED_TASK, Tasks};
use crate::catalog::Target;
use crate::hub::Hub;
use crate::supervisor::Live;
use crate::upstream::askers::Asker;
use crate::upstream::tasks as upstream;

impl Hub {
    /// Whether the served tool `name` is on a running 2026-07-28 server that declared the
    /// Tasks extension.
    pub fn offers_modern_tasks(&self, name: &str) -> bool {
        self.modern_tool(name).is_ok()
    }

    /// Whether some running server is a 2026-07-28 server that declared the Tasks extension
    /// (the endpoint then declares the extension, and `tasks` to `initialize`-era agents).
    pub fn any_modern_task_server(&self) -> bool {
        (self.servers().iter()).any(|s| s.live().is_some_and(|live| upstream::offered(&live.peer)))
    }

    /// The server, the tool's name there and the session of the served tool `name`, when
    /// [`Hub::offers_modern_tasks`].
    fn modern_tool(&self, name: &str) -> Result<(Arc<str>, String, Arc<Live>), McpError> {
        let catalog = self.catalog();
        let unknown = || McpError::invalid_params(format!("unknown tool \"{name}\""), None);
        let route = catalog.route(name).ok_or_else(unknown)?;
        let Target::Tool { name: raw } = &route.target else {
            return Err(unknown());
        };
        let live = self.live_for(&route.server)?;
        if !upstream::offered(&live.peer) {
            return Err(unknown());
        }
        Ok((route.server.clone(), raw.clone(), live))
    }

    /// A 2026-07-28 agent's `tools/call` of the served tool `name` on a server that speaks
    /// the extension, declaring it (module doc): `None` when the server asked for input
    /// first, so the call is to be made the ordinary way.
    ///
    /// # Errors
    /// -32602 for a tool not served by such a server; the server's own error; -32603 when
    /// it does not answer within its `toolTimeout` or answers something else.
    pub async fn call_modern_server_as_task(
        &self,
        tasks: &Tasks,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> Result<Option<CallToolResponse>, McpError> {
        let (server, raw, live) = self.modern_tool(name)?;
        match self.modern_call(&server, &live, &raw, arguments).await? {
            ServerResult::CreateTaskResult(created) => {
                let task = self.created(tasks, &server, &live, created.task);
                Ok(Some(CallToolResponse::Task(CreateTaskResult::new(task))))
            }
            ServerResult::CallToolResult(result) => Ok(Some(CallToolResponse::Complete(
                self.answered_at_once(&server, result),
            ))),
            ServerResult::InputRequiredResult(_) => Ok(None),
            _ => Err(unexpected(&server, "tools/call")),
        }
    }

    /// An `initialize`-era agent's task-augmented `tools/call` of the server's tool `raw`
    /// on `live`, a session that speaks the extension (module doc).
    ///
    /// # Errors
    /// As [`Hub::call_modern_server_as_task`]; -32603 when the server asks for input before
    /// it creates the task (a task-augmented call has no round to carry the answers).
    pub(super) async fn legacy_call_on_modern(
        &self,
        tasks: &Tasks,
        server: &Arc<str>,
        live: &Arc<Live>,
        raw: &str,
        arguments: Option<JsonObject>,
    ) -> Result<Value, McpError> {
        match self.modern_call(server, live, raw, arguments).await? {
            ServerResult::CreateTaskResult(created) => {
                let task = self.created(tasks, server, live, created.task);
                Ok(json!({ "task": legacy_task(&task) }))
            }
            ServerResult::CallToolResult(result) => {
                // The agent asked for a task: it gets one, already completed, holding the
                // result the server gave at once.
                let result = self.answered_at_once(server, result);
                let result =
                    serde_json::to_value(result).map_err(|_| unexpected(server, "tools/call"))?;
                let result = crate::upstream::exact::json_of(result);
                let task = tasks.insert_answered(server, live.generation, result);
                Ok(json!({ "task": task }))
            }
            ServerResult::InputRequiredResult(_) => Err(McpError::internal_error(
                format!(
                    "the server \"{server}\" asked for input before creating the task, which a task-augmented call cannot carry; call the tool without a task"
                ),
                None,
            )),
            _ => Err(unexpected(server, "tools/call")),
        }
    }

    /// A result the server gave at once, as an ordinary call's reaches the agent: known
    /// secrets masked in an `isError` result, URIs as the agent knows them.
    fn answered_at_once(&self, server: &str, result: CallToolResult) -> CallToolResult {
        let result = super::super::forward::masked(result);
        crate::hub::to_agent(self.catalog().native(), server, result)
    }

    /// Records the server's new `task` and returns it under the agent's id.
    fn created(&self, tasks: &Tasks, server: &Arc<str>, live: &Live, mut task: Task) -> Task {
        let upstream = std::mem::take(&mut task.task_id);
        let served = tasks.insert_modern(server, live.generation, &upstream);
        Ids::new(&upstream, &served).modern_task(&mut task);
        tasks.remember(&served, &legacy_task(&task));
        task
    }

    async fn modern_call(
        &self,
        server: &str,
        live: &Live,
        raw: &str,
        arguments: Option<JsonObject>,
    ) -> Result<ServerResult, McpError> {
        let timeout = self.tool_timeout(server);
        let call = upstream::call(&live.peer, raw, arguments, timeout);
        self.bounded(server, "tools/call", call).await
    }

    /// The server's `tasks/get` of `entry`'s task, under the agent's id `served` (in its status
    /// message and error too, `ids.rs`), remembered; a completed task's result with its URIs
    /// as the agent knows them.
    ///
    /// # Errors
    /// As [`Hub::about_task`].
    pub(super) async fn get_on_modern(
        &self,
        tasks: &Tasks,
        served: &str,
        entry: &Entry,
        live: &Live,
    ) -> Result<GetTaskResult, Unanswered> {
        let timeout = self.tool_timeout(&entry.server);
        let get = upstream::get(&live.peer, &entry.upstream, timeout);
        let got = self.about_task(served, entry, "tasks/get", get).await?;
        let ids = entry.ids(served);
        let mut detailed = got.task;
        ids.modern_task(&mut detailed.task);
        tasks.remember(served, &legacy_task(&detailed.task));
        match &mut detailed.payload {
            TaskPayload::Completed { result } => {
                let mut value = Value::Object(std::mem::take(result));
                ids.result(&mut value);
                let native = self.catalog();
                if let Value::Object(agent) =
                    crate::hub::to_agent(native.native(), &entry.server, value)
                {
                    *result = agent;
                }
            }
            TaskPayload::Failed { error } => ids.error_object(error),
            _ => {}
        }
        match &detailed.payload {
            TaskPayload::Completed { result } => {
                tasks.keep(served, Ok(Value::Object(result.clone())));
            }
            TaskPayload::Failed { error } => {
                let error = serde_json::from_value(Value::Object(error.clone()));
                tasks.keep(
                    served,
                    Err(error.unwrap_or_else(|_| unexpected(&entry.server, "tasks/get"))),
                );
            }
            _ => {}
        }
        Ok(GetTaskResult::new(detailed))
    }

    /// The server's `tasks/cancel` of `entry`'s task, which the agent knows as `served`.
    ///
    /// # Errors
    /// As [`Hub::about_task`].
    pub(super) async fn cancel_on_modern(
        &self,
        served: &str,
        entry: &Entry,
        live: &Live,
    ) -> Result<(), Unanswered> {
        let timeout = self.tool_timeout(&entry.server);
        let cancel = upstream::cancel(&live.peer, &entry.upstream, timeout);
        self.about_task(served, entry, "tasks/cancel", cancel).await
    }

    /// The server's `tasks/update` of `entry`'s task, which the agent knows as `served`, with
    /// `responses`.
    ///
    /// # Errors
    /// As [`Hub::about_task`].
    pub(super) async fn update_on_modern(
        &self,
        served: &str,
        entry: &Entry,
        live: &Live,
        responses: InputResponses,
    ) -> Result<(), Unanswered> {
        let timeout = self.tool_timeout(&entry.server);
        let update = upstream::update(&live.peer, &entry.upstream, responses, timeout);
        self.about_task(served, entry, "tasks/update", update).await
    }

    /// An `initialize`-era agent's `tasks/get`, `tasks/result` or `tasks/cancel` (`method`)
    /// of its task `served` on a 2026-07-28 server (module doc).
    ///
    /// # Errors
    /// The server's own error; a failed task's JSON-RPC error (`tasks/result`); -32603 for a
    /// cancelled task's result; for a task whose server restarted or stopped while the
    /// request waited, as when it was gone before (`hub/tasks/lost.rs`).
    pub(super) async fn legacy_request_on_modern(
        &self,
        tasks: &Tasks,
        method: &str,
        served: &str,
        entry: &Entry,
        live: &Live,
        asker: Option<Asker>,
    ) -> Result<Value, McpError> {
        let answer = match method {
            "tasks/result" => {
                return (self.result_on_modern(tasks, served, entry, live, asker)).await;
            }
            "tasks/cancel" => match self.cancel_on_modern(served, entry, live).await {
                Ok(()) => self.get_on_modern(tasks, served, entry, live).await,
                Err(unanswered) => Err(unanswered),
            },
            _ => self.get_on_modern(tasks, served, entry, live).await,
        };
        match answer {
            Ok(got) => Ok(legacy_task(&got.task.task)),
            Err(Unanswered::Lost) => lost_answer(method, served, entry),
            Err(Unanswered::Refused(error)) => Err(error),
        }
    }
}

/// An `initialize`-era agent's `tasks/get`, `tasks/result` or `tasks/cancel` (`method`) of
/// its task `served` that the server answered at once with `result` (module doc): served by
/// the companion, whatever became of the server since.
///
/// # Errors
/// -32602 for `tasks/cancel`: the task has ended.
pub(super) fn answered(
    method: &str,
    served: &str,
    entry: &Entry,
    result: &Value,
) -> Result<Value, McpError> {
    match method {
        "tasks/result" => {
            let mut result = result.clone();
            result["_meta"][RELATED_TASK] = json!({ "taskId": served });
            Ok(result)
        }
        "tasks/cancel" => Err(McpError::invalid_params(
            format!("cannot cancel task \"{served}\": it has completed"),
            None,
        )),
        _ => Ok(entry.last.clone()),
    }
}

/// The server's answer to `method` was not what the extension says it is.
pub(super) fn unexpected(server: &str, method: &str) -> McpError {
    McpError::internal_error(
        format!(
            "the server \"{server}\" answered {method} with something other than the Tasks extension's answer"
        ),
        None,
    )
}

/// A task of the extension in the 2025-11-25 shape: `ttl` and `pollInterval` for `ttlMs`
/// and `pollIntervalMs`, no payload.
pub(super) fn legacy_task(task: &Task) -> Value {
    let mut out = json!({
        "taskId": task.task_id,
        "status": task.status,
        "createdAt": task.created_at,
        "lastUpdatedAt": task.last_updated_at,
        "ttl": task.ttl_ms,
    });
    if let Some(message) = &task.status_message {
        out["statusMessage"] = Value::from(message.as_str());
    }
    if let Some(interval) = task.poll_interval_ms {
        out["pollInterval"] = Value::from(interval);
    }
    out
}

#[cfg(test)]
mod tests {
    use rmcp::model::TaskStatus;

    use super::*;

    #[test]
    fn an_extension_task_reads_as_the_2025_utility_s() {
        let mut task = Task::new("s:1", TaskStatus::InputRequired, "c", "u");
        task.ttl_ms = Some(60_000);
        task.poll_interval_ms = Some(50);
        task.status_message = Some("asks".into());
        assert_eq!(
            legacy_task(&task),
            json!({ "taskId": "s:1", "status": "input_required", "createdAt": "c",
                "lastUpdatedAt": "u", "ttl": 60000, "pollInterval": 50, "statusMessage": "asks" })
        );
        let unlimited = Task::new("t", TaskStatus::Working, "c", "c");
        assert_eq!(legacy_task(&unlimited)["ttl"], Value::Null);
        assert!(legacy_task(&unlimited).get("pollInterval").is_none());
    }
}
