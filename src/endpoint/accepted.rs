//! One accepted agent connection, before it becomes a session: on Unix its first bytes say
//! whether it is an ordinary client (served on the connection itself) or `mcp-companion bridge`
//! handing over its agent's stdin and stdout ([`crate::ipc::handoff`]), which are then served
//! directly as the session while the connection stays open as the "session alive" signal.
//! Either way the session runs in the accept loop's slot, under the same per-agent bounds.
//!
//! The connection's peer process (from the kernel, [`crate::ipc::peer`]) is what the hub's
//! agents list shows; when the peer is a bridge — it handed over its stdio, or (Linux) runs
//! our executable with `bridge` — the agent is the bridge's parent, read from the OS.

use tokio_util::sync::CancellationToken;

use super::bounded::Hangup;
use super::first_list::FirstListPolicy;
use super::session::serve_session_with;
use crate::hub::{Hub, PeerProcesses};
use crate::ipc::accept::Handshake;
use crate::ipc::socket::ServerStream;

/// Serves one accepted connection until its session ends; `handshake` is marked done when the
/// agent's `initialize` arrives (the accept loop's cap then never closes it).
pub async fn serve_accepted(
    stream: ServerStream,
    hub: Hub,
    shutdown: CancellationToken,
    first_list: FirstListPolicy,
    handshake: Handshake,
) {
    #[cfg(unix)]
    unix::serve(stream, hub, shutdown, first_list, handshake).await;
    #[cfg(windows)]
    {
        // The pipe's client: the agent, or a copying bridge (not told apart on Windows).
        let peers = PeerProcesses {
            agent: crate::ipc::peer::peer_of(&stream),
            bridge: None,
        };
        let hangup = Hangup::of(&stream);
        serve_session_with(stream, hangup, hub, shutdown, first_list, handshake, peers).await;
    }
}

/// The processes of a connection whose peer is `peer`: when it is `mcp-companion bridge`
/// (`bridged`, or seen to be one by its executable and arguments), the agent is its parent.
#[cfg(unix)]
fn peers_of(
    peer: Option<crate::process::identity::ProcessIdentity>,
    bridged: bool,
) -> PeerProcesses {
    use crate::process::identity::ProcessIdentity;
    use crate::process::identity::{is_our_bridge, parent};
    match peer {
        Some(bridge) if bridged || is_our_bridge(bridge.pid) => PeerProcesses {
            agent: parent(bridge.pid).map(|pid| ProcessIdentity::of(pid, bridge.uid)),
            bridge: Some(bridge),
        },
        agent => PeerProcesses {
            agent,
            bridge: None,
        },
    }
}

#[cfg(unix)]
mod unix {
    use std::io::Cursor;
    use std::sync::atomic::Ordering;

    use tokio::io::AsyncReadExt;
    use tokio_util::sync::CancellationToken;

    use super::{FirstListPolicy, Hangup, peers_of, serve_session_with};
    use crate::endpoint::limits::INITIALIZE_TIMEOUT;
    use crate::hub::Hub;
    use crate::ipc::accept::Handshake;
    use crate::ipc::handoff::{self, First, Handed};
    use crate::ipc::socket::ServerStream;

    pub async fn serve(
        stream: ServerStream,
        hub: Hub,
        shutdown: CancellationToken,
        first_list: FirstListPolicy,
        handshake: Handshake,
    ) {
        let peer = crate::ipc::peer::peer_of(&stream);
        let first = tokio::select! {
            r = tokio::time::timeout(INITIALIZE_TIMEOUT, handoff::first(&stream)) => r,
            () = shutdown.cancelled() => return,
        };
        match first {
            Ok(Ok(First::Bytes(seen))) if seen.is_empty() => {}
            Ok(Ok(First::Bytes(seen))) => {
                let hangup = Hangup::of(&stream);
                let (rd, wr) = stream.into_split();
                let stream = tokio::io::join(Cursor::new(seen).chain(rd), wr);
                let peers = peers_of(peer, false);
                serve_session_with(stream, hangup, hub, shutdown, first_list, handshake, peers)
                    .await;
            }
            Ok(Ok(First::Handoff(stdio))) => {
                let peers = peers_of(peer, true);
                serve_handed(stream, stdio, hub, shutdown, first_list, handshake, peers).await;
            }
            Ok(Err(e)) => tracing::info!(error = %e, "refused an agent connection"),
            Err(_) => tracing::info!(
                "agent connection sent nothing within {} s; closing it",
                INITIALIZE_TIMEOUT.as_secs()
            ),
        }
    }

    /// Serves a bridge's handed-over stdio as the session; `control` is the bridge's connection.
    async fn serve_handed(
        control: ServerStream,
        stdio: Handed,
        hub: Hub,
        shutdown: CancellationToken,
        first_list: FirstListPolicy,
        handshake: Handshake,
        peers: crate::hub::PeerProcesses,
    ) {
        use std::os::fd::AsFd;
        if let Err(e) = handoff::ack(&control).await {
            tracing::debug!(error = %e, "the bridge left before its stdio was taken");
            return;
        }
        let hangup = Hangup::of_fd(stdio.output.as_fd());
        let input_ended = stdio.input.eof();
        let stream = tokio::io::join(stdio.input, stdio.output);
        // The session's own stop: the companion's shutdown, or the bridge going away.
        let stop = shutdown.child_token();
        let session = serve_session_with(
            stream,
            hangup,
            hub,
            stop.clone(),
            first_list,
            handshake,
            peers,
        );
        tokio::pin!(session);
        tokio::select! {
            () = &mut session => {}
            () = handoff::bridge_gone(&control) => {
                tracing::debug!("the bridge exited; ending its session");
                stop.cancel();
                session.await;
            }
        }
        handoff::finish(&control, input_ended.load(Ordering::SeqCst)).await;
    }
}
