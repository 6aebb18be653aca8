//! Connecting a remote server, streamable HTTP or legacy SSE: the whitelist and the SSRF guard,
//! the stored sign-in when there is one, the transport, and the handshake within
//! `connectTimeout`.

use tokio::sync::mpsc;

use super::{Attempt, Opened, Stage, failed, handshake_in};
use crate::auth::challenge::SignInNeeded;
use crate::config::{HttpConfig, ServerConfig, SsrfWhitelist};
use crate::net::{self, Guard, SsrfError};
use crate::upstream::ask::AskContext;
use crate::upstream::handler::UpstreamHandler;
use crate::upstream::http_lane::HttpLane;
use crate::upstream::progress::ProgressRoutes;
use crate::upstream::session::Session;
use crate::upstream::sse::LegacySseTransport;
use crate::upstream::{ConnectError, http};

/// The remote transports, which share the SSRF guard and the guarded HTTP client.
#[derive(Clone, Copy, Debug)]
pub(super) enum Remote {
    /// Streamable HTTP; `modern`: through `server/discover` (2026-07-28) instead of
    /// `initialize`.
    StreamableHttp { modern: bool },
    /// Legacy HTTP+SSE: always `initialize`.
    Sse,
}

/// Connects a remote server: whitelist validity, SSRF pre-check (no TCP connection to a refused
/// address), then the transport and the handshake within `connectTimeout`.
pub(super) async fn connect_remote(
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
        tracing::info!(url = %redacted, transport = crate::upstream::transport_name(&cfg.transport), "connecting");
        let (opened, modern) = match remote {
            Remote::StreamableHttp { modern } => {
                let target = crate::auth::Target {
                    server: cfg.name.clone(),
                    url: url.clone(),
                    oauth: http.oauth.clone(),
                    guard: guard.clone(),
                };
                let reports = crate::upstream::signed_in::Reports {
                    gone: gone.clone(),
                    events: events_tx.clone(),
                };
                let (opened, lane) = match crate::upstream::signed_in::connect_client(
                    target,
                    client.clone(),
                    reports,
                )
                .await
                .map_err(ConnectError::from)?
                {
                    Some(signed_in) => {
                        let (t, lane) = crate::upstream::http_lane::transport(
                            signed_in,
                            &net::connect_url(&url, &http.headers, true),
                            gone.clone(),
                        );
                        (Opened::SignedIn(progress.tap(t, logs.clone())), lane)
                    }
                    None => {
                        let (t, lane) = crate::upstream::http_lane::transport(
                            crate::upstream::http_client::GuardedHttp(client),
                            &net::connect_url(&url, &http.headers, false),
                            gone.clone(),
                        );
                        (Opened::StreamableHttp(progress.tap(t, logs.clone())), lane)
                    }
                };
                // The lane writes `initialize`-era frames.
                *http_lane = (!modern && crate::upstream::lane::enabled()).then_some(lane);
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
