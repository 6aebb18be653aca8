//! The Tasks extension of MCP 2026-07-28 (`io.modelcontextprotocol/tasks`, SEP-2663) for a
//! 2026-07-28 agent, served from an `initialize`-era server's Tasks utility (MCP 2025-11-25).
//!
//! | the agent sends | the server is sent | the agent gets |
//! |---|---|---|
//! | `tools/call` declaring the extension, of a tool whose `taskSupport` is `required` | `tools/call` with `params.task` | `CreateTaskResult` (`resultType: "task"`, the task flattened, `ttl` → `ttlMs`, `pollInterval` → `pollIntervalMs`) |
//! | `tasks/get` | `tasks/get`; once the task has ended, `tasks/result` too | the task with its payload: a result (`completed`), the server's JSON-RPC error (`failed`) |
//! | `tasks/cancel` | `tasks/cancel` | an empty acknowledgement |
//! | `tasks/update` | each answer to the server's question under its key, while the `tasks/result` the companion started waits ([`super::asking`]) | an empty acknowledgement (answers to keys not outstanding are ignored, as the extension says) |
//!
//! A 2025-11-25 task that ended `failed` may still have a result (a tool result with
//! `isError: true` ends a 2025-11-25 task `failed`); the extension calls that `completed`, so
//! whichever `tasks/result` answers decides: a result is `completed`, an error `failed`.
//!
//! A task in `input_required` carries the server's questions as `inputRequests`; the server
//! asks them only during a `tasks/result`, which the companion starts for the agent
//! ([`super::asking`]). Until the first question is in, the task is reported `working`.

use rmcp::model::{
    ClientCapabilities, CreateTaskResult, DetailedTask, GetTaskResult, InputResponses, JsonObject,
    Task, TaskPayload, TaskStatus,
};
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use serde_json::{Value, json};

use super::ended::{ended_error, result_lost};
use super::lost::{Unanswered, lost_error, lost_message};
use super::{Entry, Tasks};
use crate::hub::Hub;

impl Hub {
    /// Whether a 2026-07-28 agent's call of the served tool `name` runs as a task: its server
    /// lists it with `execution.taskSupport: "required"` (it cannot be called otherwise). An
    /// `optional` tool runs as an ordinary call, whose result the agent gets at once.
    pub fn runs_as_task(&self, name: &str) -> bool {
        (self.catalog().tool(name))
            .is_some_and(|t| crate::catalog::execution::task_support(t) == Some("required"))
    }

