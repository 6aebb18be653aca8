//! `tasks/result` of a 2026-07-28 server's task for an `initialize`-era agent: the extension
//! has no `tasks/result`, so the task's `tasks/get` is polled (every `pollIntervalMs`, within
//! [`MIN_POLL`]..[`MAX_POLL`]) until it ends; the questions of an `input_required` task go to
//! the waiting agent as requests ([`crate::upstream::mrtr`]), each once, and their answers to
//! the server as `tasks/update`.

use std::collections::HashSet;
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{InputRequiredResult, TaskPayload};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::lost::Unanswered;
use super::{Entry, RELATED_TASK, Tasks};
use crate::hub::Hub;
use crate::supervisor::Live;
use crate::upstream::askers::Asker;
use crate::upstream::call::Downstream;

/// The shortest wait between two `tasks/get` of one `tasks/result`.
pub const MIN_POLL: Duration = Duration::from_millis(20);
/// The longest wait between two `tasks/get` of one `tasks/result`.
pub const MAX_POLL: Duration = Duration::from_secs(5);
/// The wait when the server suggests no `pollIntervalMs`.
const DEFAULT_POLL: Duration = Duration::from_millis(500);

impl Hub {
    /// `tasks/result` of the agent's task `served` (of `entry`, on the 2026-07-28 server's
    /// session `live`): polled until it ends, its questions put to `asker`'s agent (each once)
    /// and answered to the server.
    ///
    /// # Errors
    /// A failed task's JSON-RPC error; -32603 for a cancelled task, or when the agent cancels;
    /// the server's own error to a `tasks/get` or `tasks/update`; for a task whose server
    /// restarted or stopped meanwhile, -32603 saying so (`hub/tasks/lost.rs`).
    pub(super) async fn result_on_modern(
        &self,
        tasks: &Tasks,
        served: &str,
        entry: &Entry,
        live: &Live,
        asker: Option<Asker>,
    ) -> Result<Value, McpError> {
        let downstream = asker.map(|a| Downstream {
            peer: a.peer,
            progress_token: None,
            meta: None,
            arguments: None,
            cancelled: a.cancelled,
            shutdown: CancellationToken::new(),
            relay: a.relay,
        });
        let mut answered: HashSet<String> = HashSet::new();
        let unanswered = |e: Unanswered| e.into_error("tasks/result", served, &entry.server);
        loop {
            let got = (self.get_on_modern(tasks, served, entry, live).await).map_err(unanswered)?;
            let wait = (got.task.task.poll_interval_ms)
                .map_or(DEFAULT_POLL, Duration::from_millis)
                .clamp(MIN_POLL, MAX_POLL);
            match got.task.payload {
                TaskPayload::Completed { result } => {
                    let mut result = Value::Object(result);
                    result["_meta"][RELATED_TASK] = json!({ "taskId": served });
                    return Ok(result);
                }
                TaskPayload::Failed { error } => {
                    return Err(serde_json::from_value(Value::Object(error)).unwrap_or_else(
                        |_| super::from_modern::unexpected(&entry.server, "tasks/get"),
                    ));
                }
                TaskPayload::Cancelled => {
                    return Err(McpError::internal_error(
                        format!("task \"{served}\" was cancelled"),
                        None,
                    ));
                }
                TaskPayload::InputRequired { mut input_requests } => {
                    input_requests.retain(|key, _| !answered.contains(key));
                    if !input_requests.is_empty() {
                        answered.extend(input_requests.keys().cloned());
                        let asked = InputRequiredResult::new(Some(input_requests), None);
                        let timeout = self.tool_timeout(&entry.server);
                        let answers =
                            crate::upstream::mrtr::answer(asked, downstream.as_ref(), timeout)
                                .await
                                .map_err(|e| McpError::internal_error(e.to_string(), None))?;
                        let responses = answers.into_responses();
                        let updated = self.update_on_modern(served, entry, live, responses);
                        updated.await.map_err(unanswered)?;
                        continue;
                    }
                }
                _ => {}
            }
            let cancelled = downstream.as_ref().map(|d| d.cancelled.clone());
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = async {
                    match &cancelled {
                        Some(c) => c.cancelled().await,
                        None => std::future::pending().await,
                    }
                } => {
                    return Err(McpError::internal_error("cancelled by the client", None));
                }
            }
        }
    }
}
