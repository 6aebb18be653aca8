//! One socket per profile, beside the main one ([`profile_socket`]): an agent that connects
//! to it (directly, or through `bridge --profile NAME`) gets a session of that profile
//! ([`Hub::for_profile`]); the main socket serves the default view (everything).
//!
//! The sockets follow the config: a valid profile gets its socket when the companion starts
//! or when a reload adds it, and loses it (connected sessions end) when a reload removes it or
//! makes it invalid. A profile's edits that keep it valid reach its connected sessions as
//! `list_changed`, without reconnecting. Each socket is bound like the main one (private
//! directory, mode 0600, peer check) and runs its own accept loop with the same bounds.

use std::collections::HashMap;
use std::path::PathBuf;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::session::serve;
use crate::hub::{Hub, HubEvent};
use crate::ipc::paths::{SocketDir, profile_socket};
use crate::ipc::socket::LocalListener;

/// Where and how the profile sockets are served.
#[derive(Clone, Debug)]
pub struct ProfileSockets {
    /// The main MCP socket; profile sockets sit beside it.
    pub mcp: PathBuf,
    /// Whose directory it is (see [`SocketDir`]).
    pub socket_dir: SocketDir,
    /// The config's `firstListTimeout` and `firstListHold`, as on the main socket.
    pub first_list: super::FirstListPolicy,
    /// Sessions at once per socket.
    pub max_connections: usize,
}

/// Keeps one listener per valid profile of `hub`'s config until `shutdown` fires; sessions run
/// on `sessions`.
pub async fn serve_profiles(
    sockets: ProfileSockets,
    hub: Hub,
    sessions: TaskTracker,
    shutdown: CancellationToken,
) {
    let mut events = hub.subscribe();
    let mut open: HashMap<String, CancellationToken> = HashMap::new();
    loop {
        let wanted: Vec<String> = hub
            .profiles()
            .into_iter()
            .filter(|p| p.error.is_none())
            .map(|p| p.name)
            .collect();
        open.retain(|name, stop| {
            let keep = wanted.contains(name);
            if !keep {
                tracing::info!(profile = %name, "profile removed: closing its socket");
                stop.cancel();
                hub.profile_socket_cleared(name);
            }
            keep
        });
        for name in wanted {
            if open.contains_key(&name) {
                continue;
            }
            let path = profile_socket(&sockets.mcp, &name);
            match LocalListener::bind(&path, sockets.socket_dir) {
                Ok(listener) => {
                    tracing::info!(profile = %name, socket = %path.display(), "serving profile");
                    hub.profile_socket_cleared(&name);
                    let stop = shutdown.child_token();
                    // On the session tracker, so shutdown waits for the socket file to go.
                    sessions.spawn(serve(
                        listener,
                        hub.clone().for_profile(Some(&name)),
                        sessions.clone(),
                        stop.clone(),
                        sockets.first_list.clone(),
                        sockets.max_connections,
                    ));
                    open.insert(name, stop);
                }
                Err(e) => {
                    tracing::warn!(profile = %name, error = %e, "cannot open the profile's socket");
                    hub.profile_socket_failed(
                        &name,
                        format!("cannot open its socket {}: {e}", path.display()),
                    );
                    // Not tried again on every change; a reload that removes the profile
                    // and adds it back tries again.
                    open.insert(name, CancellationToken::new());
                }
            }
        }
        tokio::select! {
            event = events.recv() => match event {
                Some(HubEvent::ServersChanged | HubEvent::ToolsChanged) => {}
                None => return,
            },
            () = shutdown.cancelled() => return,
        }
    }
}
