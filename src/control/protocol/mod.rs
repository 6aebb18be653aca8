//! The control API's messages, shared by the server ([`super::serve`]) and every client
//! ([`super::ControlClient`], the CLI, the tests): one [`ControlRequest`] per line in, one
//! [`Reply`] per line out.
//!
//! ```text
//! reply   = {"ok":true,"result":RESULT} | {"ok":false,"kind":KIND,"error":MESSAGE}
//! RESULT  = StatusReport | LogLines | ReloadReport | TrustReport | {}       (which one follows from the request)
//! KIND    = badRequest | tooLong | unknownServer | invalidEntry | shuttingDown | noConfigFile
//!         | invalidConfig | noWindow | signIn | busy | notWaiting | policyNotSaved
//!         | unknownAgent | unknownProfile | internal
//! ```
//!
//! This file owns the requests, the successful answer and the reply line; `reports.rs` the
//! answer types, `refusal.rs` the refusal and its kinds.

use serde::{Deserialize, Serialize};

use crate::hub::ReloadReport;

mod refusal;
mod reports;

pub use self::refusal::{ErrorKind, Refusal};
pub use self::reports::{
    ActivityStatus, AgentsReport, ApprovalsReport, ApproveReport, Done, LogLines, LoggedOut,
    SignInStarted, SignedIn, StatusReport, TelemetryStatus, TrustReport, TrustServer,
};

/// The `environment` answer (computed by `launch`, which owns what a child inherits).
pub use crate::launch::inherited::ChildEnvironment;

/// A control request. Adding a verb: a variant here, its [`ControlResponse`] variant in
/// [`ControlRequest::parse_result`], and its arm in the server's `handle`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "lowercase")]
pub enum ControlRequest {
    /// Every server's status plus the companion's pid and version → [`ControlResponse::Status`].
    Status,
    /// The last `lines` stderr lines of `server`; with `follow`, then every new line as it is
    /// written → [`ControlResponse::Logs`], once or (following) once per batch.
    Logs {
        /// Server name.
        server: String,
        /// How many lines (default 100).
        #[serde(default = "default_lines")]
        lines: usize,
        /// Keep streaming new lines.
        #[serde(default)]
        follow: bool,
    },
    /// Start `server` (forgetting past failures) → [`ControlResponse::Done`].
    Start {
        /// Server name.
        server: String,
    },
    /// Stop `server` and wait until its processes are gone → [`ControlResponse::Done`].
    Stop {
        /// Server name.
        server: String,
    },
    /// Stop and start `server` → [`ControlResponse::Done`].
    Restart {
        /// Server name.
        server: String,
    },
    /// Re-read the config file and apply the differences → [`ControlResponse::Reloaded`].
    Reload,
    /// Bring up the desktop window (a second launch of the app without D-Bus asks this)
    /// → [`ControlResponse::Done`]; `serve` refuses it.
    Show,
    /// What children inherit from this companion → [`ControlResponse::Environment`], so
    /// `doctor` plans with the companion's environment instead of its caller's.
    Environment,
    /// Sign `server` in with OAuth → [`ControlResponse::SignIn`] at once (the authorization
    /// URL), then, on the same connection, [`ControlResponse::SignedIn`] or a refusal when it
    /// finished (see `control::login`).
    Login {
        /// Server name.
        server: String,
    },
    /// Forget `server`'s OAuth tokens and client registration → [`ControlResponse::LoggedOut`].
    Logout {
        /// Server name.
        server: String,
    },
    /// The tools withheld until the person approves them, of `server` (every server when
    /// absent); with `approve`, approve them too → [`ControlResponse::Trust`].
    Trust {
        /// Server name; every server when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        server: Option<String>,
        /// Approve what waits (else only show it).
        #[serde(default)]
        approve: bool,
        /// With `approve`: only the waiting definitions with these fingerprints (what the
        /// person was shown); others keep waiting.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expect: Option<Vec<String>>,
    },
    /// The calls waiting for the person's approval → [`ControlResponse::Approvals`]; with
    /// `watch`, the connection is an approver from then on (calls that `ask` wait for an
    /// answer instead of being refused) and gets one [`ControlResponse::Approval`] per event,
    /// until it hangs up.
    Approvals {
        /// Stay attached and stream the events.
        #[serde(default)]
        watch: bool,
    },
    /// Answers the waiting call `id` → [`ControlResponse::Approved`]; `always` also writes
    /// `allow` for the tool into the config file.
    Approve {
        /// The ask's id.
        id: u64,
        /// `once`, `always` or `deny`.
        answer: crate::hub::Answer,
    },
    /// Every connected agent session → [`ControlResponse::Agents`].
    Agents,
    /// The `tools/list` JSON of the default view, each profile and each server
    /// → [`ControlResponse::Listings`] (what `tools --tokens` measures).
    Listings,
    /// Sets connected session `id`'s profile for as long as it stays connected (`profile`
    /// absent: everything); its agent gets `list_changed` → [`ControlResponse::Done`].
    #[serde(rename = "agentProfile")]
    AgentProfile {
        /// The session, as `agents` numbers it.
        id: u64,
        /// A valid profile's name; absent: the default view.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        profile: Option<String>,
    },
}

