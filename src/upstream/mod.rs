//! One MCP client session per upstream server (DESIGN §7).
//!
//! | transport | how |
//! |---|---|
//! | stdio | [`stdio::spawn`] (own process group, minimal env) + rmcp's newline-JSON transport on the pipes |
//! | streamableHttp | [`http::transport`]: rmcp's streamable HTTP client on the guarded `reqwest` client ([`crate::net`]) |
//! | sse | [`sse::LegacySseTransport`]: our own 2024-11-05 HTTP+SSE client on the same client |
//!
//! [`connect`] does spawn (or the SSRF pre-check) + `initialize` + the first full listing, all
//! bounded by `connectTimeout`. It pins the `initialize` lifecycle at
//! [`rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE`], which every current server speaks.
//! Non-JSON lines a server prints on stdout are logged and skipped by rmcp's reader, not fatal.

pub mod call;
pub mod error_text;
pub mod handler;
pub mod http;
pub mod initialize;
pub mod listing;
pub mod progress;
pub mod reaper;
pub mod sse;
pub mod stderr;
pub mod stdio;

use std::time::Duration;

use rmcp::service::RunningService;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{RoleClient, serve_client};
use tokio::sync::mpsc;

use crate::auth;
use crate::catalog::ServerListing;
use crate::config::{ConfigError, HttpConfig, ServerConfig, SsrfWhitelist, TransportConfig};
use crate::launch::{self, LaunchError};
use crate::net::{self, ClientError, Guard, SsrfError};
use handler::{ProgressRoutes, UpstreamEvent, UpstreamHandler};
use stderr::LogRing;
use stdio::StdioChild;

/// Largest single message accepted from an upstream server, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;
/// stderr lines quoted in a start-up error.
pub const STDERR_LINES_IN_ERRORS: usize = 5;

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
    },
    /// Listing the server's tools failed.
    #[error("tools/list failed: {reason}{}", stderr_suffix(stderr))]
    List {
        /// What rmcp reported.
        reason: String,
        /// The last stderr lines of the server.
        stderr: Vec<String>,
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
    },
    /// The stored sign-in could not be loaded (keychain, authorization server metadata).
    #[error("sign-in: {0}")]
    SignIn(#[from] crate::auth::SignInError),
}

