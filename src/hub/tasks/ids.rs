//! The agent's task id in what a server says of its task.
//!
//! The problem: a server knows its tasks by its own ids, the agent by `<server>:<id>`
//! ([`super::Tasks`]), and a server's words name its ids: its JSON-RPC errors
//! (server-everything's `tasks/result` of a cancelled task answers "Task 3f2a… has no result
//! stored"), a task's `statusMessage`, a failed task's `error`, a result's
//! `_meta["io.modelcontextprotocol/related-task"]`. An id the agent was never given is one it
//! cannot use.
//!
//! The strategy: before the agent sees any of these, the server's id is replaced by the
//! agent's ([`Ids`]) wherever it stands as a word of its own: not next to an ASCII letter,
//! digit, `-` or `_`, so that a server whose id is `7` still says "after 17 s". The content of
//! a tool's result is the tool's own output and is passed as it is.

use rmcp::ErrorData as McpError;
use rmcp::model::{JsonObject, Task};
use serde_json::Value;

use super::{Entry, RELATED_TASK};

/// One task's two ids: the server's and the agent's.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ids<'a> {
    /// The id the server gave the task.
    upstream: &'a str,
    /// The id the agent knows, `<server>:<id>`.
    served: &'a str,
}

impl Entry {
    /// The ids of this task, which the agent knows as `served`.
    pub(super) fn ids<'a>(&'a self, served: &'a str) -> Ids<'a> {
        Ids::new(&self.upstream, served)
    }
}

impl<'a> Ids<'a> {
    /// The task the server knows as `upstream` and the agent as `served`.
    pub(super) fn new(upstream: &'a str, served: &'a str) -> Ids<'a> {
        Ids { upstream, served }
    }
}

