//! The requests a handle sends the owner task, most waiting for its answer: start, stop and
//! restart a server or all servers, settle, shut down, approve waiting tools, and a config file
//! that cannot be used.

use std::time::Duration;

use tokio::sync::oneshot;

use super::{Approved, Hub, HubError, owner};

impl Hub {
    /// Records that the config file changed but cannot be used (`why`, one sentence): it leads
    /// [`Hub::config_warnings`] until a reload applies a config. Nothing else changes.
    pub fn config_refused(&self, why: String) {
        let _ = self.inbox.send(owner::Msg::FileRefused(why));
    }

    /// Approves the tools that wait for approval of `server` (every server for `None`): they
    /// are pinned as listed now and served from the rebuilt catalog, and agents hear
    /// `tools/list_changed`. With `expect`, only the waiting definitions whose fingerprints
    /// (`listed.fingerprint`) it holds — what the person was shown; one that changed again
    /// since keeps waiting. Returns what was approved once the catalog is published.
    ///
    /// # Errors
    /// [`HubError::UnknownServer`], or [`HubError::ShuttingDown`].
    pub async fn trust(
        &self,
        server: Option<&str>,
        expect: Option<Vec<String>>,
    ) -> Result<Approved, HubError> {
        let server = server.map(str::to_owned);
        self.ask(|reply| owner::Msg::Trust {
            server,
            expect,
            reply,
        })
        .await
        .unwrap_or(Err(HubError::ShuttingDown))
    }

    /// Sends `msg` built around a fresh reply channel and waits for the answer; `None` when the
    /// owner is gone.
    pub(super) async fn ask<T>(
        &self,
        msg: impl FnOnce(oneshot::Sender<T>) -> owner::Msg,
    ) -> Option<T> {
        let (reply, answer) = oneshot::channel();
        self.inbox.send(msg(reply)).ok()?;
        answer.await.ok()
    }

    async fn server_command(&self, name: &str, op: owner::ServerOp) -> Result<(), HubError> {
        let name = name.to_owned();
        self.ask(|reply| owner::Msg::Server { name, op, reply })
            .await
            .unwrap_or(Err(HubError::ShuttingDown))
    }

    /// Starts `name` (forgetting past failures).
    ///
    /// # Errors
    /// [`HubError`] for an unknown server, an invalid entry, or a hub shutting down.
    pub async fn start_server(&self, name: &str) -> Result<(), HubError> {
        self.server_command(name, owner::ServerOp::Start).await
    }

    /// Stops `name` and waits until its processes are gone and its tools have left the
    /// catalog.
    ///
    /// # Errors
    /// [`HubError::UnknownServer`], or [`HubError::ShuttingDown`].
    pub async fn stop_server(&self, name: &str) -> Result<(), HubError> {
        self.server_command(name, owner::ServerOp::Stop).await
    }

    /// Stops `name` and starts it again.
    ///
    /// # Errors
    /// [`HubError`] for an unknown server, an invalid entry, or a hub shutting down.
    pub async fn restart_server(&self, name: &str) -> Result<(), HubError> {
        self.server_command(name, owner::ServerOp::Restart).await
    }

    /// Starts every server that is stopped or failed and whose entry is valid
    /// (the tray's and window's "Start all"). Returns once every start began.
    pub async fn start_all(&self) {
        let _ = self.ask(owner::Msg::StartAll).await;
    }

    /// Stops every server and waits until their processes are gone (the tray's and window's
    /// "Stop all"). The hub keeps running: servers can be started again.
    pub async fn stop_all(&self) {
        let _ = self.ask(owner::Msg::StopAll).await;
    }

    /// Waits until no server is `starting` (or `timeout` passes) and the catalog has caught up
    /// with every change reported so far.
    pub async fn settle(&self, timeout: Duration) {
        owner::wait_started(&self.servers(), timeout).await;
        let _ = self.ask(owner::Msg::Flush).await;
    }

    /// Stops every server in parallel and waits for their processes to be gone. From then on
    /// the hub refuses starts and reloads ([`HubError::ShuttingDown`]).
    pub async fn shutdown(&self) {
        let _ = self.ask(owner::Msg::Shutdown).await;
    }
}
