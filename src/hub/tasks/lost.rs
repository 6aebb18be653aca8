//! A task whose server's session ended: what the agent is told, whether the session was gone
//! before the request or ended while it waited.
//!
//! A task outlives neither its server's process nor a restart of it. A request about a task
//! whose session has ended is answered by the companion: `tasks/get` and `tasks/list` report
//! the task `failed` with a status message naming the server ([`lost_task`]); `tasks/result`
//! answers -32603, `tasks/cancel` and `tasks/update` -32602, each with that reason
//! ([`lost_error`]). A request that was waiting when the session ended (a `tasks/result`
//! blocked on a working task) gets the same answer, never the transport's "Transport closed"
//! ([`Hub::about_task`]).

use std::future::Future;

use rmcp::ErrorData as McpError;
use rmcp::service::ServiceError;
use serde_json::{Value, json};

use super::{Entry, ended};
use crate::hub::Hub;
use crate::supervisor::Live;

/// Why a server gave no answer to a request about one of its tasks.
#[derive(Debug)]
pub(super) enum Unanswered {
    /// The session that created the task ended before the server answered: the server
    /// restarted or stopped, and the task ended with its process.
    Lost,
    /// The server's JSON-RPC error (naming the agent's task id, `ids.rs`), or -32603 naming
    /// the server when it did not answer in time or answered something else.
    Refused(McpError),
}

impl Unanswered {
    /// The error the agent gets for `method` of its task `served` on `server`.
    pub(super) fn into_error(self, method: &str, served: &str, server: &str) -> McpError {
        match self {
            Unanswered::Lost => lost_error(method, served, server),
            Unanswered::Refused(error) => error,
        }
    }
}

impl Hub {
    /// `request` (`method`) about the agent's task `served` (of `entry`) on the session that
    /// created it, at most the server's `toolTimeout`.
    ///
    /// # Errors
    /// [`Unanswered::Lost`] when the session ends first; else as [`Hub::bounded`], with the
    /// agent's task id in the server's error.
    pub(super) async fn about_task<T>(
        &self,
        served: &str,
        entry: &Entry,
        method: &str,
        request: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, Unanswered> {
        let request = async {
            match request.await {
                Err(ServiceError::TransportClosed) => Ok(None),
                answer => answer.map(Some),
            }
        };
        match self.bounded(&entry.server, method, request).await {
            Ok(Some(answer)) => Ok(answer),
            Ok(None) => Err(Unanswered::Lost),
            Err(error) => Err(Unanswered::Refused(entry.ids(served).error(error))),
        }
    }

    /// `method` with `params` (JSON, the server's task id in them) about the agent's task
    /// `served` (of `entry`) to its session `live`, as [`Hub::about_task`].
    pub(super) async fn raw_task(
        &self,
        served: &str,
        entry: &Entry,
        live: &Live,
        method: &str,
        params: Value,
    ) -> Result<Value, Unanswered> {
        let timeout = self.tool_timeout(&entry.server);
        let request =
            crate::upstream::raw::request(&live.peer, live.lane.as_ref(), method, params, timeout);
        self.about_task(served, entry, method, request).await
    }
}

/// Why a task is gone: its server's process ended.
pub(super) fn lost_message(server: &str) -> String {
    format!(
        "the server \"{server}\" restarted or stopped since the task was created; the task ended with its process"
    )
}

/// The agent's task `served` whose server's session is gone: as last known when it had
/// ended (`ended.rs`), else reported `failed` naming the server.
pub(super) fn lost_task(served: &str, entry: &Entry) -> Value {
    let mut task = if entry.last.is_object() {
        entry.last.clone()
    } else {
        json!({})
    };
    task["taskId"] = Value::from(served);
    if entry.ended().is_none() {
        task["status"] = Value::from("failed");
        task["statusMessage"] = Value::from(lost_message(&entry.server));
    }
    task
}

/// The error for `method` (`tasks/result`, `tasks/cancel`, `tasks/update`) of the agent's
/// task `served` whose server `server` restarted or stopped: -32603 for a result, -32602 for
/// the others.
pub(super) fn lost_error(method: &str, served: &str, server: &str) -> McpError {
    let lost = lost_message(server);
    match method {
        "tasks/cancel" => {
            McpError::invalid_params(format!("cannot cancel task \"{served}\": {lost}"), None)
        }
        "tasks/update" => {
            McpError::invalid_params(format!("cannot update task \"{served}\": {lost}"), None)
        }
        "tasks/result" => {
            McpError::internal_error(format!("task \"{served}\" has no result: {lost}"), None)
        }
        _ => McpError::internal_error(format!("task \"{served}\": {lost}"), None),
    }
}

/// An `initialize`-era agent's `method` of its task `served` whose session is gone:
/// `tasks/get` reports the task as [`lost_task`]; of a task that had ended, `tasks/result`
/// answers what was kept and `tasks/cancel` that it has ended (`ended.rs`); the others
/// answer [`lost_error`].
///
/// # Errors
/// [`lost_error`], [`ended::kept_result`] or [`ended::ended_error`] for every method but
/// `tasks/get`.
pub(super) fn lost_answer(method: &str, served: &str, entry: &Entry) -> Result<Value, McpError> {
    match (method, entry.ended()) {
        ("tasks/get", _) => Ok(lost_task(served, entry)),
        ("tasks/result", Some(_)) => ended::kept_result(served, entry),
        ("tasks/cancel" | "tasks/update", Some(status)) => {
            Err(ended::ended_error(method, served, status))
        }
        _ => Err(lost_error(method, served, &entry.server)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        Entry {
            server: "s".into(),
            generation: 1,
            upstream: "t".into(),
            modern: false,
            answered: None,
            kept: None,
            last: json!({ "taskId": "s:t", "status": "working", "createdAt": "2026-12-04T00:00:00Z" }),
        }
    }

    #[test]
    fn a_lost_task_is_reported_failed_naming_its_server() {
        let task = lost_task("s:t", &entry());
        assert_eq!(task["status"], "failed");
        assert_eq!(task["createdAt"], "2026-12-04T00:00:00Z");
        assert!(
            task["statusMessage"]
                .as_str()
                .is_some_and(|m| m.contains("\"s\""))
        );
    }

    #[test]
    fn each_request_of_a_lost_task_is_told_why_under_the_agent_s_id() {
        let lost = lost_message("s");
        let cases = [
            (
                "tasks/result",
                -32603,
                format!("task \"s:t\" has no result: {lost}"),
            ),
            (
                "tasks/cancel",
                -32602,
                format!("cannot cancel task \"s:t\": {lost}"),
            ),
            (
                "tasks/update",
                -32602,
                format!("cannot update task \"s:t\": {lost}"),
            ),
        ];
        for (method, code, message) in cases {
            let error = lost_answer(method, "s:t", &entry()).expect_err(method);
            assert_eq!(
                (error.code.0, error.message.as_ref()),
                (code, message.as_str())
            );
        }
        let got = lost_answer("tasks/get", "s:t", &entry()).expect("a task");
        assert_eq!(got["status"], "failed");
        let refused = Unanswered::Refused(McpError::invalid_params("no", None));
        assert_eq!(refused.into_error("tasks/result", "s:t", "s").message, "no");
        let lost = Unanswered::Lost.into_error("tasks/result", "s:t", "s");
        assert!(lost.message.contains("restarted or stopped"), "{lost:?}");
    }
}
