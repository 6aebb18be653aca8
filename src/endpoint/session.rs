//! The sessions of the agent endpoint: the accept loop's agents, each served as one MCP
//! session ([`Endpoint`]) on its bounded line transport, until it hangs up or the companion
//! shuts down.

use std::sync::Arc;

use rmcp::serve_server;
use tokio::io::{AsyncRead, AsyncWrite, ReadHalf, WriteHalf};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::Endpoint;
use super::accepted::serve_accepted;
use super::bounded::{Bounded, Hangup};
use super::fast::Relay;
use super::first_list::FirstListPolicy;
use super::limits::{Budget, INITIALIZE_TIMEOUT, LINE_DEADLINE};
use super::line::LineTransport;
use crate::hub::{Hub, HubEvent, PeerProcesses};
use crate::ipc::accept::{ConnectionLimit, Handshake, accept_loop, refusal_line};
use crate::ipc::socket::LocalListener;
use crate::upstream::MAX_MESSAGE_BYTES;

/// Accepts agents on `listener` until `shutdown` fires; each connection becomes its own session
/// task on `sessions` (`accepted.rs`: on the connection, or on the stdio a bridge handed
/// over), at most `max_connections` at once (see [`accept_loop`] for what happens at the cap).
/// Sessions end when their agent hangs up or at shutdown.
///
/// `first_list` is how each agent's first listing waits (`firstListTimeout`, `firstListHold`).
pub async fn serve(
    listener: LocalListener,
    hub: Hub,
    sessions: TaskTracker,
    shutdown: CancellationToken,
    first_list: FirstListPolicy,
    max_connections: usize,
) {
    let stop = shutdown.clone();
    let message = format!(
        "MCP Companion is at its connection limit ({max_connections} agent connections, all in use): the companion is running; close another agent's connection and connect again"
    );
    let limit = ConnectionLimit {
        max: max_connections,
        refusal: refusal_line(&message, max_connections),
    };
    accept_loop(
        listener,
        "agent",
        limit,
        sessions,
        shutdown,
        move |stream, handshake| {
            serve_accepted(
                stream,
                hub.clone(),
                stop.clone(),
                first_list.clone(),
                handshake,
            )
        },
    )
    .await;
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

/// Runs one MCP session on `stream`: handshake, requests, `list_changed` pushes, and the
/// servers' resource updates and log messages the agent asked for.
/// End of input is taken as a half-close (answers still go out); see [`serve_session_with`].
pub async fn serve_session<S>(
    stream: S,
    hub: Hub,
    shutdown: CancellationToken,
    first_list: FirstListPolicy,
) where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    serve_session_with(
        stream,
        Hangup::unknown(),
        hub,
        shutdown,
        first_list,
        Handshake::default(),
        PeerProcesses::default(),
    )
    .await;
}

/// [`serve_session`] under the connection bounds ([`Bounded`]), with `hangup` telling a
/// half-closed connection from one its agent closed; `handshake` is marked done once
/// `initialize` is answered. The session is listed in the hub's agents ([`Hub::agents`]) with
/// `peers` until it ends.
pub async fn serve_session_with<S>(
    stream: S,
    hangup: Hangup,
    hub: Hub,
    shutdown: CancellationToken,
    first_list: FirstListPolicy,
    handshake: Handshake,
    peers: PeerProcesses,
) where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    // One choice of profile for the whole session, shared by every part of it below, and
    // one entry in the hub's agents.
    let (hub, _listed) = hub.register_agent(peers);
    let mut events = hub.subscribe();
    let gone = CancellationToken::new();
    let budget = Arc::new(Budget::default());
    let mut framed = framed(stream).with_line_deadline(LINE_DEADLINE);
    let endpoint = Endpoint::with_shutdown(hub.clone(), shutdown.clone(), first_list)
        .with_agent_gone(gone.clone())
        .with_handshake(handshake.clone());
    let interest = endpoint.interest();
    // Subscribed before any call can be taken, so a call's log messages are all queued for it
    // (MCP lets a server send log messages before `initialized`).
    let notices = hub.notices(endpoint.delivery());
    let notices_hub = hub.clone();
    // Always: with the fast path off the relay still takes the Tasks lines.
    let tasks = crate::hub::Tasks::default();
    let endpoint = endpoint.with_tasks(tasks.clone());
    let (relay, cell) = Relay::new(
        hub.clone(),
        shutdown.clone(),
        framed.shared_write(),
        budget.clone(),
        gone.clone(),
        &endpoint,
        tasks.clone(),
    );
    framed = framed.with_tap(Box::new(relay));
    let agent_cell = Some(cell);
    let transport = Bounded::new(framed, budget, gone.clone(), hangup);
    let initialize = tokio::time::timeout(INITIALIZE_TIMEOUT, serve_server(endpoint, transport));
    let running = tokio::select! {
        r = initialize => match r {
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
    handshake.done();
    tracing::debug!("agent connected");
    let peer = running.peer().clone();
    if let Some(cell) = agent_cell {
        cell.set(peer.clone());
    }
    let stop = running.cancellation_token();
    let mut done = tokio::spawn(running.waiting());
    let notices = tokio::spawn(super::native::forward_notices(
        notices_hub,
        peer.clone(),
        interest.clone(),
        tasks,
        notices,
    ));
    // What this agent was told about: prompts and resources are announced when they change.
    let declared = hub.catalog().native().declared();
    let mut last = hub.catalog();
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
                    let now = hub.catalog();
                    let prompts = declared.prompts && !now.native().same_prompts(last.native());
                    let resources = declared.resources && !now.native().same_resources(last.native());
                    last = now;
                    // An agent that does not read must not hold this loop (and shutdown) up.
                    tokio::select! {
                        r = announce(&peer, prompts, resources) => if let Err(e) = r {
                            tracing::debug!(error = %e, "could not send list_changed");
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
    notices.abort();
    interest.release(&hub).await;
    tracing::debug!("agent disconnected");
}

/// `notifications/tools/list_changed`, then the prompts' and resources' when `prompts` /
/// `resources` say their lists changed.
async fn announce(
    peer: &rmcp::Peer<rmcp::RoleServer>,
    prompts: bool,
    resources: bool,
) -> Result<(), rmcp::service::ServiceError> {
    peer.notify_tool_list_changed().await?;
    if prompts {
        peer.notify_prompt_list_changed().await?;
    }
    if resources {
        peer.notify_resource_list_changed().await?;
    }
    Ok(())
}
