//! What the hub tells the activity log ([`crate::activity`]): one [`CallRecord`] per agent
//! call, which both forwarding paths hold from the call's start to its one answer, the
//! listings the endpoint serves, and every server state change.
//!
//! A call's record is made where its path starts ([`Hub::call_as`] for the rmcp path,
//! `FastCall::run` for the fast path — and never again when the fast path hands a call over:
//! it passes its record along, or, before anything was sent, makes none and lets
//! [`Hub::call_as`] make it), so each call is recorded exactly once. How it ended is told by
//! what the path holds at its end: the result it answers with, the [`CallError`] that ended it
//! (its kind and outcome: [`failure`]), or nothing — a record dropped unanswered is a call the
//! agent cancelled or left.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use rmcp::model::{CallToolResult, JsonObject};
use serde_json::value::RawValue;
use tokio::time::Instant;

use super::{Hub, HubEvent};
use crate::activity::{
    Activity, Agent, CallEntry, Ended, Entry, ListingEntry, Payload, ServerEntry, now_ms,
};
use crate::upstream::call::CallError;

/// One call on its way: recorded once, when it is answered or dropped. Holds nothing when the
/// log is off.
#[derive(Debug, Default)]
pub struct CallRecord {
    open: Option<Box<Open>>,
}

#[derive(Debug)]
struct Open {
    activity: Activity,
    started: Instant,
    at_ms: u64,
    agent: Agent,
    profile: Option<Arc<str>>,
    path: &'static str,
    server: Option<Arc<str>>,
    tool: String,
    arguments: Payload,
    attempts: u32,
    approval: Option<&'static str>,
}

/// Decoded arguments, as the rmcp path has them.
pub fn object_arguments(arguments: Option<&JsonObject>) -> Payload {
    arguments.map_or(Payload::None, |a| Payload::Object(a.clone()))
}

/// Raw arguments, as the fast path has them.
pub fn raw_arguments(arguments: Option<&RawValue>) -> Payload {
    arguments.map_or(Payload::None, |a| Payload::Raw(a.to_owned()))
}

impl CallRecord {
    /// Starts the record of a call to `tool` by `agent` on `path` (`fast` or `rmcp`), made
    /// through `hub` (its activity log, and the profile of its session); the agent and
    /// arguments are only taken when the log is on.
    pub fn start(
        hub: &Hub,
        path: &'static str,
        agent: impl FnOnce() -> Agent,
        tool: &str,
        arguments: impl FnOnce() -> Payload,
    ) -> CallRecord {
        let activity = &hub.activity;
        if !activity.is_on() {
            return CallRecord::default();
        }
        CallRecord {
            open: Some(Box::new(Open {
                activity: activity.clone(),
                started: Instant::now(),
                at_ms: now_ms(),
                agent: agent(),
                profile: hub.profile(),
                path,
                server: None,
                tool: tool.to_owned(),
                arguments: arguments(),
                attempts: 0,
                approval: None,
            })),
        }
    }

    /// A profile session called the tool under the profile's name: the entry names it by its
    /// default wrapped name (`base`, `mcp_<server>_<tool>`), as every other view's entries do,
    /// so one `--tool` filter finds its calls from every view.
    pub fn wrapped_as(&mut self, base: &str) {
        if let Some(open) = &mut self.open
            && open.profile.is_some()
            && open.tool != base
        {
            base.clone_into(&mut open.tool);
        }
    }

    /// The call was routed to `server`.
    pub fn routed(&mut self, server: &Arc<str>) {
        if let Some(open) = &mut self.open {
            open.server = Some(server.clone());
        }
    }

    /// The call was sent to its server `n` more times (or a send was tried): the entry's
    /// `attempts`, so a retried call shows each attempt.
    pub fn attempted(&mut self, n: u32) {
        if let Some(open) = &mut self.open {
            open.attempts += n;
        }
    }

    /// The call policy let the call run, noting `note` (the person approved it, or it ran
    /// unasked with nobody to ask).
    pub fn approval(&mut self, note: Option<&'static str>) {
        if let Some(open) = &mut self.open {
            open.approval = note;
        }
    }

    /// The call policy refused the call (`outcome` `denied`, `declined` or `cancelled`, of
    /// `kind`); `answer` is the agent's `isError`, whose text is all the companion's own.
    pub fn refused(self, outcome: &'static str, kind: &'static str, answer: &CallToolResult) {
        let message = text_of(answer);
        self.end(|| Ended::Failed {
            outcome,
            kind,
            detail: message.clone(),
            message,
        });
    }

    /// The call was answered with `result`, which ended it with `failure` when the companion
    /// made it (an `isError` for a failed attempt), else came from the server.
    pub fn answered(self, result: &CallToolResult, failure: Option<&CallError>) {
        match (failure, crate::upstream::exact::kept(result)) {
            (Some(e), _) => self.failed(e, result),
            // What the agent gets: the server's text.
            (None, Some(text)) => self.end(|| Ended::Raw(Bytes::from(text.to_owned()))),
            (None, None) => self.end(|| Ended::Result(result.clone())),
        }
    }

    /// The call was answered with `result`, the JSON text of the fast path's reply (shared
    /// with the reply, not copied), passed through from the server.
    pub fn answered_raw(self, result: impl FnOnce() -> Bytes) {
        self.end(|| Ended::Raw(result()));
    }

