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
use crate::upstream::{self, Closed, Session};

impl Task {
    /// Runs until the session ends; re-lists on upstream `list_changed`.
    pub(super) async fn serve(
        &mut self,
        mut session: Session,
        inbox: &mut mpsc::Receiver<Command>,
    ) -> Ended {
        let peer = session.peer().clone();
        let mut list_changes = session.take_list_changes();
        let ended = loop {
            tokio::select! {
                // First: when a call reports the session broken, the session usually knows
                // why (the HTTP server's "no such session" answer), and that is the reason.
                biased;
                closed = session.closed() => {
                    if let Closed::SignInLost { why, challenge } = closed {
                        // The request that learned it has its answer on the way: let it
                        // arrive before the session closes.
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        break Ended::SignInLost { why, challenge };
                    }
                    let why = self.exit_reason(closed).await;
                    break Ended::Lost { why, reported: false };
                }
                Some(event) = list_changes.recv() => {
                    let mut relist = false;
                    let mut event = Some(event);
                    while let Some(e) = event {
                        match e {
                            UpstreamEvent::ListChanged => relist = true,
                            UpstreamEvent::MoreScope(challenge) => {
                                self.update(|snap| snap.sign_in_challenge = Some(challenge));
                            }
                        }
                        event = list_changes.try_recv().ok();
                    }
                    if relist {
                        self.relist(&peer).await;
                    }
                }
                cmd = inbox.recv() => match cmd {
                    Some(Command::Start(done)) => { let _ = done.send(()); }
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
            snap.status.protocol = None;
        });
        session.shutdown().await;
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
                    askers: old.askers.clone(),
                    lane: old.lane.clone(),
                    stdin: old.stdin.clone(),
                    http_lane: old.http_lane.clone(),
                    ending: old.ending.clone(),
                    generation: old.generation,
                    listener: old.listener.clone(),
                });
                self.update(|snap| snap.live = Some(live));
            }
            Err(e) => tracing::warn!(error = %e, "re-listing after list_changed failed"),
        }
    }

    /// "process exited (exit code 3); last stderr: …", once the stderr drain has read the
    /// process's last lines (at most half a second: a descendant may hold the pipe open).
    ///
    /// The first 100 ms are waited whatever the drain: a call whose own answer says the
    /// session is gone is judged on that answer (and sent again) only if it comes before the
    /// session is closed under it, and that ordering has no other guard yet.
    async fn exit_reason(&self, closed: Closed) -> String {
        tokio::time::sleep(Duration::from_millis(100)).await;
        self.log.drained(Duration::from_millis(400)).await;
        let mut why = closed.to_string();
        let tail = self
            .log
            .tail_of_last_process(upstream::STDERR_LINES_IN_ERRORS);
        if !tail.is_empty() {
            why.push_str("; last stderr: ");
            why.push_str(&tail.join(" | "));
        }
        why
    }
}
