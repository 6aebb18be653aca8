//! Sign-ins in progress inside a running companion: at most one per server (a new one replaces
//! the old, whose listener closes). `login` waits on the outcome; `status` and the desktop
//! window may show the URL.
//!
//! The table is a value, [`SignIns`], owned by the hub (`Hub::sign_ins`), not a process-wide
//! static: whoever holds the hub — the control API, the tray, the window — sees the same
//! sign-ins, and two companions in one process (tests) do not share them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use futures::future::BoxFuture;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::flow::{self, SIGN_IN_TIMEOUT, SignInError, Target};
use super::{browser, vault};

/// Where one sign-in stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for the browser to come back from `url`.
    Waiting {
        /// The authorization URL (no secret in it).
        url: String,
    },
    /// Tokens stored; the server was restarted with them.
    SignedIn,
    /// The sign-in failed; the text says why.
    Failed(String),
}

/// A sign-in that was started.
#[derive(Debug)]
pub struct Started {
    /// The authorization URL.
    pub url: String,
    /// Whether a browser was started on it (else the user must open it).
    pub browser_opened: bool,
    /// Sees the outcome.
    pub phase: watch::Receiver<Phase>,
}

struct Entry {
    phase: watch::Receiver<Phase>,
    cancel: CancellationToken,
}

/// The sign-ins in progress, by server name; cheap to clone (every clone is the same table).
#[derive(Clone, Default)]
pub struct SignIns {
    entries: Arc<Mutex<HashMap<String, Entry>>>,
}

impl std::fmt::Debug for SignIns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignIns")
            .field("servers", &self.lock().keys().collect::<Vec<_>>())
            .finish()
    }
}

impl SignIns {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        // One insert or lookup per critical section: a poisoned map is consistent.
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts signing `target` in: discovery and registration now (from `challenge`, the
    /// server's last `WWW-Authenticate`, when it sent one), then the browser; the redirect is
    /// awaited in the background (at most [`SIGN_IN_TIMEOUT`]) and `signed_in` runs once the
    /// tokens are stored (the caller restarts the server there).
    ///
    /// # Errors
    /// [`SignInError`] when discovery or registration fails (nothing is left waiting then).
    pub async fn start(
        &self,
        target: Target,
        challenge: Option<&str>,
        signed_in: impl FnOnce() -> BoxFuture<'static, ()> + Send + 'static,
    ) -> Result<Started, SignInError> {
        let pending = flow::begin(&target, vault::vault(), challenge, None).await?;
        let url = pending.url().to_owned();
        tracing::info!(server = %target.server, url = %url, "sign in by opening this URL");
        let browser_opened = match browser::open(&url) {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(server = %target.server, error = %e, "no browser opened");
                false
            }
        };
        let (tx, rx) = watch::channel(Phase::Waiting { url: url.clone() });
        let cancel = CancellationToken::new();
        self.enter(&target.server, rx.clone(), cancel.clone());
        let server = target.server.clone();
        tokio::spawn(async move {
            let outcome = tokio::select! {
                r = pending.finish(SIGN_IN_TIMEOUT) => r,
                () = cancel.cancelled() => {
                    let _ = tx.send(Phase::Failed("replaced by a newer sign-in".to_owned()));
                    return;
                }
            };
            match outcome {
                Ok(()) => {
                    signed_in().await;
                    let _ = tx.send(Phase::SignedIn);
                }
                Err(e) => {
                    tracing::warn!(server = %server, error = %e, "sign-in failed");
                    let _ = tx.send(Phase::Failed(e.to_string()));
                }
            }
        });
        Ok(Started {
            url,
            browser_opened,
            phase: rx,
        })
    }

    /// Enters `server`'s new sign-in; the one it replaces (if any) is cancelled.
    fn enter(&self, server: &str, phase: watch::Receiver<Phase>, cancel: CancellationToken) {
        let old = self
            .lock()
            .insert(server.to_owned(), Entry { phase, cancel });
        if let Some(old) = old {
            old.cancel.cancel();
        }
    }

    /// The current phase of `server`'s latest sign-in, if one was started.
    pub fn phase(&self, server: &str) -> Option<Phase> {
        self.lock().get(server).map(|e| e.phase.borrow().clone())
    }

    /// The authorization URL of `server`'s sign-in while it waits for the browser.
    pub fn waiting_url(&self, server: &str) -> Option<String> {
        match self.phase(server)? {
            Phase::Waiting { url } => Some(url),
            Phase::SignedIn | Phase::Failed(_) => None,
        }
    }
}

/// Waits until `phase` leaves [`Phase::Waiting`]; `Err` with the reason when it failed.
///
/// # Errors
/// The failure text.
pub async fn outcome(mut phase: watch::Receiver<Phase>) -> Result<(), String> {
    loop {
        match phase.borrow_and_update().clone() {
            Phase::SignedIn => return Ok(()),
            Phase::Failed(e) => return Err(e),
            Phase::Waiting { .. } => {}
        }
        if phase.changed().await.is_err() {
            return Err("the sign-in was abandoned".to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(url: &str) -> (watch::Sender<Phase>, watch::Receiver<Phase>) {
        watch::channel(Phase::Waiting {
            url: url.to_owned(),
        })
    }

    #[test]
    fn every_holder_of_one_table_sees_its_sign_ins_and_another_table_does_not() {
        let hub = SignIns::default();
        let window = hub.clone();
        let other_companion = SignIns::default();
        let (_tx, rx) = waiting("https://auth.example/authorize?state=1");
        hub.enter("linear", rx, CancellationToken::new());
        assert_eq!(
            window.waiting_url("linear").as_deref(),
            Some("https://auth.example/authorize?state=1")
        );
        assert_eq!(other_companion.phase("linear"), None);
        assert_eq!(window.waiting_url("other"), None);
    }

    #[test]
    fn a_new_sign_in_cancels_the_one_it_replaces_and_only_a_waiting_one_has_a_url() {
        let sign_ins = SignIns::default();
        let (_old_tx, old_rx) = waiting("https://auth.example/old");
        let old = CancellationToken::new();
        sign_ins.enter("linear", old_rx, old.clone());
        let (tx, rx) = waiting("https://auth.example/new");
        sign_ins.enter("linear", rx, CancellationToken::new());
        assert!(old.is_cancelled());
        assert_eq!(
            sign_ins.waiting_url("linear").as_deref(),
            Some("https://auth.example/new")
        );
        tx.send_replace(Phase::SignedIn);
        assert_eq!(sign_ins.phase("linear"), Some(Phase::SignedIn));
        assert_eq!(sign_ins.waiting_url("linear"), None);
    }
}