impl ConnectError {
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

/// A live upstream session and the process behind it.
pub struct Session {
    /// The rmcp client service; its `peer()` sends requests.
    pub service: RunningService<RoleClient, UpstreamHandler>,
    /// The child process (stdio servers).
    pub child: Option<StdioChild>,
    /// Notifications the supervisor must act on (list changes).
    pub events: mpsc::UnboundedReceiver<UpstreamEvent>,
    /// The everything the server listed at connect time.
    pub listing: ServerListing,
}

/// Connects `cfg` (already `${VAR}`-expanded): spawn, `initialize`, full listing, all within
/// `cfg.connect_timeout`. stderr goes to `log` from the first byte.
///
/// # Errors
/// [`ConnectError`], with the server's last stderr lines when it wrote any. Nothing is left
/// running on error.
pub async fn connect(
    cfg: &ServerConfig,
    log: &LogRing,
    progress: ProgressRoutes,
    whitelist: &SsrfWhitelist,
) -> Result<Session, ConnectError> {
    match &cfg.transport {
        TransportConfig::Stdio(stdio) => connect_stdio(cfg, stdio, log, progress).await,
        TransportConfig::Sse(http) => connect_remote(cfg, http, true, progress, whitelist).await,
        TransportConfig::StreamableHttp(http) => {
            connect_remote(cfg, http, false, progress, whitelist).await
        }
    }
}

async fn connect_stdio(
    cfg: &ServerConfig,
    stdio: &crate::config::StdioConfig,
    log: &LogRing,
    progress: ProgressRoutes,
) -> Result<Session, ConnectError> {
    net::remember_env_secrets(&stdio.env);
    let spec = plan_here(stdio).await.into_result()?;
    let (mut child, pipes) = stdio::spawn(&spec).map_err(|e| ConnectError::Spawn {
        program: spec.program.display().to_string(),
        reason: e.to_string(),
    })?;
    tracing::info!(pid = child.pid(), program = %spec.program.display(), "started");
    // The log shows where this process's lines begin (the window dims the lines above).
    log.push(process_marker(child.pid()));
    // Errors quote this attempt's stderr only, not the lines of earlier attempts.
    let mark = log.mark();
    let drain = stderr::spawn_drain(pipes.stderr, log.clone(), tracing::Span::current());

    let (events_tx, events) = mpsc::unbounded_channel();
    let handler = UpstreamHandler::new(events_tx);
    let transport = progress.tap(
        AsyncRwTransport::new(pipes.stdout, pipes.stdin).with_max_line_length(MAX_MESSAGE_BYTES),
    );

    let handshake = async {
        let service = serve_client(handler, transport)
            .await
            .map_err(|e| Stage::Initialize(initialize::Failure::from_rmcp(&e)))?;
        let listing = listing::list_all(service.peer())
            .await
            .map_err(|e| Stage::List(error_text::describe(&e)))?;
        Ok::<_, Stage>((service, listing))
    };
    let failed = match tokio::time::timeout(cfg.connect_timeout, handshake).await {
        Ok(Ok((service, listing))) => {
            return Ok(Session {
                service,
                child: Some(child),
                events,
                listing,
            });
        }
        Ok(Err(stage)) => Some(stage),
        Err(_elapsed) => None,
    };
    // A process that exited on its own explains the failure better than the transport error
    // rmcp saw ("broken pipe", "connection closed") — unless it answered first: then its
    // answer is the reason, and the exit only followed from it.
    let exited = match failed {
        Some(_) => tokio::time::timeout(Duration::from_millis(300), child.wait())
            .await
            .ok()
            .and_then(Result::ok),
        None => None,
    };
    child.terminate(stdio::STOP_GRACE).await;
    // The pipe closes with the process; give the drain a moment to log the last lines.
    let _ = tokio::time::timeout(Duration::from_millis(500), drain).await;
    let stderr = log.tail_since(mark, STDERR_LINES_IN_ERRORS);
    let during = |stage: &str, reason: String| match &exited {
        Some(status) => format!(
            "the process exited ({}) before answering {stage}",
            stdio::describe_exit(status)
        ),
        None => reason,
    };
    Err(match failed {
        None => ConnectError::Timeout {
            timeout: cfg.connect_timeout,
            stderr,
        },
        Some(Stage::Initialize(failure)) if failure.answered => ConnectError::Initialize {
            reason: failure.reason,
            stderr,
        },
        Some(Stage::Initialize(failure)) => ConnectError::Initialize {
            reason: during("initialize", failure.reason),
            stderr,
        },
        Some(Stage::List(reason)) => ConnectError::List {
            reason: during("tools/list", reason),
            stderr,
        },
    })
}

/// The line put into a server's stderr log when a new process starts: `── process 1234
/// started ──`. The window's log view dims everything above the last one.
pub fn process_marker(pid: Option<u32>) -> String {
    match pid {
        Some(pid) => format!("── process {pid} started ──"),
        None => "── process started ──".to_owned(),
    }
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

/// Connects a remote server: whitelist validity, SSRF pre-check (no TCP connection to a refused
/// address), then `initialize` and the first listing within `connectTimeout`.
async fn connect_remote(
    cfg: &ServerConfig,
    http: &HttpConfig,
    legacy_sse: bool,
    progress: ProgressRoutes,
    whitelist: &SsrfWhitelist,
) -> Result<Session, ConnectError> {
    let nets = whitelist.check().map_err(ConnectError::Whitelist)?;
    let guard = Guard::new(nets);
    let redacted = net::redact(&http.url);
    let url = reqwest::Url::parse(&http.url).map_err(|_| ConnectError::Ssrf {
        url: redacted.clone(),
        source: SsrfError::NoHost,
    })?;
    net::remember_secrets(&http.url, http.headers.values());
    let (events_tx, events) = mpsc::unbounded_channel();
    let handler = UpstreamHandler::new(events_tx);
    let handshake = async {
        guard
            .check_url(&url)
            .await
            .map_err(|source| ConnectError::Ssrf {
                url: redacted.clone(),
                source,
            })?;
        let client = net::build_client(&guard, &http.headers, cfg.connect_timeout)?;
        tracing::info!(url = %redacted, transport = transport_name(&cfg.transport), "connecting");
        let service = if legacy_sse {
            let transport = sse::LegacySseTransport::connect(client, &url).await?;
            serve_client(handler, progress.tap(transport)).await
        } else {
            let target = crate::auth::Target {
                server: cfg.name.clone(),
                url: url.clone(),
                oauth: http.oauth.clone(),
                guard: guard.clone(),
            };
            match crate::auth::connect_client(target, client.clone()).await? {
                Some(signed_in) => {
                    serve_client(handler, progress.tap(http::transport(signed_in, &url))).await
                }
                None => serve_client(handler, progress.tap(http::transport(client, &url))).await,
            }
        }
        .map_err(|e| match auth::challenge::in_initialize(&e) {
            Some(needed) => needs_sign_in(&cfg.name, needed),
            None => ConnectError::Initialize {
                reason: initialize::Failure::from_rmcp(&e).reason,
                stderr: Vec::new(),
            },
        })?;
        let listing = listing::list_all(service.peer()).await.map_err(|e| {
            match auth::challenge::find(&e) {
                Some(needed) => needs_sign_in(&cfg.name, needed),
                None => ConnectError::List {
                    reason: error_text::describe(&e),
                    stderr: Vec::new(),
                },
            }
        })?;
        Ok::<_, ConnectError>((service, listing))
    };
    let outcome = tokio::time::timeout(cfg.connect_timeout, handshake)
        .await
        .map_err(|_| ConnectError::Timeout {
            timeout: cfg.connect_timeout,
            stderr: Vec::new(),
        })
        .and_then(|inner| inner);
    // A refusal deep in the HTTP stack (a redirect hop, a resolver answer) is the real reason.
    let (service, listing) = outcome.map_err(|e| match (e, guard.take_refusal()) {
        (e @ ConnectError::NeedsSignIn { .. }, _) => e,
        (_, Some(source)) => ConnectError::Ssrf {
            url: redacted.clone(),
            source,
        },
        (e, None) => e,
    })?;
    Ok(Session {
        service,
        child: None,
        events,
        listing,
    })
}

/// Records the challenge for the next `login` and says what to do.
fn needs_sign_in(server: &str, needed: auth::challenge::SignInNeeded) -> ConnectError {
    auth::challenge::remember(server, needed.challenge.as_deref());
    ConnectError::NeedsSignIn {
        message: needed.describe(server),
    }
}

enum Stage {
    Initialize(initialize::Failure),
    List(String),
}

/// The config name of a transport: `stdio`, `sse` or `streamableHttp`.
pub fn transport_name(t: &TransportConfig) -> &'static str {
    match t {
        TransportConfig::Stdio(_) => "stdio",
        TransportConfig::Sse(_) => "sse",
        TransportConfig::StreamableHttp(_) => "streamableHttp",
    }
}
