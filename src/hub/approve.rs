//! [`Hub::approve`]: whether a routed call may run — the one place the call policy is applied,
//! for both forwarding paths (the fast path hands every call that is not plainly `allow` to
//! [`Hub::call`], see [`Hub::fast_target`]).
//!
//! ```text
//! toolPolicy of the entry (toolPolicy.rs rule) ─ allow ──────────────▶ runs
//!        │                                       deny ───────────────▶ isError "denied by policy"
//!        │ no key matches                        ask ─┐
//!        ▼                                            ▼
//! destructiveHint: true, no readOnlyHint ─ yes ─▶ an approver attached? ─ yes ─▶ ask the person
//!        │ no                                         │ no                  ├ once / always ▶ runs
//!        ▼                                            │                     ├ deny ─────────▶ isError "declined"
//!      runs                                           │                     └ approvalTimeout ▶ isError "declined"
//!                                    explicit ask ◀───┴──▶ annotation default: runs, noted in the activity log
//!              isError "no approver attached" (it says what to do)
//! ```
//!
//! Why the two headless answers differ: an explicit `ask` is the person's instruction that
//! this tool must not run without them, so nobody there means no; the annotation default is
//! the server's own hint, and refusing every `destructiveHint` tool of a headless companion
//! (CI, a server without a desktop) would break what ran before the policy existed — so it
//! runs, and the activity log says it ran unasked. Approvers: the desktop app, in process,
//! and control-API clients (`mcp-companion approvals --watch`).
//!
//! Keys are matched against [`Route::policy_names`] (the upstream and default wrapped names),
//! so every view — a profile's naming included — decides the same. A call the person allows is
//! sent only if its tool is still served as it was when asked (same route, same fingerprint of
//! its served definition); else it is refused as withheld, or as changed while it waited.
//!
//! A refused call never reaches the server, and its answer is a tool result with `isError`
//! (never a JSON-RPC error); the question never goes to the agent.

use rmcp::model::JsonObject;

use super::Hub;
use super::approvals::{ARGUMENTS_FULL_MAX, Answer, Ask, Closed};
use crate::activity::Agent;
use crate::catalog::Route;
use crate::config::{DEFAULT_APPROVAL_TIMEOUT, Policy};
use crate::supervisor::ServerHandle;
use crate::upstream::call::{CallError, Downstream};

/// What [`Hub::approve`] decided.
#[derive(Debug)]
pub enum Approval {
    /// The call runs; with a note for the activity log when the person was asked, or when
    /// nobody could be.
    Run(Option<&'static str>),
    /// The call does not run.
    Refused(Refusal),
}

/// A call that does not run: what the agent and the activity log are told.
#[derive(Debug)]
pub struct Refusal {
    /// The activity log's outcome: `denied` (the policy), `declined` (the person, or nobody
    /// within the timeout), `cancelled` (the agent withdrew the call while it was asked).
    pub outcome: &'static str,
    /// The activity log's kind: `policy`, `no_approver`, `declined`, `approval_timeout`,
    /// `cancelled`.
    pub kind: &'static str,
    /// The agent's `isError` text.
    pub message: String,
}

/// Why a call's policy is what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// A `toolPolicy` key of the entry.
    Config,
    /// No key matches; from the tool's annotations.
    Annotation,
}

/// The policy of a call along `route` on `server`, and where it comes from: the entry's
/// `toolPolicy` matched against [`Route::policy_names`], whatever name the caller's view
/// serves the tool under.
pub fn policy_of(route: &Route, server: &ServerHandle) -> (Policy, Source) {
    let configured = server
        .config()
        .and_then(|c| c.tool_policy.decide(&route.policy_names()));
    match configured {
        Some(policy) => (policy, Source::Config),
        None if route.destructive => (Policy::Ask, Source::Annotation),
        None => (Policy::Allow, Source::Annotation),
    }
}

