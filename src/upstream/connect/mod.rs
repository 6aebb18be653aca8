//! [`connect`]: open the transport a config entry names, then the one MCP handshake every
//! transport shares (`initialize`, or `server/discover` for a stdio or streamable HTTP server
//! that speaks only 2026-07-28, per [`era`], first when its last session did
//! ([`era::Remembered`]); + the first full listing), all within `connectTimeout` per attempt.
//!
//! Each transport's file only *opens* a connection ([`Opened`]); [`handshake`] does the rest
//! the same way for all of them, and every failure becomes one [`ConnectError`] shape:
//! [`ConnectError::Initialize`], [`ConnectError::List`] or [`ConnectError::Timeout`], with the
//! server's last stderr lines when it has a stderr.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | [`connect`]: the era to try first, and trying the other when the server refuses it |
//! | `handshake.rs` | [`Opened`], [`handshake`]: the handshake every transport shares, and how it fails |
//! | `remote.rs` | streamable HTTP and legacy SSE: the SSRF guard, the sign-in, the transport |
//! | `stream.rs` | [`connect_stream`]: a server at the other end of an in-process stream |
//! | `attempt.rs` | how one attempt failed, and a failed handshake as a [`ConnectError`] |

mod attempt;
mod handshake;
mod remote;
mod stream;

use super::ask::AskContext;
use super::progress::ProgressRoutes;
use super::session::Session;
use super::stderr::LogRing;
use super::{ConnectError, era};
use crate::config::{ServerConfig, SsrfWhitelist, TransportConfig};

pub(super) use attempt::{Attempt, failed};
pub(super) use handshake::handshake_in;
pub use handshake::{HandshakeError, Opened, Stage, handshake};
use remote::{Remote, connect_remote};
pub use stream::connect_stream;

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
