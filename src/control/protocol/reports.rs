//! The answers the control API gives, one type per kind of request (`status`, `trust`,
//! `login`, `approvals`, …), as they travel inside a reply's `result`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::supervisor::ServerStatus;

/// The `approvals` answer: the calls waiting for the person, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalsReport {
    /// The open asks.
    pub open: Vec<crate::hub::Ask>,
}

/// The `approve` answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApproveReport {
    /// The ask that was answered, as it was shown.
    pub approved: crate::hub::Ask,
    /// Whether `allow` was written into the config for the tool (`always`).
    pub policy_written: bool,
}

/// The `agents` answer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentsReport {
    /// Every connected agent session, oldest first.
    pub agents: Vec<crate::hub::AgentStatus>,
}

/// The `trust` answer: per server with something waiting (or just approved), the tools.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TrustReport {
    /// Whether the listed tools were approved (else they still wait).
    pub approved: bool,
    /// Per server, in name order.
    pub servers: Vec<TrustServer>,
}

/// One server in a [`TrustReport`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrustServer {
    /// The server name.
    pub server: String,
    /// Its withheld tools, with the approved and the listed definition.
    pub tools: Vec<crate::catalog::pin::Waiting>,
}

/// The first `login` answer: where the browser was sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignInStarted {
    /// The authorization URL (no secret in it).
    pub url: String,
    /// Whether a browser was started on it; if not, the user opens the URL.
    pub browser_opened: bool,
}

/// The second `login` answer: the tokens are stored and the server restarts with them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignedIn {
    /// Always `true`.
    pub signed_in: bool,
}

/// The `logout` answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoggedOut {
    /// Whether there was a stored sign-in to forget.
    pub forgotten: bool,
}

/// The `status` answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatusReport {
    /// Process id of the companion.
    pub pid: u32,
    /// Companion version.
    pub version: String,
    /// The MCP socket agents connect to.
    pub socket: PathBuf,
    /// The config file in use, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<PathBuf>,
    /// Every server, in config order.
    pub servers: Vec<ServerStatus>,
    /// The warnings of the config in effect (unknown keys, [`crate::hub::Hub::config_warnings`]);
    /// absent from the JSON when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The activity log, when it records; absent when it is off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activity: Option<ActivityStatus>,
    /// The config's profiles, in config order; absent from the JSON when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<crate::hub::ProfileStatus>,
    /// The OpenTelemetry export, when the config names an endpoint; absent when it names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<TelemetryStatus>,
}

/// The OpenTelemetry export in a [`StatusReport`], as the companion set it up at its start.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TelemetryStatus {
    /// The collector's base URL, redacted (scheme, host and port).
    pub endpoint: String,
    /// Why export is off although the config asks for it (its settings could not be expanded,
    /// the exporter refused them, the SSRF guard refused the endpoint), known secrets masked;
    /// absent while it exports. Export failures after the start are in the log only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The activity log in a [`StatusReport`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActivityStatus {
    /// The database file.
    pub path: PathBuf,
    /// Entries dropped since the start because the log's queue was full.
    pub dropped: u64,
}

/// The `logs` answer: stderr lines, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogLines {
    /// The lines, without their newline.
    pub lines: Vec<String>,
}

/// The answer of a command that has nothing to report (`{}` on the wire).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Done {}