fn default_lines() -> usize {
    100
}

/// A successful control answer, one variant per kind of request.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ControlResponse {
    /// Answer to `status`.
    Status(StatusReport),
    /// Answer to `logs` (one per batch when following).
    Logs(LogLines),
    /// Answer to `reload`.
    Reloaded(ReloadReport),
    /// Answer to `environment`.
    Environment(ChildEnvironment),
    /// Answer to `start`, `stop`, `restart`, `show`.
    Done(Done),
    /// First answer to `login`.
    SignIn(SignInStarted),
    /// Second answer to `login`.
    SignedIn(SignedIn),
    /// Answer to `trust`.
    Trust(TrustReport),
    /// Answer to `logout`.
    LoggedOut(LoggedOut),
    /// First answer to `approvals`.
    Approvals(ApprovalsReport),
    /// Each later answer to a watching `approvals`.
    Approval(crate::hub::ApprovalEvent),
    /// Answer to `approve`.
    Approved(ApproveReport),
    /// Answer to `agents`.
    Agents(AgentsReport),
    /// Answer to `listings`.
    Listings(crate::hub::Listings),
}

impl ControlRequest {
    /// How long a client waits for the first answer ([`crate::ipc::quick`]): the quick-answer
    /// bound for requests the companion answers from its own state (`status`, `show`,
    /// `environment`, `trust` without approving, `logs`: the first batch when following); for
    /// `reload`, the longest it waits for changed servers to start
    /// ([`crate::hub::RELOAD_SETTLE`]) plus that bound; `None` for requests that wait on
    /// servers, a browser or a person. A companion that accepts connections but never answers
    /// (stopped with SIGSTOP, wedged) is reported instead of hanging the caller.
    pub fn answer_bound(&self) -> Option<std::time::Duration> {
        let quick = crate::ipc::quick::bound();
        match self {
            ControlRequest::Status
            | ControlRequest::Show
            | ControlRequest::Environment
            | ControlRequest::Logs { .. } => Some(quick),
            ControlRequest::Trust { approve, .. } => (!approve).then_some(quick),
            ControlRequest::Reload => Some(crate::hub::RELOAD_SETTLE + quick),
            _ => None,
        }
    }

    /// Reads the `result` of a successful answer to this request.
    ///
    /// # Errors
    /// The serde error when `result` does not have this request's answer shape.
    pub fn parse_result(
        &self,
        result: serde_json::Value,
    ) -> Result<ControlResponse, serde_json::Error> {
        Ok(match self {
            ControlRequest::Status => ControlResponse::Status(serde_json::from_value(result)?),
            ControlRequest::Logs { .. } => ControlResponse::Logs(serde_json::from_value(result)?),
            ControlRequest::Reload => ControlResponse::Reloaded(serde_json::from_value(result)?),
            ControlRequest::Environment => {
                ControlResponse::Environment(serde_json::from_value(result)?)
            }
            // `login` answers twice: the URL, then `{"signedIn":true}`.
            ControlRequest::Login { .. } => match serde_json::from_value(result.clone()) {
                Ok(done) => ControlResponse::SignedIn(done),
                Err(_) => ControlResponse::SignIn(serde_json::from_value(result)?),
            },
            ControlRequest::Logout { .. } => {
                ControlResponse::LoggedOut(serde_json::from_value(result)?)
            }
            ControlRequest::Trust { .. } => ControlResponse::Trust(serde_json::from_value(result)?),
            // A watch answers with the open asks, then one event per line.
            ControlRequest::Approvals { .. } => match serde_json::from_value(result.clone()) {
                Ok(event) => ControlResponse::Approval(event),
                Err(_) => ControlResponse::Approvals(serde_json::from_value(result)?),
            },
            ControlRequest::Approve { .. } => {
                ControlResponse::Approved(serde_json::from_value(result)?)
            }
            ControlRequest::Agents => ControlResponse::Agents(serde_json::from_value(result)?),
            ControlRequest::Listings => ControlResponse::Listings(serde_json::from_value(result)?),
            ControlRequest::Start { .. }
            | ControlRequest::AgentProfile { .. }
            | ControlRequest::Stop { .. }
            | ControlRequest::Restart { .. }
            | ControlRequest::Show => ControlResponse::Done(Done {}),
        })
    }
}

