//! A task that ended before its server's session did: what the agent was told stays true.
//!
//! MCP 2025-11-25 basic/utilities/tasks: a task in a terminal status (`completed`, `failed`,
//! `cancelled`) "MUST NOT" change status; the 2026-07-28 extension (SEP-2663) says the same.
//! The companion remembers, per task, the last status the agent was told or the server sent
//! (`Entry::last`) and what the task ended with, as the agent got it (`Entry::kept`: the
//! result of `tasks/result`, or the result or error a 2026-07-28 `tasks/get` carried). Once
//! the server's session that created the task is gone:
//!
//! | the agent asks | a task known to have ended | one that had not |
//! |---|---|---|
//! | `tasks/get`, `tasks/list` | its last status, as it was ([`Entry::ended`]); a 2026-07-28 agent gets the kept result or error with it | `failed`, naming the server (`lost.rs`) |
//! | `tasks/result` | the kept result or error; else -32603 saying the result was lost with the server ([`result_lost`]) | -32603 naming the server (`lost.rs`) |
//! | `tasks/cancel`, `tasks/update` | -32602: the task has already ended ([`ended_error`]) | -32602 naming the server (`lost.rs`) |
//!
//! A result is kept for as long as the agent's session lasts, one per task.

use rmcp::ErrorData as McpError;
use serde_json::Value;

use super::{Entry, RELATED_TASK, TaskTable, Tasks};

/// The terminal statuses of MCP 2025-11-25 tasks (and of the 2026-07-28 extension).
const TERMINAL: [&str; 3] = ["completed", "failed", "cancelled"];

impl Entry {
    /// The terminal status the task was last known in (`completed`, `failed`, `cancelled`),
    /// if it is known to have ended.
    pub(super) fn ended(&self) -> Option<&str> {
        (self.last.get("status").and_then(Value::as_str)).filter(|s| TERMINAL.contains(s))
    }
}

impl TaskTable {
    /// Records `task` as the last report of the agent's task `served`, unless the task is
    /// known to have ended: a terminal status never changes.
    pub(super) fn report(&mut self, served: &str, task: &Value) {
        if let Some(entry) = self.by_served.get_mut(served)
            && entry.ended().is_none()
        {
            entry.last = task.clone();
        }
    }
}

impl Tasks {
    /// Keeps what the agent's task `served` ended with, as the agent got it: its result, or
    /// its JSON-RPC error.
    pub(super) fn keep(&self, served: &str, outcome: Result<Value, McpError>) {
        if let Some(entry) = self.lock().by_served.get_mut(served) {
            entry.kept = Some(outcome);
        }
    }

    /// Keeps the `result` an `initialize`-era agent got from `tasks/result`, and marks the
    /// task ended when it was not known to be: a result comes only of an ended task,
    /// `failed` when it is a tool's `isError` result (MCP 2025-11-25), `completed` otherwise.
    pub(super) fn keep_result(&self, served: &str, result: &Value) {
        let mut table = self.lock();
        let Some(entry) = table.by_served.get_mut(served) else {
            return;
        };
        entry.kept = Some(Ok(result.clone()));
        if entry.ended().is_none() && entry.last.is_object() {
            let failed = result.get("isError").and_then(Value::as_bool) == Some(true);
            entry.last["status"] = Value::from(if failed { "failed" } else { "completed" });
        }
    }
}

/// An `initialize`-era agent's `tasks/result` of its task `served` (of `entry`), ended
/// before its server's session was gone: the kept result (naming the task in its
/// `related-task`) or error.
///
/// # Errors
/// The kept error; else [`result_lost`].
pub(super) fn kept_result(served: &str, entry: &Entry) -> Result<Value, McpError> {
    match &entry.kept {
        Some(Ok(result)) => {
            let mut result = result.clone();
            if result.is_object() {
                result["_meta"][RELATED_TASK] = serde_json::json!({ "taskId": served });
            }
            Ok(result)
        }
        Some(Err(error)) => Err(error.clone()),
        None => Err(result_lost(served, entry)),
    }
}

/// -32603: the result of the ended task `served` (of `entry`) was not kept and its server's
/// session is gone.
pub(super) fn result_lost(served: &str, entry: &Entry) -> McpError {
    let server = &entry.server;
    let status = entry.ended().unwrap_or("ended");
    McpError::internal_error(
        format!(
            "the result of task \"{served}\" was lost when the server \"{server}\" restarted or stopped; the task had ended ({status}) before"
        ),
        None,
    )
}

/// -32602 for `method` (`tasks/cancel`, `tasks/update`) of the task `served`, which has
/// ended in `status`.
pub(super) fn ended_error(method: &str, served: &str, status: &str) -> McpError {
    let verb = if method == "tasks/update" {
        "update"
    } else {
        "cancel"
    };
    McpError::invalid_params(
        format!("cannot {verb} task \"{served}\": it has already ended ({status})"),
        None,
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn entry(status: &str) -> Entry {
        Entry {
            server: "s".into(),
            generation: 1,
            upstream: "t".into(),
            modern: false,
            answered: None,
            kept: None,
            last: json!({ "taskId": "s:t", "status": status, "createdAt": "c" }),
        }
    }

    #[test]
    fn only_the_three_terminal_statuses_end_a_task() {
        for status in TERMINAL {
            assert_eq!(entry(status).ended(), Some(status));
        }
        for status in ["working", "input_required", "paused"] {
            assert_eq!(entry(status).ended(), None, "{status}");
        }
    }

    #[test]
    fn a_terminal_status_is_not_overwritten() {
        let tasks = Tasks::default();
        let served = tasks.insert(&"s".into(), 1, "t");
        tasks.remember(&served, &json!({ "taskId": served, "status": "working" }));
        tasks.remember(&served, &json!({ "taskId": served, "status": "cancelled" }));
        tasks.remember(&served, &json!({ "taskId": served, "status": "failed" }));
        let last = tasks.get(&served).expect("known").last;
        assert_eq!(last["status"], "cancelled");
    }

    #[test]
    fn a_result_marks_its_task_ended_and_is_kept() {
        let tasks = Tasks::default();
        let served = tasks.insert(&"s".into(), 1, "t");
        tasks.remember(&served, &json!({ "taskId": served, "status": "working" }));
        tasks.keep_result(&served, &json!({ "content": [], "isError": true }));
        let entry = tasks.get(&served).expect("known");
        assert_eq!(entry.ended(), Some("failed"));
        let result = kept_result(&served, &entry).expect("kept");
        assert_eq!(result["_meta"][RELATED_TASK]["taskId"], json!(served));
    }

    #[test]
    fn an_unkept_result_is_said_to_be_lost_naming_task_and_server() {
        let error = kept_result("s:t", &entry("completed")).expect_err("lost");
        assert_eq!(error.code.0, -32603);
        assert_eq!(
            error.message,
            "the result of task \"s:t\" was lost when the server \"s\" restarted or stopped; the task had ended (completed) before"
        );
        let error = ended_error("tasks/cancel", "s:t", "completed");
        assert_eq!(
            (error.code.0, error.message.as_ref()),
            (
                -32602,
                "cannot cancel task \"s:t\": it has already ended (completed)"
            )
        );
    }
}
