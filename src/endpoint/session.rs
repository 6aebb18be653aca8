//! The sessions of the agent endpoint: the accept loop's agents, each served as one MCP
//! session ([`Endpoint`]) on its bounded line transport, until it hangs up or the companion
//! shuts down.

use std::sync::Arc;
use std::time::Duration;

use rmcp::serve_server;
use tokio::io::{AsyncRead, AsyncWrite, ReadHalf, WriteHalf};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::Endpoint;
use super::bounded::{Bounded, Hangup};
use super::fast::Relay;
use super::limits::{Budget, INITIALIZE_TIMEOUT, LINE_DEADLINE, MAX_AGENT_CONNECTIONS};
use super::line::LineTransport;
use crate::hub::{Hub, HubEvent};
use crate::ipc::accept::{ConnectionLimit, accept_loop};
use crate::ipc::socket::LocalListener;
use crate::upstream::MAX_MESSAGE_BYTES;

/// Accepts agents on `listener` until `shutdown` fires; each connection becomes its own session
/// task on `sessions`. Sessions end when their agent hangs up or at shutdown.
///
/// `first_list_wait` is the config's `firstListTimeout`.
pub async fn serve(
    listener: LocalListener,
    hub: Hub,
    sessions: TaskTracker,
    shutdown: CancellationToken,
    first_list_wait: Duration,
) {
    let stop = shutdown.clone();
    let limit = ConnectionLimit {
        max: MAX_AGENT_CONNECTIONS,
        refusal: agent_refusal(),
    };
    accept_loop(
        listener,
        "agent",
        limit,
        sessions,
        shutdown,
        move |stream, _| {
            let hangup = Hangup::of(&stream);
            serve_session_with(stream, hangup, hub.clone(), stop.clone(), first_list_wait)
        },
    )
    .await;
}

/// The line a connection over [`MAX_AGENT_CONNECTIONS`] gets before it is closed: a JSON-RPC
/// error without an id (-32000, a server error).
fn agent_refusal() -> Vec<u8> {
    let message = format!(
        "MCP Companion already serves {MAX_AGENT_CONNECTIONS} agent connections; close one and connect again"
    );
    let mut line = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": -32000, "message": message },
    })
    .to_string()
    .into_bytes();
    line.push(b'\n');
    line
}

/// The newline-JSON transport of one agent connection, accepting messages up to
/// [`MAX_MESSAGE_BYTES`] (the same limit as for upstream servers); malformed lines get their
/// JSON-RPC error answers ([`LineTransport`]).
pub fn framed<S>(stream: S) -> LineTransport<ReadHalf<S>, WriteHalf<S>>
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let (rd, wr) = tokio::io::split(stream);
    LineTransport::new(rd, wr, MAX_MESSAGE_BYTES)
}

/// Runs one MCP session on `stream`: handshake, requests, and `tools/list_changed` pushes.
/// End of input is taken as a half-close (answers still go out); see [`serve_session_with`].
pub async fn serve_session<S>(
    stream: S,
    hub: Hub,
    shutdown: CancellationToken,
    first_list_wait: Duration,
) where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    serve_session_with(stream, Hangup::unknown(), hub, shutdown, first_list_wait).await;
}

/// [`serve_session`] under the connection bounds ([`Bounded`]), with `hangup` telling a
/// half-closed connection from one its agent closed.
pub async fn serve_session_with<S>(
    stream: S,
    hangup: Hangup,
    hub: Hub,
    shutdown: CancellationToken,
    first_list_wait: Duration,
) where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let mut events = hub.subscribe();
    let gone = CancellationToken::new();
    let budget = Arc::new(Budget::default());
    let mut framed = framed(stream).with_line_deadline(LINE_DEADLINE);
    let endpoint = Endpoint::with_shutdown(hub.clone(), shutdown.clone(), first_list_wait)
        .with_agent_gone(gone.clone());
    let mut agent_cell = None;
    if crate::upstream::lane::enabled() {
        let (relay, cell) = Relay::new(
            hub,
            shutdown.clone(),
            framed.shared_write(),
            budget.clone(),
            gone.clone(),
            endpoint.first_list(),
        );
        framed = framed.with_tap(Box::new(relay));
        agent_cell = Some(cell);
    }
    let transport = Bounded::new(framed, budget, gone.clone(), hangup);
    let handshake = tokio::time::timeout(INITIALIZE_TIMEOUT, serve_server(endpoint, transport));
    let running = tokio::select! {
        r = handshake => match r {
            Ok(Ok(running)) => running,
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "agent left before initializing");
                return;
            }
            Err(_) => {
                tracing::info!(
                    "agent connection did not finish initialize within {} s; closing it",
                    INITIALIZE_TIMEOUT.as_secs()
                );
                return;
            }
        },
        () = shutdown.cancelled() => return,
    };
    tracing::debug!("agent connected");
    let peer = running.peer().clone();
    if let Some(cell) = agent_cell {
        cell.set(peer.clone());
    }
    let stop = running.cancellation_token();
    let mut done = tokio::spawn(running.waiting());
    loop {
        tokio::select! {
            _ = &mut done => break,
            () = shutdown.cancelled() => {
                stop.cancel();
                let _ = done.await;
                break;
            }
            event = events.recv() => match event {
                // A 2026-07-28 agent hears of changes only on its `subscriptions/listen`
                // stream ([`super::era::listen`]).
                Some(HubEvent::ToolsChanged) if !super::era::is_initialize_session(&peer) => {}
                Some(HubEvent::ToolsChanged) => {
                    // An agent that does not read must not hold this loop (and shutdown) up.
                    tokio::select! {
                        r = peer.notify_tool_list_changed() => if let Err(e) = r {
                            tracing::debug!(error = %e, "could not send tools/list_changed");
                        },
                        () = shutdown.cancelled() => {
                            stop.cancel();
                            let _ = done.await;
                            break;
                        }
                        () = gone.cancelled() => {}
                    }
                }
                Some(HubEvent::ServersChanged) => {}
                None => {
                    let _ = (&mut done).await;
                    break;
                }
            },
        }
    }
    tracing::debug!("agent disconnected");
}
