//! [`Hub::sign_ins`]: the servers' OAuth sign-ins in progress belong to the hub, beside the
//! servers they sign in, so the control API (`login`, `status`), the tray and the desktop
//! window all see the same ones.

use super::Hub;
use crate::auth::pending::SignIns;
use crate::supervisor::{ServerState, ServerStatus};

impl Hub {
    /// The sign-ins in progress: start one with [`SignIns::start`], read one with
    /// [`SignIns::phase`].
    pub fn sign_ins(&self) -> &SignIns {
        &self.sign_ins
    }

    /// [`Hub::statuses`] as `status` shows them: a server that needs a sign-in and has one
    /// waiting for the browser gets the authorization URL in its `lastError`, so a headless
    /// machine shows what to open.
    pub fn statuses_with_sign_ins(&self) -> Vec<ServerStatus> {
        let mut statuses = self.statuses();
        for s in &mut statuses {
            if s.state != ServerState::NeedsSignIn {
                continue;
            }
            if let Some(url) = self.sign_ins.waiting_url(&s.name) {
                s.last_error = Some(format!(
                    "signing in: waiting for the browser; open {url} on this machine"
                ));
            }
        }
        statuses
    }
}
