//! The one MCP handshake every transport shares, on a connection a transport opened:
//! `initialize` (or `server/discover` for 2026-07-28), then the first full listing, and the
//! step that failed when it fails.

use std::time::Duration;

use rmcp::service::RunningService;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{ClientLifecycleMode, RoleClient, serve_client, serve_client_with_lifecycle};
use tokio::io::{DuplexStream, ReadHalf, WriteHalf};
use tokio::process::ChildStdout;

use crate::auth::challenge::{self, SignInNeeded};
use crate::catalog::ServerListing;
use crate::upstream::handler::UpstreamHandler;
use crate::upstream::http_lane::HttpLaneTransport;
use crate::upstream::initialize::Failure;
use crate::upstream::lane::LaneTransport;
use crate::upstream::progress::ProgressTap;
use crate::upstream::signed_in::SignedInClient;
use crate::upstream::sse::LegacySseTransport;
use crate::upstream::{era, error_text, listing};

/// A connection opened by one transport, ready for the MCP handshake.
pub enum Opened {
    /// A child process's stdio, read through [`LaneTransport`], with a [`crate::upstream::lane::FastLane`] beside
    /// rmcp ([`crate::upstream::lane`]).
    StdioLane(ProgressTap<LaneTransport<ChildStdout>>),
    /// Streamable HTTP (MCP 2025-03-26 and later), see [`http`](crate::upstream::http).
    StreamableHttp(ProgressTap<HttpLaneTransport<crate::upstream::http_client::GuardedHttp>>),
    /// Streamable HTTP with a stored OAuth sign-in (bearer token, refresh, refusals that need the person), see
    /// [`crate::auth`].
    SignedIn(ProgressTap<HttpLaneTransport<SignedInClient>>),
    /// Legacy HTTP+SSE (MCP 2024-11-05), see [`crate::upstream::sse`].
    Sse(ProgressTap<LegacySseTransport>),
    /// Newline-delimited JSON-RPC on an already-open byte stream ([`connect_stream`](super::connect_stream)).
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
pub(in crate::upstream) async fn handshake_in(
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