impl Hub {
    /// Applies the call policy to the call of `wrapped` along `route` (module doc): at once
    /// for `allow` and `deny`, after the person's answer for `ask`. Waits at most the entry's
    /// `approvalTimeout`; ends early when the agent cancels the call (`downstream`), or when
    /// the future is dropped (the fast path's cancel), withdrawing the ask.
    pub(super) async fn approve(
        &self,
        wrapped: &str,
        route: &Route,
        server: &ServerHandle,
        arguments: Option<&JsonObject>,
        agent: &(dyn Fn() -> Agent + Sync),
        downstream: Option<&Downstream>,
    ) -> Approval {
        let (policy, source) = policy_of(route, server);
        let tool = route.tool_name();
        let s = &route.server;
        match (policy, source) {
            (Policy::Allow, _) => return Approval::Run(None),
            (Policy::Deny, _) => {
                return Approval::Refused(Refusal {
                    outcome: "denied",
                    kind: "policy",
                    message: format!(
                        "the person's policy denies tool \"{tool}\" of server \"{s}\" (toolPolicy \"deny\"): it was not run"
                    ),
                });
            }
            (Policy::Ask, _) if self.approvals.present() => {}
            (Policy::Ask, Source::Config) => {
                return Approval::Refused(Refusal {
                    outcome: "denied",
                    kind: "no_approver",
                    message: format!(
                        "tool \"{tool}\" of server \"{s}\" needs the person's approval (toolPolicy \"ask\") and nobody is there to ask: it was not run. The person can open the MCP Companion desktop app or run `mcp-companion approvals --watch`, or allow the tool with `mcp-companion policy {s} {} allow`",
                        crate::config::exact_key(tool)
                    ),
                });
            }
            (Policy::Ask, Source::Annotation) => {
                tracing::info!(server = %s, tool, "destructive tool called with no approver attached: runs unasked (annotation default)");
                return Approval::Run(Some("ran unasked: destructiveHint, no approver attached"));
            }
        }
        let timeout = server
            .config()
            .map_or(DEFAULT_APPROVAL_TIMEOUT, |c| c.approval_timeout);
        let who = agent();
        let (preview, full) = shown_arguments(arguments);
        let ask = Ask {
            id: 0,
            server: s.to_string(),
            tool: tool.to_owned(),
            wrapped: wrapped.to_owned(),
            policy_names: route
                .policy_names()
                .into_iter()
                .map(str::to_owned)
                .collect(),
            agent: who.name.map(|n| crate::net::scrub_known(&n)),
            agent_version: who.version.map(|v| crate::net::scrub_known(&v)),
            agent_pid: who.pid,
            arguments: preview,
            arguments_full: full,
            reason: match source {
                Source::Config => "policy",
                Source::Annotation => "annotation",
            }
            .to_owned(),
            timeout_s: timeout.as_secs(),
        };
        let shown = self.served_fingerprint(wrapped, route);
        tracing::info!(server = %s, tool, "asking the person to approve the call");
        let cancelled = async {
            match downstream {
                Some(d) => d.cancelled.cancelled().await,
                None => std::future::pending().await,
            }
        };
        let answered = tokio::select! {
            answered = self.approvals.ask(ask, timeout) => answered,
            () = cancelled => (Answer::Deny, Closed::Withdrawn),
        };
        tracing::info!(server = %s, tool, outcome = ?answered.1, "approval answered");
        match answered {
            (Answer::Once | Answer::Always, _) => match self.changed_since(wrapped, route, shown) {
                Some(refused) => Approval::Refused(refused),
                None => Approval::Run(Some("approved by the person")),
            },
            // A stop of the companion ends the agent's session too: said as the stop it is.
            (_, Closed::Withdrawn) if downstream.is_some_and(|d| d.shutdown.is_cancelled()) => {
                Approval::Refused(Refusal {
                    outcome: "error",
                    kind: "shutting_down",
                    message: CallError::ShuttingDown.to_string(),
                })
            }
            (_, Closed::Withdrawn) => Approval::Refused(Refusal {
                outcome: "cancelled",
                kind: "cancelled",
                message: CallError::Cancelled.to_string(),
            }),
            (_, Closed::TimedOut) => Approval::Refused(Refusal {
                outcome: "declined",
                kind: "approval_timeout",
                message: format!(
                    "the person did not answer the approval request for tool \"{tool}\" of server \"{s}\" within {} s, so it was declined: it was not run",
                    timeout.as_secs()
                ),
            }),
            _ => Approval::Refused(Refusal {
                outcome: "declined",
                kind: "declined",
                message: format!(
                    "the person declined the call of tool \"{tool}\" of server \"{s}\": it was not run"
                ),
            }),
        }
    }
}

