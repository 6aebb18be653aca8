//! A refused control request: the stable kind scripts match on and the human message, and
//! which kind each of the hub's and config's errors becomes.

use serde::{Deserialize, Serialize};

use crate::hub::HubError;

/// Why the companion refused a request: a stable, machine-readable kind (scripts match on it;
/// it never changes for a given cause) next to the human message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ErrorKind {
    /// The line was not a JSON request this companion knows.
    BadRequest,
    /// The line was longer than the request limit (64 KiB).
    TooLong,
    /// No server has that name.
    UnknownServer,
    /// The server's config entry is invalid, so it cannot run.
    InvalidEntry,
    /// The companion is shutting down.
    ShuttingDown,
    /// `reload` on a companion started without a config file.
    NoConfigFile,
    /// `reload`: the config file does not load; nothing was changed.
    InvalidConfig,
    /// `show` on a companion that has no window (`mcp-companion serve`).
    NoWindow,
    /// `login`/`logout`: the server does not sign in with OAuth (not streamable HTTP), or the
    /// sign-in could not start or finish; the message quotes the authorization server.
    SignIn,
    /// `agentProfile`: no connected agent session has that id.
    UnknownAgent,
    /// `agentProfile`: no valid profile has that name.
    UnknownProfile,
    /// The companion already serves as many control connections as it allows
    /// ([`crate::control::MAX_CONTROL_CONNECTIONS`]); the connection is closed.
    Busy,
    /// `approve`: no waiting call has that id (answered, timed out, or withdrawn).
    NotWaiting,
    /// `approve` with `always`: the call was allowed once, but the config could not be
    /// written; the message says why.
    PolicyNotSaved,
    /// Anything else (a bug): the message says what.
    Internal,
}

/// A refused request, as it travels on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct Refusal {
    /// The stable kind.
    pub kind: ErrorKind,
    /// The human message, e.g. `no server named "tiem"`.
    pub message: String,
}

impl Refusal {
    /// A refusal of `kind` saying `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Refusal {
        Refusal {
            kind,
            message: message.into(),
        }
    }
}

impl From<crate::config::UnknownServer> for Refusal {
    fn from(e: crate::config::UnknownServer) -> Refusal {
        Refusal::new(ErrorKind::UnknownServer, e.to_string())
    }
}

impl From<crate::hub::AgentError> for Refusal {
    fn from(e: crate::hub::AgentError) -> Refusal {
        let kind = match e {
            crate::hub::AgentError::UnknownAgent(_) => ErrorKind::UnknownAgent,
            crate::hub::AgentError::UnknownProfile(_) => ErrorKind::UnknownProfile,
        };
        Refusal::new(kind, e.to_string())
    }
}

impl From<HubError> for Refusal {
    fn from(e: HubError) -> Refusal {
        let kind = match e {
            HubError::UnknownServer { .. } => ErrorKind::UnknownServer,
            HubError::InvalidEntry { .. } => ErrorKind::InvalidEntry,
            HubError::ShuttingDown => ErrorKind::ShuttingDown,
        };
        Refusal::new(kind, e.to_string())
    }
}
