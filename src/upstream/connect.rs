//! [`connect`]: open the transport a config entry names, then the one MCP handshake every
//! transport shares (`initialize`, or `server/discover` for a stdio or streamable HTTP server
//! that speaks only 2026-07-28, per [`era`], first when its last session did
//! ([`era::Remembered`]); + the first full listing), all within `connectTimeout` per attempt.
//!
//! Each transport's file only *opens* a connection ([`Opened`]); [`handshake`] does the rest
//! the same way for all of them, and every failure becomes one [`ConnectError`] shape:
//! [`ConnectError::Initialize`], [`ConnectError::List`] or [`ConnectError::Timeout`], with the
//! server's last stderr lines when it has a stderr.

use std::time::Duration;

use rmcp::service::RunningService;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{ClientLifecycleMode, RoleClient, serve_client, serve_client_with_lifecycle};
use tokio::io::{DuplexStream, ReadHalf, WriteHalf};
use tokio::process::ChildStdout;
use tokio::sync::mpsc;

use super::ask::AskContext;
use super::handler::UpstreamHandler;
use super::http_lane::{HttpLane, HttpLaneTransport};
use super::initialize::Failure;
use super::lane::LaneTransport;
use super::progress::{ProgressRoutes, ProgressTap};
use super::session::Session;
use super::signed_in::SignedInClient;
use super::sse::LegacySseTransport;
use super::stderr::LogRing;
use super::{ConnectError, MAX_MESSAGE_BYTES, era, error_text, http, listing};
use crate::auth::challenge::{self, SignInNeeded};
use crate::catalog::ServerListing;
use crate::config::{HttpConfig, ServerConfig, SsrfWhitelist, TransportConfig};
use crate::net::{self, Guard, SsrfError};

/// A connection opened by one transport, ready for the MCP handshake.
pub enum Opened {
    /// A child process's stdio, read through [`LaneTransport`], with a [`super::lane::FastLane`] beside
    /// rmcp ([`super::lane`]).
    StdioLane(ProgressTap<LaneTransport<ChildStdout>>),
    /// Streamable HTTP (MCP 2025-03-26 and later), see [`http`].
    StreamableHttp(ProgressTap<HttpLaneTransport<super::http_client::GuardedHttp>>),
    /// Streamable HTTP with a stored OAuth sign-in (bearer token, refresh, refusals that need the person), see
    /// [`crate::auth`].
    SignedIn(ProgressTap<HttpLaneTransport<SignedInClient>>),
    /// Legacy HTTP+SSE (MCP 2024-11-05), see [`super::sse`].
    Sse(ProgressTap<LegacySseTransport>),
    /// Newline-delimited JSON-RPC on an already-open byte stream ([`connect_stream`]).
    Stream(
        ProgressTap<AsyncRwTransport<RoleClient, ReadHalf<DuplexStream>, WriteHalf<DuplexStream>>>,
    ),
}

/// The handshake step that failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// `initialize` (including opening an SSE stream).
    Initialize,
    /// The first `tools/list` (and the other lists).
    List,
}

/// A failed handshake: which step, and what the other side (or the transport) said.
#[derive(Debug)]
pub struct HandshakeError {
    /// Which step failed.
    pub stage: Stage,
    /// The error and its sources, one line, in the server's own words where it answered
    /// ([`error_text::describe`]); scrubbed of URLs and known secrets.
    pub reason: String,
    /// Whether the server answered `initialize` (with an error or an unusable result): then
    /// its answer is the reason, even if the process exited right after.
    pub answered: bool,
    /// The server refused with HTTP 401 (or an `insufficient_scope` 403 to `initialize`): it
    /// waits for a sign-in.
    pub sign_in: Option<SignInNeeded>,
    /// The server refused `initialize` saying it speaks only 2026-07-28 ([`era`]).
    pub modern_only: bool,
    /// How long the server asked us to wait before trying again (its `Retry-After` on an HTTP
    /// refusal, in delay-seconds).
    pub retry_after: Option<Duration>,
}

type Service = RunningService<RoleClient, UpstreamHandler>;

/// `initialize` then the first full listing on `opened`.
///
/// # Errors
/// [`HandshakeError`] naming the step that failed.
pub async fn handshake(
    handler: UpstreamHandler,
    opened: Opened,
) -> Result<(Service, ServerListing), HandshakeError> {
    handshake_in(handler, opened, false).await
}