    /// The call ended with `e`; `answer` is what the agent got.
    pub fn failed(self, e: &CallError, answer: &CallToolResult) {
        let (outcome, kind, detail) = failure(e);
        self.end(|| Ended::Failed {
            outcome,
            kind,
            detail,
            message: text_of(answer),
        });
    }

    /// The call could not be routed (unknown tool, server down): `message` is the agent's
    /// `isError` text, `detail` the same without the server's words (its last error).
    pub fn unavailable(self, detail: &str, message: &str) {
        self.end(|| Ended::Failed {
            outcome: "error",
            kind: "unavailable",
            detail: detail.to_owned(),
            message: message.to_owned(),
        });
    }

    /// The call was refused because the tool waits for the person's approval of its changed
    /// definition (pinning): `message` is the agent's `isError` text (the companion's own
    /// words).
    pub fn withheld(self, message: &str) {
        self.end(|| Ended::Failed {
            outcome: "withheld",
            kind: "withheld",
            detail: message.to_owned(),
            message: message.to_owned(),
        });
    }

    /// Records the call as ended by `ended` (made only when the log is on).
    fn end(mut self, ended: impl FnOnce() -> Ended) {
        if let Some(open) = self.open.take() {
            record(*open, ended());
        }
    }
}

impl Drop for CallRecord {
    /// Unanswered: the agent cancelled the call or left.
    fn drop(&mut self) {
        if let Some(open) = self.open.take() {
            record(*open, Ended::Cancelled);
        }
    }
}

fn record(open: Open, ended: Ended) {
    open.activity.record(Entry::Call(Box::new(CallEntry {
        at_ms: open.at_ms,
        duration: open.started.elapsed(),
        agent: open.agent,
        profile: open.profile,
        path: open.path,
        server: open.server,
        tool: open.tool,
        arguments: open.arguments,
        attempts: open.attempts,
        approval: open.approval,
        ended,
    })));
}

/// A failed call's outcome (`error`, `timeout`, `cancelled`), kind, and a detail that never
/// quotes the arguments or the server's words (those go in the message, kept only with
/// `recordPayloads`).
pub fn failure(e: &CallError) -> (&'static str, &'static str, String) {
    match e {
        CallError::Timeout { .. } => ("timeout", "timeout", e.to_string()),
        CallError::NotSent { .. } => ("timeout", "not_sent", e.to_string()),
        CallError::Cancelled => ("cancelled", "cancelled", e.to_string()),
        CallError::Rpc { code, .. } => ("error", "rpc", format!("JSON-RPC error {code}")),
        CallError::Transport { .. } => ("error", "lost", e.to_string()),
        CallError::Exited { how, .. } => (
            "error",
            "exited",
            format!("the server's process exited during the call ({how})"),
        ),
        CallError::BadAnswer(bad) => ("error", "bad_answer", bad.summary()),
        CallError::NotDelivered { .. } => ("error", "not_delivered", e.to_string()),
        CallError::SessionExpired => ("error", "session_expired", e.to_string()),
        CallError::ShuttingDown => ("error", "shutting_down", e.to_string()),
        CallError::SessionClosed => ("error", "session_closed", e.to_string()),
        CallError::Arguments { .. } => ("error", "arguments", "invalid arguments".to_owned()),
        CallError::Unexpected { .. } => (
            "error",
            "unexpected",
            "unexpected answer from the server".to_owned(),
        ),
    }
}

/// The text blocks of an `isError` answer, joined.
fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|b| b.as_text().map(|t| t.text.as_str()))
        .collect::<Vec<_>>()
        .join("\n")
}

impl Hub {
    /// The activity log this hub records to.
    pub fn activity(&self) -> &Activity {
        &self.activity
    }

    /// Records that `agent` was served a `tools/list` page of `items` tools on `path`.
    pub fn record_listing(
        &self,
        agent: impl FnOnce() -> Agent,
        path: &'static str,
        items: usize,
        cursor: Option<&str>,
    ) {
        if !self.activity.is_on() {
            return;
        }
        self.activity.record(Entry::Listing(ListingEntry {
            at_ms: now_ms(),
            agent: agent(),
            profile: self.profile(),
            method: "tools/list",
            path,
            items,
            cursor: cursor.map(str::to_owned),
        }));
    }

    /// Records every server's state changes from now on, until the hub's owner is gone (a
    /// task holding no handle, so it does not keep the hub alive).
    pub(super) fn record_server_events(&self) {
        if !self.activity.is_on() {
            return;
        }
        let activity = self.activity.clone();
        let view = self.view.clone();
        let mut events = self.subscribe();
        tokio::spawn(async move {
            let mut last: HashMap<String, String> = HashMap::new();
            loop {
                let now = view.borrow().clone();
                for status in super::view::statuses_in(&now) {
                    let state = status.state.as_str().to_owned();
                    let previous = last.insert(status.name.clone(), state.clone());
                    if previous.as_ref() == Some(&state) {
                        continue;
                    }
                    let detail = match (&status.last_error, status.state) {
                        (Some(e), _) => Some(e.clone()),
                        (None, crate::supervisor::ServerState::Running) => {
                            Some(format!("{} tools", status.tools))
                        }
                        (None, _) => None,
                    };
                    activity.record(Entry::Server(ServerEntry {
                        at_ms: now_ms(),
                        server: status.name,
                        state,
                        previous,
                        detail,
                    }));
                }
                loop {
                    match events.recv().await {
                        Some(HubEvent::ServersChanged) => break,
                        Some(HubEvent::ToolsChanged) => {}
                        None => return,
                    }
                }
            }
        });
    }
}
