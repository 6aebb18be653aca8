//! The running phase of a supervisor task: serving a live session until it ends (stop,
//! restart, process exit, a call reporting it broken), re-listing on upstream `list_changed`,
//! and tearing the session down so no process is left behind.

use std::sync::Arc;
use std::time::Duration;

use rmcp::{Peer, RoleClient};
use tokio::sync::mpsc;

use super::task::{Ended, Task};
use super::{Command, Live};
use crate::upstream::handler::UpstreamEvent;
use crate::upstream::{self, Session, stdio};

/// How long a stop waits for the rmcp service to wind down after the process is gone.
const SERVICE_CLOSE_GRACE: Duration = Duration::from_millis(500);

impl Task {
    /// Runs until the session ends; re-lists on upstream `list_changed`.
    pub(super) async fn serve(
        &mut self,
        session: Session,
        inbox: &mut mpsc::Receiver<Command>,
    ) -> Ended {
        let Session {
            service,
            mut child,
            mut events,
            ..
        } = session;
        let peer = service.peer().clone();
        let stop_service = service.cancellation_token();
        let mut quit = tokio::spawn(service.waiting());
        let mut quit_done = false;
        let ended = loop {
            tokio::select! {
                status = wait_child(&mut child) => {
                    let why = self.exit_reason(Some(stdio::describe_exit(&status))).await;
                    break Ended::Lost { why, reported: false };
                }
                _ = &mut quit, if !quit_done => {
                    quit_done = true;
                    // For stdio the process is what matters: the session closing means it is
                    // exiting, so let its exit status speak when it comes soon.
                    let status = match child.as_mut() {
                        Some(c) => tokio::time::timeout(Duration::from_secs(1), c.wait()).await.ok().and_then(Result::ok),
                        None => None,
                    };
                    let why = self.exit_reason(status.as_ref().map(stdio::describe_exit)).await;
                    break Ended::Lost { why, reported: false };
                }
                Some(UpstreamEvent::ListChanged) = events.recv() => {
                    while events.try_recv().is_ok() {}
                    self.relist(&peer).await;
                }
                cmd = inbox.recv() => match cmd {
                    Some(Command::Start) => {}
                    Some(Command::Stop(done)) => break Ended::Stopped(done),
                    Some(Command::Restart(done)) => break Ended::Restart(done),
                    Some(Command::Reconnect { generation, reply }) => {
                        if generation < self.generation {
                            // Someone else already reconnected: hand over the current session.
                            let _ = reply.send(self.live().ok_or_else(|| self.not_running()));
                        } else {
                            self.waiters.push(reply);
                            let why = "the session broke during a call".to_owned();
                            break Ended::Lost { why, reported: true };
                        }
                    }
                    None => break Ended::Orphaned,
                },
            }
        };
        // Take the session away from callers first, so no new call starts on a dying peer.
        self.update(|snap| {
            snap.live = None;
            snap.status.pid = None;
        });
        if let Some(child) = child.as_mut() {
            child.terminate(stdio::STOP_GRACE).await;
        }
        stop_service.cancel();
        if !quit_done {
            let _ = tokio::time::timeout(SERVICE_CLOSE_GRACE, quit).await;
        }
        ended
    }

    async fn relist(&self, peer: &Peer<RoleClient>) {
        match upstream::listing::list_all(peer).await {
            Ok(listing) => {
                let Some(old) = self.live() else { return };
                tracing::info!(tools = listing.tools.len(), "re-listed after list_changed");
                let live = Arc::new(Live {
                    peer: old.peer.clone(),
                    listing: Arc::new(listing),
                    progress: old.progress.clone(),
                    generation: old.generation,
                });
                self.update(|snap| snap.live = Some(live));
            }
            Err(e) => tracing::warn!(error = %e, "re-listing after list_changed failed"),
        }
    }

    /// "process exited (exit code 3); last stderr: …", after giving the stderr drain a moment.
    async fn exit_reason(&self, status: Option<String>) -> String {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut why = match status {
            Some(s) => format!("process exited ({s})"),
            None => "the session closed".to_owned(),
        };
        let tail = self.log.tail(upstream::STDERR_LINES_IN_ERRORS);
        if !tail.is_empty() {
            why.push_str("; last stderr: ");
            why.push_str(&tail.join(" | "));
        }
        why
    }
}

async fn wait_child(child: &mut Option<stdio::StdioChild>) -> std::process::ExitStatus {
    match child {
        Some(c) => match c.wait().await {
            Ok(status) => status,
            Err(e) => {
                tracing::debug!(error = %e, "waiting for the child failed");
                std::future::pending().await
            }
        },
        None => std::future::pending().await,
    }
}
