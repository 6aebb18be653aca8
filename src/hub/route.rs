//! [`Hub::call`]: from a wrapped tool name to an upstream request, and back to exactly one
//! `tools/call` result (DESIGN §6, §7).
//!
//! ```text
//! route by wrapped name (catalog, else the server's last known routes)
//!        │ unknown ─▶ isError "unknown tool"
//!        ▼
//! server has a session? ─no─▶ removed / stopped / failed / needs sign-in ─▶ isError at once
//!        │ yes                 restarting (restart, crash backoff, reload) ─▶ wait ≤ connectTimeout
//!        ▼
//! call policy (approve.rs) ─ deny / declined ─▶ isError, never sent
//!        │ allow / approved
//!        ▼
//! call on session g ──ok / JSON-RPC error / timeout──▶ result (never retried)
//!        │ session broke
//!        ▼
//! retry safe? ─no─▶ isError "the connection was lost … the call may or may not have run"
//!        │ yes: not delivered, or the tool is readOnlyHint / idempotentHint
//!        ▼
//! reconnect(g), shared by every caller that saw g fail ──▶ call once more ──▶ result
//! ```
//!
//! **The retry rule** and the texts of failed calls live in [`Forward`] (`forward.rs`), which
//! the fast path drives too; this file routes the call and finds it a session.
//!
//! **Restarts.** While a server restarts (the `restart` command, a crash and its backoff, a
//! `reload` that changed its entry) its tools leave `tools/list`, but the hub keeps their last
//! routes: a call waits for the server, up to its `connectTimeout`, and then runs. Only a
//! server that was removed, stopped by the user, has failed or needs sign-in answers at once,
//! saying which.

use rmcp::model::{CallToolResult, JsonObject};
use std::sync::Arc;
use tokio::time::Instant;

use super::Hub;
use super::approve::Approval;
use super::forward::{Forward, Verdict, error_result};
use super::record::{self, CallRecord};
use super::search::SearchCall;
use crate::activity::Agent;
use crate::catalog::{Route, ServerListing, Target, naming, search};
use crate::config::DEFAULT_CONNECT_TIMEOUT;
use crate::supervisor::{Live, ServerHandle, ServerState, ServerStatus, now_ms};
use crate::upstream::call::{self, CallError, Downstream};