/// [`handshake`], with `server/discover` for 2026-07-28 instead of `initialize` when `modern`.
pub(super) async fn handshake_in(
    handler: UpstreamHandler,
    opened: Opened,
    modern: bool,
) -> Result<(Service, ServerListing), HandshakeError> {
    let lifecycle = if modern {
        era::modern_lifecycle()
    } else {
        ClientLifecycleMode::Initialize
    };
    let service = match opened {
        Opened::StdioLane(t) => serve_client_with_lifecycle(handler, t, lifecycle).await,
        Opened::StreamableHttp(t) => serve_client_with_lifecycle(handler, t, lifecycle).await,
        Opened::SignedIn(t) => serve_client_with_lifecycle(handler, t, lifecycle).await,
        // Legacy SSE is of the 2024-11-05 era: always `initialize`.
        Opened::Sse(t) => serve_client(handler, t).await,
        Opened::Stream(t) => serve_client_with_lifecycle(handler, t, lifecycle).await,
    }
    .map_err(|e| {
        let Failure { reason, answered } = Failure::from_rmcp(&e);
        HandshakeError {
            stage: Stage::Initialize,
            reason,
            answered,
            sign_in: challenge::in_initialize(&e),
            modern_only: !modern && era::refused_as_modern_only(&e),
            retry_after: error_text::retry_after(&e),
        }
    })?;
    if let Some(info) = service.peer().peer_info()
        && let Err(reason) = era::check(&info.protocol_version)
    {
        return Err(HandshakeError {
            stage: Stage::Initialize,
            reason,
            answered: true,
            sign_in: None,
            modern_only: false,
            retry_after: None,
        });
    }
    let listing = listing::list_all(service.peer())
        .await
        .map_err(|e| HandshakeError {
            stage: Stage::List,
            reason: error_text::describe(&e),
            answered: false,
            sign_in: challenge::find(&e),
            modern_only: false,
            retry_after: error_text::retry_after(&e),
        })?;
    Ok((service, listing))
}

/// Connects `cfg` (already `${VAR}`-expanded): open the transport, `initialize`, full listing,
/// all within `cfg.connect_timeout`. A stdio server's stderr goes to `log` from the first byte.
/// The server's requests are answered through `asks` ([`super::ask`]).
///
/// # Errors
/// [`ConnectError`], with the server's last stderr lines when it wrote any. Nothing is left
/// running on error.
pub async fn connect(
    cfg: &ServerConfig,
    log: &LogRing,
    progress: ProgressRoutes,
    asks: AskContext,
    whitelist: &SsrfWhitelist,
    era: &era::Remembered,
) -> Result<Session, ConnectError> {
    // Task status notifications are passed on below rmcp too, in the order they came.
    let progress = progress.with_task_status(asks.notices.clone(), asks.server.clone());
    // Last time the server spoke only 2026-07-28: `server/discover` first.
    let first = match &cfg.transport {
        TransportConfig::Stdio(stdio) if era.modern() => Some(
            super::connect_stdio::connect_stdio(
                cfg,
                stdio,
                log,
                progress.clone(),
                asks.clone(),
                true,
            )
            .await,
        ),
        TransportConfig::StreamableHttp(http) if era.modern() => {
            let modern = Remote::StreamableHttp { modern: true };
            Some(connect_remote(cfg, http, modern, progress.clone(), asks.clone(), whitelist).await)
        }
        _ => None,
    };
    if let Some(first) = first {
        era.set(false);
        match first {
            Ok(session) => {
                era.set(true);
                return Ok(session);
            }
            Err(Attempt::NotModern(_)) => {
                tracing::info!(
                    "the server no longer speaks only MCP 2026-07-28: trying initialize"
                );
            }
            Err(other) => return Err(other.into_error()),
        }
    }
    let session = connect_either(cfg, log, progress, asks, whitelist).await?;
    era.set(session.is_modern());
    Ok(session)
}

