//! One MCP client session per upstream server (DESIGN §7).
//!
//! | transport (`type`) | file | how |
//! |---|---|---|
//! | `stdio` | `connect_stdio.rs`, `lane.rs` | [`crate::process::child::spawn`] (own process group, minimal env) + [`lane::LaneTransport`] on the pipes: rmcp's newline-JSON rules, plus a [`lane::FastLane`] for forwarded calls (rmcp's own transport when the fast path is off) |
//! | `streamableHttp` | `http.rs`, `http_lane.rs`, `http_client.rs`, `http_events.rs`, `http_failure.rs`, `signed_in.rs`, `unreached.rs` | [`http::transport`]: rmcp's streamable HTTP transport on [`http_client::GuardedHttp`] (the guarded `reqwest` client, [`crate::net`], with refusals quoted: [`http_failure::HttpFailure`], and a server it could not connect to said plainly: [`unreached`]); for a signed-in server [`signed_in::SignedInClient`] (bearer token, refresh, refusals sent to the person: more scope, a lost sign-in); [`http_lane::HttpLane`] beside rmcp for forwarded calls |
//! | `sse` | `sse.rs` | [`sse::LegacySseTransport`]: our own 2024-11-05 HTTP+SSE client on the same client |
//!
//! [`connect()`] opens the transport ([`connect::Opened`]) and runs the one handshake they all
//! share ([`connect::handshake`]: `initialize` at
//! [`rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE`], or for a stdio server that speaks
//! only 2026-07-28 `server/discover`, see [`era`]; then the first full
//! listing), bounded by `connectTimeout`.
//! Non-JSON lines a server prints on stdout are logged and skipped by rmcp's reader, not fatal.
//! The result is a [`Session`], the same face for every transport; a 2026-07-28 session keeps a
//! `subscriptions/listen` stream open to its server ([`listener`]). Requests rmcp's model
//! cannot carry whole (the Tasks utility) go as JSON through [`raw`]; the Tasks extension of a
//! 2026-07-28 server goes through [`tasks`], declaring the extension per request.

pub mod ask;
pub mod askers;
pub mod bad_answer;
pub mod call;
pub mod connect;
mod connect_stdio;
pub mod elicitor;
pub mod ending;
pub mod era;
pub mod error_text;
pub mod exact;
pub mod handler;
pub mod http;
pub mod http_client;
pub mod http_events;
pub mod http_failure;
pub mod http_lane;
pub mod http_layer;
pub mod initialize;
pub mod lane;
pub mod listener;
pub mod listing;
pub mod mrtr;
pub mod notice;
pub mod progress;
pub mod raw;
pub mod relay;
pub mod roots;
pub mod sent_token;
pub mod session;
pub mod signed_in;
pub mod sse;
pub mod stderr;
pub mod tasks;
pub mod unreached;

use std::time::Duration;

use crate::config::{ConfigError, TransportConfig};
use crate::launch::{self, LaunchError};
use crate::net::{ClientError, SsrfError};

pub use connect::connect;
pub use session::{Closed, Session};

/// Largest single message accepted from an upstream server, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;
/// stderr lines quoted in a start-up error.
pub const STDERR_LINES_IN_ERRORS: usize = 5;

/// The config name of a transport: `stdio`, `sse` or `streamableHttp` (the names live in one
/// table, in `config/transport.rs`).
pub fn transport_name(t: &TransportConfig) -> &'static str {
    t.name()
}