impl Hub {
    /// Calls the wrapped tool `name` and always returns a `tools/call` result: upstream answers
    /// are passed through; every failure (unknown tool, server down, timeout, JSON-RPC error,
    /// lost connection) becomes `isError: true` with a readable message naming the server.
    ///
    /// Waits for a restarting server (up to its `connectTimeout`); retries a call whose session
    /// broke only when that cannot run it twice ([`Forward`], see the module docs).
    ///
    /// The call is recorded in the activity log (`record.rs`) as made by the agent of
    /// `downstream`, or by the control API when there is none.
    ///
    /// Under `toolSearch`, `search_tools` is answered from the session's catalog and
    /// `call_tool` is this call of the tool it names (`search.rs`).
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        downstream: Option<&Downstream>,
    ) -> CallToolResult {
        let agent = || downstream.map_or_else(Agent::control, |d| self.agent_of(&d.peer));
        self.call_as(name, arguments, downstream, agent).await
    }

    /// [`Hub::call`], recorded as made by `agent` (the fast path's calls it hands over
    /// before sending anything).
    pub async fn call_as(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        downstream: Option<&Downstream>,
        agent: impl Fn() -> Agent + Sync,
    ) -> CallToolResult {
        let catalog = self.catalog();
        let (name, arguments) = if catalog.searching() && search::is_search_tool(name) {
            match Hub::search_call(&catalog, name, arguments.as_ref()) {
                SearchCall::Call(inner, arguments) => (std::borrow::Cow::Owned(inner), arguments),
                SearchCall::Answer(answer) => {
                    let record = CallRecord::start(self, "rmcp", &agent, name, || {
                        record::object_arguments(arguments.as_ref())
                    });
                    record.answered(&answer, None);
                    return answer;
                }
            }
        } else {
            (std::borrow::Cow::Borrowed(name), arguments)
        };
        drop(catalog);
        let record = CallRecord::start(self, "rmcp", &agent, &name, || {
            record::object_arguments(arguments.as_ref())
        });
        self.routed_call(&name, arguments, downstream, &agent, record)
            .await
    }

    /// The call of `name` once its search-tool form is unwrapped: routed, approved
    /// (`approve.rs`), forwarded, recorded.
    async fn routed_call(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        downstream: Option<&Downstream>,
        agent: &(dyn Fn() -> Agent + Sync),
        mut record: CallRecord,
    ) -> CallToolResult {
        let (route, server, live) = match self.ready(name, downstream).await {
            Ok(ready) => ready,
            Err(NotReady {
                withheld: Some(server),
                message,
                ..
            }) => {
                record.routed(&server);
                record.withheld(&message);
                return error_result(message);
            }
            Err(not) => {
                record.unavailable(&not.detail, &not.message);
                return error_result(not.message);
            }
        };
        record.routed(&route.server);
        record.wrapped_as(&route.base);
        match self
            .approve(name, &route, &server, arguments.as_ref(), agent, downstream)
            .await
        {
            Approval::Run(note) => record.approval(note),
            Approval::Refused(refused) => {
                let answer = error_result(refused.message);
                record.refused(refused.outcome, refused.kind, &answer);
                return answer;
            }
        }
        let forward = Forward::new(name, &route, &server);
        let attempted = self
            .attempts(
                name,
                &route.target,
                &server,
                live,
                forward,
                arguments,
                downstream,
            )
            .await;
        record.attempted(attempted.attempts);
        let answer =
            super::native::to_agent(self.catalog().native(), &route.server, attempted.result);
        record.answered(&answer, attempted.failure.as_ref());
        answer
    }

    /// Sends a call again on the rmcp path after an attempt on session `generation` of
    /// `server` ended in [`Verdict::Retry`] with `e` (the fast path's lost or unwritable
    /// attempts): a new session, then the attempts [`Hub::call`] makes, with the retry already
    /// spent in `forward`. Returns the answer, the failure that ended the call when the
    /// companion made the answer, and the attempts sent (for the call's [`CallRecord`]).
    pub async fn resend(
        &self,
        name: &str,
        target: &Target,
        server: &ServerHandle,
        generation: u64,
        (forward, e): (Forward, &CallError),
        arguments: Option<JsonObject>,
    ) -> Attempted {
        match self
            .fresh_session(name, server, generation, &forward, e, None)
            .await
        {
            Ok(live) => {
                self.attempts(name, target, server, live, forward, arguments, None)
                    .await
            }
            Err(result) => Attempted {
                result,
                failure: Some(e.clone()),
                attempts: 0,
            },
        }
    }

    /// Attempts the call on `live`, and on a new session each time `forward` says
    /// [`Verdict::Retry`], until it answers.
    #[expect(
        clippy::too_many_arguments,
        reason = "one call's parts, borrowed from the two callers that hold them"
    )]
    async fn attempts(
        &self,
        name: &str,
        target: &Target,
        server: &ServerHandle,
        mut live: Arc<Live>,
        mut forward: Forward,
        arguments: Option<JsonObject>,
        downstream: Option<&Downstream>,
    ) -> Attempted {
        let mut attempts = 0;
        loop {
            attempts += 1;
            let attempt = call::call(
                &live.peer,
                &live.askers,
                target,
                forward.arguments(arguments.clone()),
                forward.clock(),
                downstream,
            )
            .await;
            let (result, failure) = match attempt {
                Ok(result) => (super::forward::masked(result), None),
                Err(e) => match forward.judge(&e) {
                    Verdict::Fail(answer) => (answer, Some(e)),
                    Verdict::Retry => {
                        match self
                            .fresh_session(name, server, live.generation, &forward, &e, downstream)
                            .await
                        {
                            Ok(fresh) => {
                                live = fresh;
                                continue;
                            }
                            Err(answer) => (answer, Some(e)),
                        }
                    }
                },
            };
            return Attempted {
                result,
                failure,
                attempts,
            };
        }
    }

    /// A session to send a retried call on, after session `generation` broke with `e`: the
    /// reconnect every caller that saw `generation` fail shares, or — when that fails (the
    /// server is down or backing off) — whatever a call for a restarting server waits for.
    async fn fresh_session(
        &self,
        name: &str,
        server: &ServerHandle,
        generation: u64,
        forward: &Forward,
        e: &CallError,
        downstream: Option<&Downstream>,
    ) -> Result<Arc<Live>, CallToolResult> {
        match server.reconnect(generation).await {
            Ok(fresh) => Ok(fresh),
            Err(why) => match self.ready(name, downstream).await {
                Ok((_, _, fresh)) => Ok(fresh),
                Err(not) => Err(forward.no_session(e, &why.to_string(), &not.message)),
            },
        }
    }

    /// The route of `name`, its server and a live session: at once when the server runs,
    /// after waiting (up to its `connectTimeout`) while it restarts, or why not.
    async fn ready(
        &self,
        name: &str,
        downstream: Option<&Downstream>,
    ) -> Result<(Route, ServerHandle, Arc<Live>), NotReady> {
        let mut views = self.view.clone();
        let mut deadline = None;
        loop {
            let view = views.borrow_and_update().clone();
            let catalog = view.catalog_for(self.profile().as_deref());
            let known = view.known_for(self.profile().as_deref());
            let listed = catalog.route(name);
            if listed.is_none()
                && let Some(server) = view.withheld(
                    self.profile().as_deref(),
                    crate::catalog::pin::Kind::Tool,
                    name,
                )
            {
                return Err(NotReady {
                    withheld: Some(server.clone()),
                    ..NotReady::plain(withheld_message(name, &server))
                });
            }
            let Some(route) = listed.or_else(|| known.get(name)).cloned() else {
                return Err(self.unknown_tool(name));
            };
            let Some(server) = view.servers.by_name.get(&route.server).cloned() else {
                return Err(NotReady::plain(format!(
                    "tool \"{name}\" is unavailable: server \"{}\" was removed from the config",
                    route.server
                )));
            };
            let mut snapshots = server.watch();
            let snapshot = snapshots.borrow_and_update().clone();
            let replacing = view.replacing.contains(&route.server);
            if let Some(live) = snapshot.live.filter(|_| !replacing) {
                if listed.is_none() && !offers(&live.listing, &route.target) {
                    // Back, and its new listing has no such capability.
                    return Err(NotReady::plain(format!(
                        "unknown tool \"{name}\" (server \"{}\" no longer offers it)",
                        route.server
                    )));
                }
                return Ok((route, server, live));
            }
            if !replacing && !coming_back(snapshot.status.state) {
                return Err(NotReady::of(&snapshot.status, |why| {
                    format!("tool \"{name}\" is unavailable: {why}")
                }));
            }
            let wait = server
                .config()
                .map_or(DEFAULT_CONNECT_TIMEOUT, |c| c.connect_timeout);
            let deadline = *deadline.get_or_insert_with(|| Instant::now() + wait);
            let cancelled = async {
                match downstream {
                    Some(d) => d.cancelled.cancelled().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = views.changed() => {}
                _ = snapshots.changed() => {}
                () = cancelled => return Err(NotReady::plain(CallError::Cancelled.to_string())),
                () = tokio::time::sleep_until(deadline) => {
                    return Err(NotReady::of(&snapshot.status, |why| {
                        format!("{why} (waited {} s for it; connectTimeout)", wait.as_secs())
                    }));
                }
            }
        }
    }

    /// "unknown tool X", plus why when the name looks like a tool of a server that is not
    /// running and never listed (a server that fails at start).
    fn unknown_tool(&self, name: &str) -> NotReady {
        let view = self.view();
        let down = view.servers.order.iter().find_map(|s| {
            if !view.profile_has_server(self.profile().as_deref(), s.name()) {
                return None;
            }
            let prefix = naming::sanitize(&format!("mcp_{}_", s.name()));
            let snapshot = s.snapshot();
            (name.starts_with(&prefix) && snapshot.live.is_none()).then_some(snapshot.status)
        });
        match down {
            Some(status) => NotReady::of(&status, |why| format!("unknown tool \"{name}\" ({why})")),
            None => NotReady::plain(format!("unknown tool \"{name}\"")),
        }
    }
}