/// [`connect`] without a remembered era: `initialize` first, then `server/discover` when the
/// server refuses it speaking only 2026-07-28.
async fn connect_either(
    cfg: &ServerConfig,
    log: &LogRing,
    progress: ProgressRoutes,
    asks: AskContext,
    whitelist: &SsrfWhitelist,
) -> Result<Session, ConnectError> {
    match &cfg.transport {
        TransportConfig::Stdio(stdio) => {
            // `initialize` first; a server that speaks only 2026-07-28 is started again and
            // reached through `server/discover` (see `era`).
            match super::connect_stdio::connect_stdio(
                cfg,
                stdio,
                log,
                progress.clone(),
                asks.clone(),
                false,
            )
            .await
            {
                Err(Attempt::ModernOnly(_)) => {
                    tracing::info!(
                        "the server speaks only MCP 2026-07-28: starting it again for that"
                    );
                    super::connect_stdio::connect_stdio(cfg, stdio, log, progress, asks, true)
                        .await
                        .map_err(Attempt::into_error)
                }
                other => other.map_err(Attempt::into_error),
            }
        }
        TransportConfig::StreamableHttp(http) => {
            // `initialize` first; a server that refuses it speaking only 2026-07-28 is reached
            // again, on a new transport over the same guarded client, through
            // `server/discover` (see `era`).
            let first = Remote::StreamableHttp { modern: false };
            match connect_remote(cfg, http, first, progress.clone(), asks.clone(), whitelist).await
            {
                Err(Attempt::ModernOnly(_)) => {
                    tracing::info!("the server speaks only MCP 2026-07-28: reaching it that way");
                    let modern = Remote::StreamableHttp { modern: true };
                    connect_remote(cfg, http, modern, progress, asks, whitelist)
                        .await
                        .map_err(Attempt::into_error)
                }
                other => other.map_err(Attempt::into_error),
            }
        }
        TransportConfig::Sse(http) => {
            connect_remote(cfg, http, Remote::Sse, progress, asks, whitelist)
                .await
                .map_err(Attempt::into_error)
        }
    }
}

/// A session with a server at the other end of an in-process stream (an embedded server, or a
/// test's fake): the same handshake as every transport, within `timeout`, no process; the
/// server's requests are answered through `asks`.
///
/// # Errors
/// [`ConnectError::Initialize`], [`ConnectError::List`] or [`ConnectError::Timeout`].
pub async fn connect_stream(
    stream: DuplexStream,
    progress: ProgressRoutes,
    asks: AskContext,
    timeout: Duration,
) -> Result<Session, ConnectError> {
    let (events_tx, events) = mpsc::unbounded_channel();
    let logs = asks.logs();
    let handler = UpstreamHandler::new(events_tx, asks);
    let (rd, wr) = tokio::io::split(stream);
    let opened = Opened::Stream(progress.tap(
        AsyncRwTransport::new(rd, wr).with_max_line_length(MAX_MESSAGE_BYTES),
        logs,
    ));
    let (service, listing) = tokio::time::timeout(timeout, handshake(handler, opened))
        .await
        .map_err(|_| ConnectError::Timeout {
            timeout,
            stderr: Vec::new(),
        })?
        .map_err(|e| failed(e.stage, e.reason, Vec::new(), None))?;
    Ok(Session::new(service, listing, None, events))
}

pub(super) fn failed(
    stage: Stage,
    reason: String,
    stderr: Vec<String>,
    retry_after: Option<Duration>,
) -> ConnectError {
    match stage {
        Stage::Initialize => ConnectError::Initialize {
            reason,
            stderr,
            retry_after,
        },
        Stage::List => ConnectError::List {
            reason,
            stderr,
            retry_after,
        },
    }
}

/// How one attempt at a stdio or streamable HTTP server failed.
pub(super) enum Attempt {
    /// For good (this time).
    Failed(ConnectError),
    /// The server refused `initialize` saying it speaks only 2026-07-28.
    ModernOnly(ConnectError),
    /// The server answered `server/discover` with an error: it no longer speaks 2026-07-28
    /// alone, so it gets `initialize`.
    NotModern(ConnectError),
}

impl Attempt {
    pub(super) fn into_error(self) -> ConnectError {
        match self {
            Attempt::Failed(e) | Attempt::ModernOnly(e) | Attempt::NotModern(e) => e,
        }
    }
}

impl From<ConnectError> for Attempt {
    fn from(e: ConnectError) -> Self {
        Attempt::Failed(e)
    }
}

/// The remote transports, which share the SSRF guard and the guarded HTTP client.
#[derive(Clone, Copy, Debug)]
enum Remote {
    /// Streamable HTTP; `modern`: through `server/discover` (2026-07-28) instead of
    /// `initialize`.
    StreamableHttp { modern: bool },
    /// Legacy HTTP+SSE: always `initialize`.
    Sse,
}

