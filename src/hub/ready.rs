//! The route, server and live session of a call: at once when the server runs, after waiting
//! (up to its `connectTimeout`) while it restarts, or why not ([`NotReady`]): removed, stopped,
//! failed, needing sign-in, withheld for approval, or an unknown tool.

use std::sync::Arc;

use tokio::time::Instant;

use super::Hub;
use crate::catalog::{Route, ServerListing, Target, naming};
use crate::config::DEFAULT_CONNECT_TIMEOUT;
use crate::supervisor::{Live, ServerHandle, ServerState, ServerStatus, now_ms};
use crate::upstream::call::{CallError, Downstream};

impl Hub {
    /// The route of `name`, its server and a live session: at once when the server runs,
    /// after waiting (up to its `connectTimeout`) while it restarts, or why not.
    pub(super) async fn ready(
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

/// Why a server cannot take calls right now, e.g. "server \"x\" is restarting, next try in 3 s".
/// Why a call cannot be routed: `message` for the agent (with the server's last error, which
/// may be its stderr), `detail` for the activity log (the same without the server's words).
pub(super) struct NotReady {
    pub(super) message: String,
    pub(super) detail: String,
    /// The server whose tool waits for the person's approval (pinning).
    pub(super) withheld: Option<Arc<str>>,
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
    if let Some(secs) = status.retry_in_secs(now_ms()) {
        // Due now: the start is about to happen, not "in 0 s".
        return format!(
            "server \"{}\" is restarting, next try in {} s",
            status.name,
            secs.max(1)
        );
    }
    match status.state {
        ServerState::Starting => format!("server \"{}\" is starting", status.name),
        // A session is being torn down (a stop, or a loss before the restart is scheduled).
        ServerState::Running => format!("server \"{}\" has no session right now", status.name),
        ServerState::NeedsSignIn => format!("server \"{}\" needs a sign-in", status.name),
        state => format!("server \"{}\" is {}", status.name, state.as_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(state: ServerState, retry_in_ms: Option<u64>, error: Option<&str>) -> ServerStatus {
        ServerStatus {
            last_error: error.map(str::to_owned),
            retry_at_ms: retry_in_ms.map(|ms| now_ms() + ms),
            ..ServerStatus::new("x", "stdio", state)
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