/// What a call of the withheld tool `name` of `server` answers (`docs/src/trust.md`).
pub(super) fn withheld_message(name: &str, server: &str) -> String {
    format!(
        "tool \"{name}\" is withheld: server \"{server}\" changed or added it since the person approved its tools, and it waits for their approval (they can review and approve it with `mcp-companion trust {server}`)"
    )
}

/// Whether `listing` still has what `target` calls: a remembered route of a server that came
/// back is only good if the server still offers it.
fn offers(listing: &ServerListing, target: &Target) -> bool {
    match target {
        Target::Tool { name } => listing
            .tools
            .iter()
            .any(|t| t.name.as_ref() == name.as_str()),
        Target::Resource { uri } => listing.resources.iter().any(|r| r.uri == *uri),
        Target::ResourceTemplate { uri_template } => listing
            .resource_templates
            .iter()
            .any(|t| t.uri_template == *uri_template),
        Target::Prompt { name, .. } => listing.prompts.iter().any(|p| p.name == *name),
    }
}

/// Whether a server without a session in `state` is on its way back by itself: a call waits.
fn coming_back(state: ServerState) -> bool {
    match state {
        // `running` without a session: it is being torn down for a restart or reconnect.
        ServerState::Starting | ServerState::Backoff | ServerState::Running => true,
        ServerState::Stopped | ServerState::Failed | ServerState::NeedsSignIn => false,
    }
}

