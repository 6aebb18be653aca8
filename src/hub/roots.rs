//! [`Hub::roots_changed`]: `notifications/roots/list_changed` upstream, so servers that cache
//! roots ask again (MCP "Roots": clients that declare `roots.listChanged` send it when the list
//! changes).

use super::Hub;

impl Hub {
    /// Tells every running server that the roots changed (an agent sent
    /// `notifications/roots/list_changed`). Which roots a server then gets depends on who answers
    /// its `roots/list` ([`crate::upstream::ask`]): any agent's roots may reach any server whose
    /// tools it calls, so every running server is told. Failures (a session that just ended) are
    /// logged and otherwise ignored.
    pub async fn roots_changed(&self) {
        for server in self.servers() {
            let Some(live) = server.snapshot().live else {
                continue;
            };
            let sent = live.peer.notify_roots_list_changed().await;
            if let Err(e) = sent {
                tracing::debug!(server = %server.name(), error = %e, "could not send roots/list_changed");
            }
        }
    }
}