/// Why a server could not be connected.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The command could not be planned (not found, bad cwd…).
    #[error(transparent)]
    Launch(#[from] LaunchError),
    /// The OS refused to start the process.
    #[error("cannot start {program}: {reason}")]
    Spawn {
        /// The resolved program.
        program: String,
        /// What the OS said.
        reason: String,
    },
    /// The MCP handshake failed (often: the process exited at once).
    #[error("initialize failed: {reason}{}", stderr_suffix(stderr))]
    Initialize {
        /// What rmcp reported.
        reason: String,
        /// The last stderr lines of the server.
        stderr: Vec<String>,
        /// The server's `Retry-After`, when it refused over HTTP with one.
        retry_after: Option<Duration>,
    },
    /// Listing the server's tools failed.
    #[error("tools/list failed: {reason}{}", stderr_suffix(stderr))]
    List {
        /// What rmcp reported.
        reason: String,
        /// The last stderr lines of the server.
        stderr: Vec<String>,
        /// The server's `Retry-After`, when it refused over HTTP with one.
        retry_after: Option<Duration>,
    },
    /// Spawn + initialize + listing took longer than `connectTimeout`.
    #[error("no answer within connectTimeout ({} s){}", timeout.as_secs_f64(), stderr_suffix(stderr))]
    Timeout {
        /// The configured `connectTimeout`.
        timeout: Duration,
        /// The last stderr lines of the server.
        stderr: Vec<String>,
    },
    /// `ssrfWhitelist` has an invalid entry: remote servers never connect with a partial list.
    #[error(transparent)]
    Whitelist(ConfigError),
    /// The SSRF guard refused the URL before any connection was made.
    #[error("refused {url}: {source}")]
    Ssrf {
        /// The redacted URL.
        url: String,
        /// Which host, which address, which whitelist entry would allow it.
        source: SsrfError,
    },
    /// The URL's host name did not resolve (no refusal: it is tried again).
    #[error("cannot reach {url}: {source}")]
    Unresolved {
        /// The redacted URL.
        url: String,
        /// The host and what the resolver said.
        source: SsrfError,
    },
    /// The HTTP client could not be built (bad header name or value).
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The legacy SSE stream could not be opened.
    #[error(transparent)]
    Sse(#[from] sse::SseError),
    /// The server answered 401 (or kept answering 403 `insufficient_scope`): it waits for
    /// `mcp-companion login`, in the `needs sign-in` state.
    #[error("{message}")]
    NeedsSignIn {
        /// What happened and the command that fixes it.
        message: String,
        /// The server's `WWW-Authenticate` challenge, if it sent one: the next `login` starts
        /// from it (resource metadata, scopes).
        challenge: Option<String>,
    },
    /// The stored sign-in could not be loaded (keychain, authorization server metadata).
    #[error("sign-in: {0}")]
    SignIn(#[from] crate::auth::SignInError),
}

impl ConnectError {
    /// How long the server asked to be left alone before the next try (its HTTP
    /// `Retry-After`), when it said.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ConnectError::Initialize { retry_after, .. }
            | ConnectError::List { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Whether retrying cannot help: the command or its directory does not exist, the
    /// whitelist is invalid, the SSRF guard refused the URL, or a header is malformed. The
    /// supervisor marks such servers `failed` at once.
    pub fn is_permanent(&self) -> bool {
        matches!(
            self,
            ConnectError::Launch(_)
                | ConnectError::Whitelist(_)
                | ConnectError::Ssrf { .. }
                | ConnectError::Client(_)
        )
    }
}

fn stderr_suffix(lines: &[String]) -> String {
    if lines.is_empty() {
        String::new()
    } else {
        format!("; last stderr: {}", lines.join(" | "))
    }
}

/// The line put into a server's stderr log when a new process starts: `── process 1234
/// started ──`. The window's log view dims everything above the last one.
pub fn process_marker(pid: Option<u32>) -> String {
    match pid {
        Some(pid) => format!("── process {pid} started ──"),
        None => "── process started ──".to_owned(),
    }
}

/// Whether `line` is a [`process_marker`].
pub fn is_process_marker(line: &str) -> bool {
    line.starts_with("── process ") && line.ends_with(" started ──")
        || line == "── process started ──"
}

/// Plans `stdio` for this machine: the real environment and file system, and in GUI mode the
/// login shell's PATH (looked up once per process, see [`launch::shell_path`]).
pub async fn plan_here(stdio: &crate::config::StdioConfig) -> launch::Launch {
    plan_for(stdio, launch::TargetOs::host()).await
}

/// Like [`plan_here`] but for `os`. For another OS than this one (`doctor --os`) nothing is looked
/// up ([`launch::PreviewLookup`]): the rules that depend on the command's name still apply, and
/// the environment is this machine's.
pub async fn plan_for(stdio: &crate::config::StdioConfig, os: launch::TargetOs) -> launch::Launch {
    let gui = if os != launch::TargetOs::Windows && launch::shell_path::gui_mode() {
        Some(launch::shell_path::login_path().await)
    } else {
        None
    };
    let base_dir = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("/"));
    let vars = |k: &str| std::env::var(k).ok();
    launch::plan(
        stdio,
        &launch::Host {
            os,
            vars: &vars,
            gui_path: gui,
            lookup: if os == launch::TargetOs::host() {
                &launch::SystemLookup
            } else {
                &launch::PreviewLookup
            },
            base_dir: &base_dir,
        },
    )
}