    /// A 2026-07-28 agent's `tools/call` of the served tool `name` as a task: sent to the
    /// tool's server task-augmented, answered with the task as the agent will know it. The
    /// caller has applied the call policy ([`Hub::task_call_refused`]).
    ///
    /// # Errors
    /// As [`Hub::call_tool_as_task`]; -32603 when the server answers without a task.
    pub async fn call_tool_as_modern_task(
        &self,
        tasks: &Tasks,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> Result<CreateTaskResult, McpError> {
        let params =
            json!({ "name": name, "arguments": arguments.unwrap_or_default(), "task": {} });
        let created = Box::pin(self.send_task_call(tasks, params)).await?;
        let task = created
            .get("task")
            .ok_or_else(|| McpError::internal_error(answered_without_task(name), None))?;
        Ok(CreateTaskResult::new(modern_task(task)?))
    }

    /// `tasks/get` of the agent's task `served` (2026-07-28 shape): the server's `tasks/get`,
    /// and its `tasks/result` once the task has ended (module doc).
    ///
    /// # Errors
    /// -32602 for a task this session did not create; the server's error for its `tasks/get`
    /// (with the agent's task id in it). A task whose server restarted or stopped, before the
    /// request or while it waited, is reported `failed`, not refused.
    pub async fn get_modern_task(
        &self,
        tasks: &Tasks,
        served: &str,
        agent: (Peer<RoleServer>, ClientCapabilities),
    ) -> Result<GetTaskResult, McpError> {
        let entry = tasks.get(served).ok_or_else(|| unknown(served))?;
        let Some(live) = self.live_of(&entry) else {
            return Ok(lost_modern_task(served, &entry));
        };
        if entry.modern {
            return match self.get_on_modern(tasks, served, &entry, &live).await {
                Err(Unanswered::Lost) => Ok(lost_modern_task(served, &entry)),
                got => got.map_err(|e| e.into_error("tasks/get", served, &entry.server)),
            };
        }
        let ids = entry.ids(served);
        let params = json!({ "taskId": entry.upstream });
        let mut got = match self
            .raw_task(served, &entry, &live, "tasks/get", params)
            .await
        {
            Ok(got) => got,
            Err(Unanswered::Lost) => return Ok(lost_modern_task(served, &entry)),
            Err(Unanswered::Refused(error)) => return Err(error),
        };
        ids.task(&mut got);
        tasks.remember(served, &got);
        let task = modern_task(&got)?;
        if task.status.is_terminal() {
            tasks.done_asking(served);
        }
        let payload = match task.status {
            TaskStatus::InputRequired => {
                let requests = self.asked(tasks, served, &entry, &live, agent).await;
                if requests.is_empty() {
                    TaskPayload::Working
                } else {
                    TaskPayload::InputRequired {
                        input_requests: requests,
                    }
                }
            }
            TaskStatus::Working => TaskPayload::Working,
            TaskStatus::Cancelled => TaskPayload::Cancelled,
            _ => {
                let params = json!({ "taskId": entry.upstream });
                match self
                    .raw_task(served, &entry, &live, "tasks/result", params)
                    .await
                {
                    Ok(mut result) => {
                        ids.result(&mut result);
                        // Its URIs as the agent knows them, as in a call's result.
                        let native = self.catalog();
                        let result = crate::hub::to_agent(native.native(), &entry.server, result);
                        // Kept for when the server is gone (`ended.rs`).
                        tasks.keep(served, Ok(result.clone()));
                        match result {
                            Value::Object(result) => TaskPayload::Completed { result },
                            _ => TaskPayload::Completed {
                                result: JsonObject::new(),
                            },
                        }
                    }
                    Err(Unanswered::Lost) => return Ok(lost_modern_task(served, &entry)),
                    Err(Unanswered::Refused(error)) => {
                        let failed = error_object(&error);
                        tasks.keep(served, Err(error));
                        TaskPayload::Failed { error: failed }
                    }
                }
            }
        };
        Ok(GetTaskResult::new(DetailedTask::new(task, payload)))
    }

    /// `tasks/cancel` of the agent's task `served`, sent to its server as `tasks/cancel`.
    ///
    /// # Errors
    /// -32602 for a task this session did not create or whose server restarted or stopped
    /// (naming it); the server's own error (with the agent's task id in it).
    pub async fn cancel_modern_task(&self, tasks: &Tasks, served: &str) -> Result<(), McpError> {
        let entry = tasks.get(served).ok_or_else(|| unknown(served))?;
        let Some(live) = self.live_of(&entry) else {
            return Err(lost_modern_error("tasks/cancel", served, &entry));
        };
        if entry.modern {
            let cancelled = self.cancel_on_modern(served, &entry, &live).await;
            return cancelled.map_err(|e| e.into_error("tasks/cancel", served, &entry.server));
        }
        let params = json!({ "taskId": entry.upstream });
        let mut cancelled = (self
            .raw_task(served, &entry, &live, "tasks/cancel", params)
            .await)
            .map_err(|e| e.into_error("tasks/cancel", served, &entry.server))?;
        if cancelled.get("taskId").is_some() {
            entry.ids(served).task(&mut cancelled);
            tasks.remember(served, &cancelled);
        }
        Ok(())
    }

    /// `tasks/update` of the agent's task `served`: each answer handed to the server's
    /// question under its key (`hub/tasks/asking.rs`).
    ///
    /// # Errors
    /// -32602 for a task this session did not create or whose server restarted or stopped,
    /// or an answer of the wrong kind.
    pub async fn update_modern_task(
        &self,
        tasks: &Tasks,
        served: &str,
        responses: &InputResponses,
    ) -> Result<(), McpError> {
        let entry = tasks.get(served).ok_or_else(|| unknown(served))?;
        let Some(live) = self.live_of(&entry) else {
            return Err(lost_modern_error("tasks/update", served, &entry));
        };
        if entry.modern {
            let updated = self.update_on_modern(served, &entry, &live, responses.clone());
            let updated = updated.await;
            return updated.map_err(|e| e.into_error("tasks/update", served, &entry.server));
        }
        Hub::answer_asked(tasks, served, responses)
    }
}

/// `tasks/cancel` or `tasks/update` (`method`) of the agent's task `served` (of `entry`)
/// whose server restarted or stopped: -32602, saying the task had ended when it had
/// (`ended.rs`), else naming the server.
fn lost_modern_error(method: &str, served: &str, entry: &Entry) -> McpError {
    match entry.ended() {
        Some(status) => ended_error(method, served, status),
        None => lost_error(method, served, &entry.server),
    }
}

/// The agent's task `served` (of `entry`), which had ended before its server restarted or
/// stopped: as it was last reported, with the result or error kept (`ended.rs`); a result
/// not kept is reported lost (`failed`, -32603).
fn ended_modern_task(served: &str, entry: &Entry) -> Option<GetTaskResult> {
    let status = entry.ended()?;
    let mut task = modern_task(&entry.last).ok()?;
    served.clone_into(&mut task.task_id);
    let payload = match (status, &entry.kept) {
        ("cancelled", _) => TaskPayload::Cancelled,
        (_, Some(Ok(Value::Object(result)))) => TaskPayload::Completed {
            result: result.clone(),
        },
        (_, Some(Err(error))) => TaskPayload::Failed {
            error: error_object(error),
        },
        _ => {
            let lost = result_lost(served, entry);
            task.status_message = Some(lost.message.to_string());
            TaskPayload::Failed {
                error: error_object(&lost),
            }
        }
    };
    Some(GetTaskResult::new(DetailedTask::new(task, payload)))
}

/// The agent's task `served` (of `entry`) whose server restarted or stopped: as it ended,
/// when it had ([`ended_modern_task`]); else reported `failed`, its last known state with the
/// reason as its `statusMessage` and its `error` (-32603).
fn lost_modern_task(served: &str, entry: &Entry) -> GetTaskResult {
    if let Some(ended) = ended_modern_task(served, entry) {
        return ended;
    }
    let mut task = (entry.last.is_object())
        .then(|| modern_task(&entry.last).ok())
        .flatten()
        .unwrap_or_else(|| Task::new(served, TaskStatus::Failed, "", ""));
    let lost = lost_message(&entry.server);
    task.status_message = Some(lost.clone());
    let error = McpError::internal_error(lost, None);
    GetTaskResult::new(DetailedTask::new(
        task,
        TaskPayload::Failed {
            error: error_object(&error),
        },
    ))
}

fn unknown(served: &str) -> McpError {
    McpError::invalid_params(format!("unknown task \"{served}\""), None)
}

fn answered_without_task(name: &str) -> String {
    format!("the server answered the task-augmented call of \"{name}\" without a task")
}

/// A 2025-11-25 task (`taskId`, `status`, `statusMessage`, `createdAt`, `lastUpdatedAt`,
/// `ttl`, `pollInterval`) in the extension's shape (`ttlMs`, `pollIntervalMs`).
///
/// # Errors
/// -32603 when `task` has no `taskId` or an unknown `status`.
fn modern_task(task: &Value) -> Result<Task, McpError> {
    let text = |key: &str| task.get(key).and_then(Value::as_str);
    let number = |key: &str| task.get(key).and_then(Value::as_u64);
    let status = task
        .get("status")
        .cloned()
        .and_then(|s| serde_json::from_value::<TaskStatus>(s).ok());
    let (Some(id), Some(status)) = (text("taskId"), status) else {
        return Err(McpError::internal_error(
            format!("the server's task is not one: {task}"),
            None,
        ));
    };
    let created = text("createdAt").unwrap_or_default();
    let mut modern = Task::new(
        id,
        status,
        created,
        text("lastUpdatedAt").unwrap_or(created),
    );
    modern.status_message = text("statusMessage").map(str::to_owned);
    modern.ttl_ms = number("ttl").or_else(|| number("ttlMs"));
    modern.poll_interval_ms = number("pollInterval").or_else(|| number("pollIntervalMs"));
    Ok(modern)
}

/// A JSON-RPC error as the `error` member of a `failed` task.
fn error_object(error: &McpError) -> JsonObject {
    match serde_json::to_value(error) {
        Ok(Value::Object(object)) => object,
        _ => JsonObject::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_2025_task_reads_as_the_extension_s() {
        let legacy = json!({ "taskId": "s:1", "status": "working", "statusMessage": "go",
            "createdAt": "2026-12-05T00:00:00Z", "lastUpdatedAt": "2026-12-05T00:00:01Z",
            "ttl": 60000, "pollInterval": 1000 });
        let created =
            serde_json::to_value(CreateTaskResult::new(modern_task(&legacy).expect("a task")));
        assert_eq!(
            created.expect("serialises"),
            json!({ "resultType": "task", "taskId": "s:1", "status": "working",
                "statusMessage": "go", "createdAt": "2026-12-05T00:00:00Z",
                "lastUpdatedAt": "2026-12-05T00:00:01Z", "ttlMs": 60000, "pollIntervalMs": 1000 })
        );
        // No `ttl`: unlimited, written as null as the extension requires.
        let bare = json!({ "taskId": "t", "status": "input_required", "createdAt": "c" });
        let task = modern_task(&bare).expect("a task");
        assert_eq!((task.ttl_ms, task.last_updated_at.as_str()), (None, "c"));
        assert!(modern_task(&json!({ "taskId": "t", "status": "paused" })).is_err());
        assert!(modern_task(&json!({ "status": "working" })).is_err());
    }

    #[test]
    fn a_failed_task_carries_the_json_rpc_error() {
        let error = McpError::invalid_params("no such topic", None);
        let task = DetailedTask::new(
            Task::new("t", TaskStatus::Working, "c", "c"),
            TaskPayload::Failed {
                error: error_object(&error),
            },
        );
        let wire = serde_json::to_value(GetTaskResult::new(task)).expect("serialises");
        assert_eq!(wire["status"], "failed");
        assert_eq!(wire["resultType"], "complete");
        assert_eq!(
            wire["error"],
            json!({ "code": -32602, "message": "no such topic" })
        );
    }
}
