//! The owner's server commands: start, stop or restart one server, start or stop them all,
//! each answered from a helper task once done.

use tokio::sync::{mpsc, oneshot};

use super::{Msg, Owner, ServerOp};
use crate::hub::HubError;
use crate::supervisor::{ServerHandle, ServerState};

impl Owner {
    pub(super) fn server_command(
        &mut self,
        name: &str,
        op: ServerOp,
        reply: oneshot::Sender<Result<(), HubError>>,
    ) {
        let Some(server) = self.servers.by_name.get(name).cloned() else {
            let _ = reply.send(Err(crate::config::UnknownServer::new(name).into()));
            return;
        };
        let starts = !matches!(op, ServerOp::Stop);
        if starts && self.shutting_down {
            let _ = reply.send(Err(HubError::ShuttingDown));
            return;
        }
        if starts && server.config().is_none() {
            let _ = reply.send(Err(HubError::InvalidEntry {
                name: name.to_owned(),
                reason: server.snapshot().status.last_error.unwrap_or_default(),
            }));
            return;
        }
        let me = self.me.clone();
        tokio::spawn(async move {
            match op {
                ServerOp::Start => server.start().await,
                ServerOp::Stop => {
                    server.stop().await;
                    flush(&me).await;
                }
                ServerOp::Restart => server.restart().await,
            }
            let _ = reply.send(Ok(()));
        });
    }

    pub(super) fn start_all(&mut self, reply: oneshot::Sender<()>) {
        if self.shutting_down {
            let _ = reply.send(());
            return;
        }
        let startable: Vec<ServerHandle> = self
            .servers
            .order
            .iter()
            .filter(|s| s.config().is_some())
            .filter(|s| {
                let state = s.snapshot().status.state;
                matches!(state, ServerState::Stopped | ServerState::Failed)
            })
            .cloned()
            .collect();
        tokio::spawn(async move {
            futures::future::join_all(startable.iter().map(ServerHandle::start)).await;
            let _ = reply.send(());
        });
    }

    pub(super) fn stop_all(&mut self, reply: oneshot::Sender<()>) {
        let servers = self.servers.order.clone();
        let me = self.me.clone();
        tokio::spawn(async move {
            futures::future::join_all(servers.iter().map(ServerHandle::stop)).await;
            flush(&me).await;
            let _ = reply.send(());
        });
    }
}

/// Asks the owner behind `me` to rebuild now and waits until it did: a stop answers only once
/// the stopped servers' tools have left the published catalog (and `list_changed` went out).
async fn flush(me: &mpsc::WeakUnboundedSender<Msg>) {
    let Some(inbox) = me.upgrade() else { return };
    let (done, wait) = oneshot::channel();
    if inbox.send(Msg::Flush(done)).is_ok() {
        drop(inbox);
        let _ = wait.await;
    }
}