/// One answer line.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Reply {
    pub(super) ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) result: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) kind: Option<ErrorKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) error: Option<String>,
}

impl Reply {
    pub(super) fn from_outcome(outcome: Result<ControlResponse, Refusal>) -> Reply {
        let outcome = outcome.and_then(|r| {
            serde_json::to_value(r).map_err(|e| Refusal::new(ErrorKind::Internal, e.to_string()))
        });
        match outcome {
            Ok(result) => Reply {
                ok: true,
                result: Some(result),
                kind: None,
                error: None,
            },
            Err(refusal) => Reply {
                ok: false,
                result: None,
                kind: Some(refusal.kind),
                error: Some(refusal.message),
            },
        }
    }

    /// The answer as the client sees it: the raw result, or the refusal.
    pub(super) fn into_outcome(self) -> Result<serde_json::Value, Refusal> {
        match self {
            Reply {
                ok: true, result, ..
            } => Ok(result.unwrap_or(serde_json::Value::Null)),
            Reply { kind, error, .. } => Err(Refusal {
                kind: kind.unwrap_or(ErrorKind::Internal),
                message: error.unwrap_or_else(|| "unknown error".into()),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::HubError;

    #[test]
    fn requests_and_refusals_keep_their_wire_shape() {
        let cases = [
            (ControlRequest::Status, r#"{"method":"status"}"#),
            (ControlRequest::Reload, r#"{"method":"reload"}"#),
            (
                ControlRequest::Stop { server: "t".into() },
                r#"{"method":"stop","server":"t"}"#,
            ),
            (
                ControlRequest::Trust {
                    server: Some("t".into()),
                    approve: true,
                    expect: None,
                },
                r#"{"method":"trust","server":"t","approve":true}"#,
            ),
            (
                ControlRequest::Approvals { watch: true },
                r#"{"method":"approvals","watch":true}"#,
            ),
            (
                ControlRequest::Approve {
                    id: 3,
                    answer: crate::hub::Answer::Always,
                },
                r#"{"method":"approve","id":3,"answer":"always"}"#,
            ),
        ];
        for (req, wire) in cases {
            assert_eq!(serde_json::to_string(&req).unwrap(), wire);
            assert_eq!(serde_json::from_str::<ControlRequest>(wire).unwrap(), req);
        }
        let logs: ControlRequest =
            serde_json::from_str(r#"{"method":"logs","server":"t"}"#).unwrap();
        assert_eq!(
            logs,
            ControlRequest::Logs {
                server: "t".into(),
                lines: 100,
                follow: false
            }
        );
        let refused = Reply::from_outcome(Err(HubError::from(crate::config::UnknownServer::new(
            "x",
        ))
        .into()));
        assert_eq!(
            serde_json::to_string(&refused).unwrap(),
            r#"{"ok":false,"kind":"unknownServer","error":"no server named \"x\""}"#
        );
    }

    #[test]
    fn a_watch_reads_the_open_asks_then_events() {
        let watch = ControlRequest::Approvals { watch: true };
        assert_eq!(
            watch.parse_result(serde_json::json!({"open": []})).unwrap(),
            ControlResponse::Approvals(ApprovalsReport::default())
        );
        assert_eq!(
            watch
                .parse_result(
                    serde_json::json!({"event": "closed", "id": 2, "outcome": "timedOut"})
                )
                .unwrap(),
            ControlResponse::Approval(crate::hub::ApprovalEvent::Closed {
                id: 2,
                outcome: crate::hub::approvals::Closed::TimedOut
            })
        );
    }

    #[test]
    fn a_result_is_read_in_the_shape_its_request_asks_for() {
        let logs = ControlRequest::Logs {
            server: "t".into(),
            lines: 1,
            follow: false,
        };
        assert_eq!(
            logs.parse_result(serde_json::json!({"lines": ["a"]}))
                .unwrap(),
            ControlResponse::Logs(LogLines {
                lines: vec!["a".into()]
            })
        );
        assert!(
            ControlRequest::Status
                .parse_result(serde_json::json!({"lines": []}))
                .is_err()
        );
    }
}