impl Hub {
    /// The fingerprint of the tool `wrapped` as this view serves it along `route` now
    /// (`catalog::pin`, over the served definition); `None` when it is not served so.
    fn served_fingerprint(&self, wrapped: &str, route: &Route) -> Option<String> {
        let catalog = self.catalog();
        let now = catalog.route(wrapped)?;
        if now.server != route.server || now.target != route.target {
            return None;
        }
        catalog
            .tool(wrapped)
            .map(|t| crate::catalog::pin::pin_tool(t).fingerprint)
    }

    /// Why an approved call must not run after all: the tool was withheld, left, or changed
    /// its definition while the person was asked (`shown`, its fingerprint then). `None`
    /// when it is served as it was.
    fn changed_since(
        &self,
        wrapped: &str,
        route: &Route,
        shown: Option<String>,
    ) -> Option<Refusal> {
        if shown.is_some() && self.served_fingerprint(wrapped, route) == shown {
            return None;
        }
        let view = self.view();
        let withheld = view.withheld(
            self.profile().as_deref(),
            crate::catalog::pin::Kind::Tool,
            wrapped,
        );
        let s = &route.server;
        let message = match withheld {
            Some(server) => super::ready::withheld_message(wrapped, &server),
            None => format!(
                "tool \"{}\" of server \"{s}\" changed or left while the call waited for the person's approval: it was not run (call it again to be asked about it as it is now)",
                route.tool_name()
            ),
        };
        Some(Refusal {
            outcome: "withheld",
            kind: "withheld",
            message,
        })
    }
}

/// The arguments as the person sees them: indented JSON with known secrets masked, as a
/// preview capped at 1 KiB, and whole (up to [`ARGUMENTS_FULL_MAX`]) when the preview was cut.
fn shown_arguments(arguments: Option<&JsonObject>) -> (String, Option<String>) {
    let text = match arguments {
        Some(a) => serde_json::to_string_pretty(a).unwrap_or_default(),
        None => "(none)".to_owned(),
    };
    let masked = crate::net::scrub_known(&text);
    let preview = crate::net::capped(&masked);
    if preview.len() == masked.len() {
        return (masked, None);
    }
    let preview = preview.into_owned();
    let full = crate::net::capped_at(&masked, ARGUMENTS_FULL_MAX).into_owned();
    (preview, Some(full))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_arguments_keep_a_short_preview_and_come_whole_on_demand_with_secrets_masked() {
        let secret = "approve-test-secret-4b1d9";
        crate::net::remember_credential(secret);
        let long = "x".repeat(3000);
        let args: JsonObject = serde_json::from_value(serde_json::json!({
            "body": format!("{long} {secret} end-of-body"),
        }))
        .expect("object");
        let (preview, full) = shown_arguments(Some(&args));
        assert!(preview.len() < 1200, "{}", preview.len());
        assert!(preview.contains("bytes in all"), "{preview}");
        let full = full.expect("the whole arguments, since the preview was cut");
        assert!(
            full.contains(&long) && full.contains("end-of-body"),
            "{full}"
        );
        assert!(
            !full.contains(secret) && full.contains("<redacted>"),
            "{full}"
        );

        let short: JsonObject =
            serde_json::from_value(serde_json::json!({"token": secret})).expect("object");
        let (preview, full) = shown_arguments(Some(&short));
        assert_eq!(full, None, "a whole preview needs no second copy");
        assert!(!preview.contains(secret), "{preview}");
    }

    #[test]
    fn whole_arguments_are_capped_far_above_the_preview() {
        let args: JsonObject = serde_json::from_value(serde_json::json!({
            "body": "y".repeat(ARGUMENTS_FULL_MAX + 10),
        }))
        .expect("object");
        let (_, full) = shown_arguments(Some(&args));
        let full = full.expect("cut preview");
        assert!(full.len() < ARGUMENTS_FULL_MAX + 64, "{}", full.len());
        assert!(
            full.ends_with("bytes in all)"),
            "{}",
            &full[full.len() - 40..]
        );
    }
}