/// How a forwarded call ended ([`Hub::resend`] and the attempts behind [`Hub::call`]).
#[derive(Debug)]
pub struct Attempted {
    /// The agent's answer.
    pub result: CallToolResult,
    /// The failure that ended the call, when the companion made the answer.
    pub failure: Option<CallError>,
    /// How many attempts were sent to the server (or a send was tried).
    pub attempts: u32,
}

/// Why a server cannot take calls right now, e.g. "server \"x\" is restarting, next try in 3 s".
/// Why a call cannot be routed: `message` for the agent (with the server's last error, which
/// may be its stderr), `detail` for the activity log (the same without the server's words).
struct NotReady {
    message: String,
    detail: String,
    /// The server whose tool waits for the person's approval (pinning).
    withheld: Option<Arc<str>>,
}

impl NotReady {
    /// Words that are all the companion's own, for both.
    fn plain(text: String) -> NotReady {
        NotReady {
            detail: text.clone(),
            message: text,
            withheld: None,
        }
    }

    /// `render(why)`, where `why` says the server's state: with its last error for the agent,
    /// without it for the log.
    fn of(status: &ServerStatus, render: impl Fn(&str) -> String) -> NotReady {
        NotReady {
            message: render(&unavailable(status)),
            detail: render(&state_sentence(status)),
            withheld: None,
        }
    }
}

fn unavailable(status: &ServerStatus) -> String {
    let mut msg = state_sentence(status);
    if let Some(err) = &status.last_error {
        msg.push_str(": ");
        msg.push_str(err);
    }
    msg
}

/// The server's state in a sentence, without its last error.
fn state_sentence(status: &ServerStatus) -> String {
    match (status.state, status.retry_at_ms) {
        (ServerState::Backoff, Some(at)) => {
            let secs = at.saturating_sub(now_ms()).div_ceil(1000).max(1);
            format!(
                "server \"{}\" is restarting, next try in {secs} s",
                status.name
            )
        }
        (ServerState::Starting, _) => format!("server \"{}\" is starting", status.name),
        // A session is being torn down (a stop, or a loss before the restart is scheduled).
        (ServerState::Running, _) => format!("server \"{}\" has no session right now", status.name),
        (ServerState::NeedsSignIn, _) => format!("server \"{}\" needs a sign-in", status.name),
        (state, _) => format!("server \"{}\" is {}", status.name, state.as_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(state: ServerState, retry_in_ms: Option<u64>, error: Option<&str>) -> ServerStatus {
        ServerStatus {
            name: "x".into(),
            transport: "stdio".into(),
            state,
            last_error: error.map(str::to_owned),
            since_ms: 0,
            retry_at_ms: retry_in_ms.map(|ms| now_ms() + ms),
            pid: None,
            protocol: None,
            restarts: 0,
            tools: 0,
            waiting_approval: 0,
        }
    }

    #[test]
    fn the_log_detail_of_an_unroutable_call_leaves_out_the_servers_words() {
        let failed = status(
            ServerState::Failed,
            None,
            Some("last stderr: the secret input"),
        );
        let not = NotReady::of(&failed, |why| format!("tool \"t\" is unavailable: {why}"));
        assert_eq!(
            not.detail,
            "tool \"t\" is unavailable: server \"x\" is failed"
        );
        assert_eq!(
            not.message,
            "tool \"t\" is unavailable: server \"x\" is failed: last stderr: the secret input"
        );
    }

    #[test]
    fn unavailable_messages_say_what_is_happening() {
        assert_eq!(
            unavailable(&status(
                ServerState::Backoff,
                Some(2500),
                Some("process exited (exit code 3)")
            )),
            "server \"x\" is restarting, next try in 3 s: process exited (exit code 3)"
        );
        assert_eq!(
            unavailable(&status(ServerState::Stopped, None, None)),
            "server \"x\" is stopped"
        );
        assert_eq!(
            unavailable(&status(ServerState::Failed, None, Some("boom"))),
            "server \"x\" is failed: boom"
        );
        assert_eq!(
            unavailable(&status(ServerState::Starting, None, None)),
            "server \"x\" is starting"
        );
        assert_eq!(
            unavailable(&status(ServerState::Running, None, None)),
            "server \"x\" has no session right now"
        );
    }
}