impl Ids<'_> {
    /// `text` with each word that is the server's id replaced by the agent's (module doc).
    pub(super) fn text(&self, text: &str) -> String {
        let id_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
        if self.upstream.is_empty() {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find(self.upstream) {
            let end = at + self.upstream.len();
            let before = rest[..at].chars().next_back();
            let after = rest[end..].chars().next();
            out.push_str(&rest[..at]);
            if before.is_some_and(id_char) || after.is_some_and(id_char) {
                out.push_str(&rest[at..end]);
            } else {
                out.push_str(self.served);
            }
            rest = &rest[end..];
        }
        out.push_str(rest);
        out
    }

    /// The server's JSON-RPC error with the agent's id in its message and in every string of
    /// its `data`.
    pub(super) fn error(&self, mut error: McpError) -> McpError {
        error.message = self.text(&error.message).into();
        if let Some(data) = &mut error.data {
            self.strings(data);
        }
        error
    }

    /// A failed task's `error` (a JSON-RPC error object) with the agent's id, as [`Ids::error`].
    pub(super) fn error_object(&self, error: &mut JsonObject) {
        for (key, value) in error.iter_mut() {
            if key == "message" || key == "data" {
                self.strings(value);
            }
        }
    }

    /// A task in the 2025-11-25 shape (an answer to `tasks/get` or `tasks/cancel`, a
    /// `CreateTaskResult`'s `task`, a status notification's params) as the agent knows it: its
    /// `taskId` the agent's, its `statusMessage` naming the agent's id.
    pub(super) fn task(&self, task: &mut Value) {
        task["taskId"] = Value::from(self.served);
        if let Some(message) = task.get_mut("statusMessage") {
            self.strings(message);
        }
    }

    /// A task of the Tasks extension as the agent knows it, as [`Ids::task`].
    pub(super) fn modern_task(&self, task: &mut Task) {
        self.served.clone_into(&mut task.task_id);
        if let Some(message) = &mut task.status_message {
            *message = self.text(message);
        }
    }

    /// A task's result: `_meta["io.modelcontextprotocol/related-task"].taskId` the agent's
    /// when it names the task.
    pub(super) fn result(&self, result: &mut Value) {
        if let Some(related) = (result.get_mut("_meta"))
            .and_then(|m| m.get_mut(RELATED_TASK))
            .filter(|r| r.get("taskId").and_then(Value::as_str) == Some(self.upstream))
        {
            related["taskId"] = Value::from(self.served);
        }
    }

    /// Every string in `value` as [`Ids::text`] gives it.
    fn strings(&self, value: &mut Value) {
        match value {
            Value::String(text) => *text = self.text(text),
            Value::Array(items) => items.iter_mut().for_each(|v| self.strings(v)),
            Value::Object(map) => map.values_mut().for_each(|v| self.strings(v)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ids<'a>(upstream: &'a str, served: &'a str) -> Ids<'a> {
        Ids::new(upstream, served)
    }

    #[test]
    fn the_server_s_id_becomes_the_agent_s_where_it_is_a_word() {
        let cases = [
            (
                "t-1",
                "Task t-1 has no result stored",
                "Task s:t-1 has no result stored",
            ),
            (
                "t-1",
                "task \"t-1\" was cancelled",
                "task \"s:t-1\" was cancelled",
            ),
            ("t-1", "t-1", "s:t-1"),
            ("t-1", "t-1, t-1.", "s:t-1, s:t-1."),
            // Part of a longer word: another id, a number.
            ("t-1", "t-10 and at-1", "t-10 and at-1"),
            (
                "7",
                "task 7 failed after 17 s",
                "task s:7 failed after 17 s",
            ),
            ("7", "no id here", "no id here"),
            ("é", "é!", "s:é!"),
            ("", "empty", "empty"),
        ];
        for (upstream, text, want) in cases {
            let served = format!("s:{upstream}");
            assert_eq!(
                ids(upstream, &served).text(text),
                want,
                "{upstream} in {text}"
            );
        }
    }

    #[test]
    fn an_error_names_the_agent_s_id_in_its_message_and_data() {
        let error = McpError::internal_error(
            "Task abc was cancelled",
            Some(json!({ "taskId": "abc", "why": ["abc", 3], "code": 1 })),
        );
        let error = ids("abc", "s:abc").error(error);
        assert_eq!(error.message, "Task s:abc was cancelled");
        assert_eq!(
            error.data,
            Some(json!({ "taskId": "s:abc", "why": ["s:abc", 3], "code": 1 }))
        );
        let mut object = serde_json::from_value::<JsonObject>(
            json!({ "code": -32603, "message": "abc failed", "data": "abc" }),
        )
        .expect("an object");
        ids("abc", "s:abc").error_object(&mut object);
        assert_eq!(
            Value::Object(object),
            json!({ "code": -32603, "message": "s:abc failed", "data": "s:abc" })
        );
    }

    #[test]
    fn a_task_and_a_result_name_the_agent_s_id() {
        let mut task = json!({ "taskId": "abc", "status": "working",
            "statusMessage": "abc is working", "createdAt": "abc" });
        ids("abc", "s:abc").task(&mut task);
        assert_eq!(
            task,
            json!({ "taskId": "s:abc", "status": "working",
                "statusMessage": "s:abc is working", "createdAt": "abc" })
        );
        let mut modern = Task::new("abc", rmcp::model::TaskStatus::Working, "c", "c");
        modern.status_message = Some("working on abc".into());
        ids("abc", "s:abc").modern_task(&mut modern);
        assert_eq!(modern.task_id, "s:abc");
        assert_eq!(modern.status_message.as_deref(), Some("working on s:abc"));

        let mut result = json!({ "content": [{ "type": "text", "text": "abc" }],
            "_meta": { RELATED_TASK: { "taskId": "abc" } } });
        ids("abc", "s:abc").result(&mut result);
        assert_eq!(result["_meta"][RELATED_TASK]["taskId"], "s:abc");
        // The tool's own output is its own.
        assert_eq!(result["content"][0]["text"], "abc");
        let mut other = json!({ "_meta": { RELATED_TASK: { "taskId": "other" } } });
        ids("abc", "s:abc").result(&mut other);
        assert_eq!(other["_meta"][RELATED_TASK]["taskId"], "other");
    }
}