/// Connects a remote server: whitelist validity, SSRF pre-check (no TCP connection to a refused
/// address), then the transport and the handshake within `connectTimeout`.
async fn connect_remote(
    cfg: &ServerConfig,
    http: &HttpConfig,
    remote: Remote,
    progress: ProgressRoutes,
    asks: AskContext,
    whitelist: &SsrfWhitelist,
) -> Result<Session, Attempt> {
    let nets = whitelist.check().map_err(ConnectError::Whitelist)?;
    let guard = Guard::new(nets);
    let redacted = net::redact(&http.url);
    let url = reqwest::Url::parse(&http.url).map_err(|_| ConnectError::Ssrf {
        url: redacted.clone(),
        source: SsrfError::NoHost,
    })?;
    net::remember_secrets(&http.url, http.headers.values());
    let (events_tx, events) = mpsc::unbounded_channel();
    let logs = asks.logs();
    let handler = UpstreamHandler::new(events_tx.clone(), asks);
    let gone = http::SessionGone::default();
    let mut http_lane: Option<HttpLane> = None;
    let attempt = async {
        let http_lane = &mut http_lane;
        guard.check_url(&url).await.map_err(|source| {
            if source.is_refusal() {
                ConnectError::Ssrf {
                    url: redacted.clone(),
                    source,
                }
            } else {
                ConnectError::Unresolved {
                    url: redacted.clone(),
                    source,
                }
            }
        })?;
        let client = net::build_client(&guard, &http.headers, cfg.connect_timeout)
            .map_err(ConnectError::from)?;
        tracing::info!(url = %redacted, transport = super::transport_name(&cfg.transport), "connecting");
        let (opened, modern) = match remote {
            Remote::StreamableHttp { modern } => {
                let target = crate::auth::Target {
                    server: cfg.name.clone(),
                    url: url.clone(),
                    oauth: http.oauth.clone(),
                    guard: guard.clone(),
                };
                let reports = super::signed_in::Reports {
                    gone: gone.clone(),
                    events: events_tx.clone(),
                };
                let (opened, lane) =
                    match super::signed_in::connect_client(target, client.clone(), reports)
                        .await
                        .map_err(ConnectError::from)?
                    {
                        Some(signed_in) => {
                            let (t, lane) = super::http_lane::transport(
                                signed_in,
                                &net::connect_url(&url, &http.headers, true),
                                gone.clone(),
                            );
                            (Opened::SignedIn(progress.tap(t, logs.clone())), lane)
                        }
                        None => {
                            let (t, lane) = super::http_lane::transport(
                                super::http_client::GuardedHttp(client),
                                &net::connect_url(&url, &http.headers, false),
                                gone.clone(),
                            );
                            (Opened::StreamableHttp(progress.tap(t, logs.clone())), lane)
                        }
                    };
                // The lane writes `initialize`-era frames.
                *http_lane = (!modern && super::lane::enabled()).then_some(lane);
                (opened, modern)
            }
            Remote::Sse => {
                let url = net::connect_url(&url, &http.headers, false);
                let sse = LegacySseTransport::connect(client, &url)
                    .await
                    .map_err(ConnectError::from)?;
                let opened = Opened::Sse(progress.tap(sse, logs));
                (opened, false)
            }
        };
        handshake_in(handler, opened, modern)
            .await
            .map_err(|e| match e.sign_in {
                Some(needed) => Attempt::Failed(needs_sign_in(&cfg.name, needed)),
                // Legacy SSE has no 2026-07-28 era to try.
                None if e.modern_only && matches!(remote, Remote::StreamableHttp { .. }) => {
                    Attempt::ModernOnly(failed(e.stage, e.reason, Vec::new(), e.retry_after))
                }
                None if modern && e.stage == Stage::Initialize && e.answered => {
                    Attempt::NotModern(failed(e.stage, e.reason, Vec::new(), e.retry_after))
                }
                None => Attempt::Failed(failed(e.stage, e.reason, Vec::new(), e.retry_after)),
            })
    };
    let outcome = tokio::time::timeout(cfg.connect_timeout, attempt)
        .await
        .map_err(|_| {
            Attempt::Failed(ConnectError::Timeout {
                timeout: cfg.connect_timeout,
                stderr: Vec::new(),
            })
        })
        .and_then(|inner| inner);
    // A refusal deep in the HTTP stack (a redirect hop, a resolver answer) is the real reason.
    let (service, listing) = outcome.map_err(|e| match (e, guard.take_refusal()) {
        (e @ Attempt::Failed(ConnectError::NeedsSignIn { .. }), _) => e,
        (_, Some(source)) => Attempt::Failed(ConnectError::Ssrf {
            url: redacted.clone(),
            source,
        }),
        (e, None) => e,
    })?;
    Ok(Session::new(service, listing, None, events)
        .ending_on(gone)
        .with_http_lane(http_lane))
}

/// Says what to do, with the challenge for the next `login`.
fn needs_sign_in(server: &str, needed: SignInNeeded) -> ConnectError {
    ConnectError::NeedsSignIn {
        message: needed.describe(server),
        challenge: needed.challenge,
    }
}
