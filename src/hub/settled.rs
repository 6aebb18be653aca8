//! "Every enabled server has settled": what an agent's first `tools/list`
//! waits for, so an agent that reads the tool list once (nanobot and many others ignore
//! `tools/list_changed`) still gets the whole catalog from a companion that just started.
//!
//! A server has settled when it is no longer `starting` (running, failed, backing off, stopped
//! or disabled) and, when running, the published catalog already holds its current session's
//! listing (the rebuild follows the state change by up to [`super::COALESCE`]).

use std::time::Duration;

use super::Hub;
use crate::supervisor::ServerState;

impl Hub {
    /// Whether every server has settled (see the module docs).
    pub fn is_settled(&self) -> bool {
        let view = self.view();
        view.servers
            .order
            .iter()
            .all(|s| match s.snapshot().status.state {
                ServerState::Starting => false,
                ServerState::Running => view.folded(s),
                ServerState::Stopped
                | ServerState::Backoff
                | ServerState::Failed
                | ServerState::NeedsSignIn => true,
            })
    }

    /// Waits until every server has settled or `limit` has passed; true when settled.
    pub async fn wait_settled(&self, limit: Duration) -> bool {
        // Subscribe before looking, so a change between the look and the wait is not missed.
        let mut events = self.subscribe();
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if self.is_settled() {
                return true;
            }
            match tokio::time::timeout_at(deadline, events.recv()).await {
                Err(_elapsed) => return false,
                Ok(None) => return self.is_settled(),
                Ok(Some(_)) => {}
            }
        }
    }
}
