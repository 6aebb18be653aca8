//! The control API (DESIGN §10): a second local socket, `control.sock`, with the same
//! permissions as the MCP socket, that the CLI (and scripts) use to drive a running companion.
//!
//! Wire format: one JSON object per line each way (requests longer than 64 KiB are refused
//! while being read); every request gets exactly one answer line, except `logs` with
//! `"follow": true`, which sends a batch whenever the server writes to stderr, until the
//! client hangs up. A refusal carries a stable `kind` ([`ErrorKind`]) beside its message.
//!
//! ```text
//! → {"method":"status"}
//! ← {"ok":true,"result":{"pid":1234,"version":"0.1.0","socket":"…","servers":[{"name":"time","state":"running",…}]}}
//! → {"method":"start","server":"time"}            (also "stop", "restart")
//! ← {"ok":true,"result":{}}
//! → {"method":"reload"}
//! ← {"ok":true,"result":{"added":["git"],"removed":[],"changed":[],"unchanged":["time"]}}
//! → {"method":"logs","server":"time","lines":50,"follow":true}
//! ← {"ok":true,"result":{"lines":["…"]}}          (then one {"ok":true,"result":{"lines":[…]}} per batch)
//! → {"method":"show"}                           (the desktop app shows its window; `serve` refuses)
//! ← {"ok":true,"result":{}}
//! → {"method":"environment"}
//! ← {"ok":true,"result":{"pid":1234,"vars":{"PATH":"…","SSL_CERT_FILE":"…"},"gui":null}}
//! → {"method":"login","server":"linear"}      (see `control::login`: two answers)
//! ← {"ok":true,"result":{"url":"https://…/authorize?…","browserOpened":true}}
//! ← {"ok":true,"result":{"signedIn":true}}
//! → {"method":"trust","server":"files","approve":true}   (without "approve": only list; no "server": all)
//! ← {"ok":true,"result":{"approved":true,"servers":[{"server":"files","tools":[{"tool":"read","approved":{…},"listed":{…}}]}]}}
//! → {"method":"approvals","watch":true}      (an approver from now on; without "watch": the list once)
//! ← {"ok":true,"result":{"open":[]}}
//! ← {"ok":true,"result":{"event":"asked","id":1,"server":"files","tool":"delete","wrapped":"mcp_files_delete","agent":"cursor","arguments":"{…}","reason":"policy","timeoutS":60}}
//! ← {"ok":true,"result":{"event":"closed","id":1,"outcome":"allowed"}}
//! → {"method":"approve","id":1,"answer":"once"}   (on another connection; also "always", "deny")
//! ← {"ok":true,"result":{"approved":{"id":1,…},"policyWritten":false}}
//! → {"method":"stop","server":"tiem"}
//! ← {"ok":false,"kind":"unknownServer","error":"no server named \"tiem\""}
//! ```
//!
//! | file | owns |
//! |---|---|
//! | `protocol/` | [`ControlRequest`], [`ControlResponse`], [`ErrorKind`]: the shared message types |
//! | `server.rs` | [`serve`]: sessions, the verb handlers, `logs --follow` |
//! | `client.rs` | [`ControlClient`], [`request`], [`status`] |
//! | `approvals.rs` | `approvals --watch` (an attached approver) and `approve`: the person's answers to calls that `ask` |
//! | `lines.rs` | reading lines with the length limit enforced while reading |
//! | [`login`] | `login` / `logout`: the OAuth sign-in of a remote server, driven from a client |

mod approvals;
mod client;
mod lines;
pub mod login;
mod protocol;
mod server;

use std::path::PathBuf;
use std::time::Duration;

use crate::hub::Hub;

pub use client::{ControlClient, ControlError, request, status};
pub use protocol::{
    ActivityStatus, ApprovalsReport, ApproveReport, ChildEnvironment, ControlRequest,
    ControlResponse, Done, ErrorKind, LogLines, LoggedOut, Refusal, SignInStarted, SignedIn,
    StatusReport, TelemetryStatus, TrustReport, TrustServer,
};
pub use server::{serve, session};

/// Longest request line accepted, in bytes.
pub const MAX_REQUEST_BYTES: usize = 64 * 1024;

/// Control connections served at once, at most (a lower descriptor limit lowers it:
/// [`crate::ipc::descriptors`]; the CLI and the desktop window use one each, briefly;
/// `logs --follow` holds one).
pub const MAX_CONTROL_CONNECTIONS: usize = 64;

/// How long writing one control reply may take before the connection is closed (30 s): a
/// client that stops reading (e.g. a stalled `logs --follow`) does not keep its session.
pub const CONTROL_WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// What the control API serves.
#[derive(Clone, Debug)]
pub struct ControlContext {
    /// The hub to drive.
    pub hub: Hub,
    /// The MCP socket (reported by `status`).
    pub mcp_socket: PathBuf,
    /// The config file `reload` re-reads; `None` refuses reloads.
    pub config_path: Option<PathBuf>,
    /// What `show` runs.
    pub show_window: ShowWindow,
    /// The OpenTelemetry export as it was set up (reported by `status`); `None`: not asked for.
    pub telemetry: Option<TelemetryStatus>,
}

/// What `show` runs: set once by the desktop shell; `serve` has none.
#[derive(Clone, Default)]
pub struct ShowWindow(std::sync::Arc<std::sync::OnceLock<Box<dyn Fn() + Send + Sync>>>);

impl ShowWindow {
    /// Installs `f` as what `show` runs; a second call is ignored.
    pub fn set(&self, f: impl Fn() + Send + Sync + 'static) {
        let _ = self.0.set(Box::new(f));
    }

    /// Runs the installed function; false when there is none.
    fn run(&self) -> bool {
        self.0.get().map(|f| f()).is_some()
    }
}

impl std::fmt::Debug for ShowWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "ShowWindow(set)"
        } else {
            "ShowWindow(none)"
        })
    }
}
