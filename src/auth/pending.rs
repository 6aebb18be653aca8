//! Sign-ins in progress inside a running companion: at most one per server (a new one replaces
//! the old, whose listener closes). `login` waits on the outcome; `status` may show the URL.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use futures::future::BoxFuture;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::flow::{self, SIGN_IN_TIMEOUT, SignInError, Target};
use super::{browser, challenge, vault};

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

fn registry() -> &'static Mutex<HashMap<String, Entry>> {
    static MAP: OnceLock<Mutex<HashMap<String, Entry>>> = OnceLock::new();
    MAP.get_or_init(Mutex::default)
}

/// Starts signing `target` in: discovery and registration now, then the browser; the redirect
/// is awaited in the background (at most [`SIGN_IN_TIMEOUT`]) and `signed_in` runs once the
/// tokens are stored (the caller restarts the server there).
///
/// # Errors
/// [`SignInError`] when discovery or registration fails (nothing is left waiting then).
pub async fn start(
    target: Target,
    signed_in: impl FnOnce() -> BoxFuture<'static, ()> + Send + 'static,
) -> Result<Started, SignInError> {
    let last = challenge::last(&target.server);
    let pending = flow::begin(&target, vault::vault(), last.as_deref(), None).await?;
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
    let old = registry().lock().unwrap_or_else(|p| p.into_inner()).insert(
        target.server.clone(),
        Entry {
            phase: rx.clone(),
            cancel: cancel.clone(),
        },
    );
    if let Some(old) = old {
        old.cancel.cancel();
    }
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
                challenge::remember(&server, None);
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

/// The current phase of `server`'s latest sign-in, if one was started.
pub fn phase(server: &str) -> Option<Phase> {
    registry()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(server)
        .map(|e| e.phase.borrow().clone())
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
