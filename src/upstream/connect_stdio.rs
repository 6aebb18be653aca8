//! One attempt at a stdio server for [`super::connect`]: start the process (its stderr to the
//! server's log from the first byte), then the shared handshake on its pipes within
//! `connectTimeout`; on failure the process is stopped and its last stderr lines quoted.

use std::time::Duration;

use tokio::sync::mpsc;

use super::ask::AskContext;
use super::connect::{Attempt, HandshakeError, Opened, Stage, failed, handshake_in};
use super::handler::UpstreamHandler;
use super::lane::{FastLane, LaneTransport};
use super::progress::ProgressRoutes;
use super::session::Session;
use super::stderr::{self, LogRing};
use super::{ConnectError, MAX_MESSAGE_BYTES, STDERR_LINES_IN_ERRORS, era};
use crate::config::{ServerConfig, StdioConfig};
use crate::net;
use crate::process::child as stdio;

/// How long a new process's start waits for the previous process's stderr to be read to the
/// end (it is bounded: a descendant that outlived that process may hold the pipe open).
const PREVIOUS_DRAIN_WAIT: Duration = Duration::from_secs(1);

/// Starts `stdio`'s process and runs the handshake on it: `server/discover` when `modern`,
/// else `initialize`.
///
/// # Errors
/// [`Attempt`]: refused speaking only 2026-07-28, refused `server/discover`, or failed.
pub(super) async fn connect_stdio(
    cfg: &ServerConfig,
    stdio: &StdioConfig,
    log: &LogRing,
    progress: ProgressRoutes,
    asks: AskContext,
    modern: bool,
) -> Result<Session, Attempt> {
    net::remember_env_secrets(&stdio.env);
    let spec = super::plan_here(stdio)
        .await
        .into_result()
        .map_err(ConnectError::from)?;
    let (mut child, pipes) = stdio::spawn(&spec).map_err(|e| ConnectError::Spawn {
        program: spec.program.display().to_string(),
        reason: e.to_string(),
    })?;
    tracing::info!(pid = child.pid(), program = %spec.program.display(), "started");
    // The log shows where this process's lines begin (the window dims the lines above): the
    // previous process's last lines go above the marker, so its drain finishes first.
    log.drained(PREVIOUS_DRAIN_WAIT).await;
    log.push(super::process_marker(child.pid()));
    // Errors quote this attempt's stderr only, not the lines of earlier attempts.
    let mark = log.mark();
    let drain = stderr::spawn_drain(pipes.stderr, log.clone(), tracing::Span::current());

    let (events_tx, events) = mpsc::unbounded_channel();
    let logs = asks.logs();
    let handler = UpstreamHandler::new(events_tx, asks);
    // Every stdio session reads through the lane's transport (its rules for lines we cannot
    // read are ours: module doc of `lane::transport`); agents' calls use the lane only when
    // the fast path is on.
    let lane = FastLane::new(pipes.stdin);
    let transport = LaneTransport::new(pipes.stdout, lane.clone(), MAX_MESSAGE_BYTES);
    let opened = Opened::StdioLane(progress.tap(transport, logs));
    let stdin = lane.clone();
    let lane = super::lane::enabled().then_some(lane);
    let failure = match tokio::time::timeout(
        cfg.connect_timeout,
        handshake_in(handler, opened, modern),
    )
    .await
    {
        Ok(Ok((service, listing))) => {
            // The lane writes `initialize`-era frames.
            let modern = service
                .peer()
                .peer_info()
                .is_some_and(|info| era::is_modern(&info.protocol_version));
            let lane = lane.filter(|_| !modern);
            return Ok(Session::new(service, listing, Some(child), events)
                .with_lane(lane)
                .with_stdin(stdin));
        }
        Ok(Err(e)) => Some(e),
        Err(_elapsed) => None,
    };
    // A process that exited on its own explains the failure better than the transport error
    // rmcp saw ("broken pipe", "connection closed") — unless it answered first: then its
    // answer is the reason, and the exit only followed from it.
    let exited = match failure {
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
    let modern_only = failure.as_ref().is_some_and(|f| f.modern_only);
    let not_modern = modern
        && failure
            .as_ref()
            .is_some_and(|f| f.stage == Stage::Initialize && f.answered);
    let error = match failure {
        None => ConnectError::Timeout {
            timeout: cfg.connect_timeout,
            stderr,
        },
        Some(HandshakeError {
            stage,
            reason,
            answered,
            ..
        }) => {
            let reason = match &exited {
                Some(status) if !answered => format!(
                    "the process exited ({}) before answering {}",
                    stdio::describe_exit(status),
                    match stage {
                        Stage::Initialize => "initialize",
                        Stage::List => "tools/list",
                    }
                ),
                _ => reason,
            };
            failed(stage, reason, stderr, None)
        }
    };
    Err(if modern_only {
        Attempt::ModernOnly(error)
    } else if not_modern {
        Attempt::NotModern(error)
    } else {
        Attempt::Failed(error)
    })
}
