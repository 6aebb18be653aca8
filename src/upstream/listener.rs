//! [`Listener`]: the `subscriptions/listen` stream the companion keeps open to a server of the
//! 2026-07-28 era (MCP 2026-07-28, "Subscriptions"). Such a server has no session to push
//! notifications on: it tells of changes only on a stream a client opened and asked for them.
//!
//! - **What it asks for**: `toolsListChanged`, `promptsListChanged`, `resourcesListChanged`
//!   always (the catalog must follow them), and `resourceSubscriptions` with every URI of the
//!   server some agent subscribed to ([`Listener::add`], [`Listener::remove`]; the hub does
//!   this in place of `resources/subscribe`, which the era has not).
//! - **Where what arrives goes**: the same paths a server of the `initialize` era's
//!   notifications take (`UpstreamHandler::heard`): a list change re-lists the server, a
//!   resource update reaches the agents that subscribed.
//! - **When it is opened again**: when the URIs change (the new stream is open before the old
//!   one is cancelled, so nothing is missed between them), and when the server ends it or it
//!   breaks. A stream that ended is followed by a re-listing once the next one is open (what
//!   changed meanwhile was not told); one that lasted less than [`SHORT`] waits first, from
//!   [`MIN_WAIT`] doubling up to [`MAX_WAIT`], as does a refused `subscriptions/listen`.
//! - It ends with the session: when the [`Listener`] is dropped or the connection closes.

use std::collections::BTreeSet;
use std::time::Duration;

use rmcp::model::SubscriptionFilter;
use rmcp::service::Subscription;
use rmcp::{Peer, RoleClient};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::handler::UpstreamHandler;

/// A stream that lasted less than this counts as refused: the next one waits.
pub const SHORT: Duration = Duration::from_secs(1);
/// The first wait before opening a stream again after a refusal or a short stream.
pub const MIN_WAIT: Duration = Duration::from_millis(250);
/// The longest such wait.
pub const MAX_WAIT: Duration = Duration::from_secs(30);

/// The listen stream of one session; dropping it ends the stream.
#[derive(Debug)]
pub struct Listener {
    /// The server's URIs agents subscribed to.
    uris: watch::Sender<BTreeSet<String>>,
    /// The open stream's URIs: those it asked for, and those the server acknowledged.
    open: watch::Receiver<Applied>,
    _stop: DropGuard,
}

/// The resource URIs of the stream open now.
#[derive(Clone, Debug, Default)]
struct Applied {
    asked: BTreeSet<String>,
    acknowledged: BTreeSet<String>,
}

/// Why [`Listener::add`] did not get its URI onto a stream.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotListened {
    /// The server acknowledged a stream without the URI.
    #[error("the server did not accept a subscription to \"{0}\"")]
    Refused(String),
    /// The session ended first.
    #[error("the session to the server ended")]
    Ended,
}

impl Listener {
    /// Opens the stream on `peer` (a 2026-07-28 session), feeding what arrives to `handler`.
    pub fn spawn(peer: Peer<RoleClient>, handler: UpstreamHandler) -> Listener {
        let (uris, wanted) = watch::channel(BTreeSet::new());
        let (applied, open) = watch::channel(Applied::default());
        let stop = CancellationToken::new();
        let stream = Stream {
            peer,
            handler,
            wanted,
            applied,
        };
        tokio::spawn(run(stream, stop.clone()));
        Listener {
            uris,
            open,
            _stop: stop.drop_guard(),
        }
    }

    /// Asks for updates of the server's `uri` too: the stream is opened again with it, and
    /// this returns once a stream that asked for it is open (the caller bounds the wait).
    ///
    /// # Errors
    /// [`NotListened`].
    pub async fn add(&self, uri: &str) -> Result<(), NotListened> {
        self.uris
            .send_if_modified(|uris| uris.insert(uri.to_owned()));
        let mut open = self.open.clone();
        let applied = open
            .wait_for(|a| a.asked.contains(uri))
            .await
            .map_err(|_| NotListened::Ended)?;
        if applied.acknowledged.contains(uri) {
            Ok(())
        } else {
            Err(NotListened::Refused(uri.to_owned()))
        }
    }

    /// No longer asks for updates of `uri`.
    pub fn remove(&self, uri: &str) {
        self.uris.send_if_modified(|uris| uris.remove(uri));
    }
}

/// What a stream asks for when agents subscribed to `uris`.
fn filter(uris: &BTreeSet<String>) -> SubscriptionFilter {
    let mut filter = SubscriptionFilter::default();
    filter.tools_list_changed = Some(true);
    filter.prompts_list_changed = Some(true);
    filter.resources_list_changed = Some(true);
    filter.resource_subscriptions = (!uris.is_empty()).then(|| uris.iter().cloned().collect());
    filter
}

/// Why a stream stopped being read.
enum Ended {
    /// The URIs changed: a new stream replaces it.
    Replaced,
    /// The server ended it, or it broke.
    Over,
}

/// What the stream's task works with.
struct Stream {
    peer: Peer<RoleClient>,
    handler: UpstreamHandler,
    wanted: watch::Receiver<BTreeSet<String>>,
    applied: watch::Sender<Applied>,
}

async fn run(stream: Stream, stop: CancellationToken) {
    let Stream {
        peer,
        handler,
        mut wanted,
        applied,
    } = stream;
    let mut current: Option<Subscription> = None;
    let mut wait = MIN_WAIT;
    // Whether changes may have gone untold since the last stream was open.
    let mut gap = false;
    loop {
        if peer.is_transport_closed() {
            return;
        }
        let uris = wanted.borrow_and_update().clone();
        let opened = tokio::select! {
            opened = peer.listen(filter(&uris)) => opened,
            () = stop.cancelled() => return,
        };
        let mut subscription = match opened {
            Ok(subscription) => subscription,
            Err(e) => {
                tracing::debug!(error = %super::error_text::describe(&e), "subscriptions/listen refused");
                drop(current.take());
                gap = true;
                if !pause(&mut wait, &stop).await {
                    return;
                }
                continue;
            }
        };
        // The new stream is open: the one it replaces may go.
        drop(current.take());
        let acknowledged = subscription
            .acknowledged()
            .resource_subscriptions
            .iter()
            .flatten()
            .cloned()
            .collect();
        applied.send_replace(Applied {
            asked: uris,
            acknowledged,
        });
        if std::mem::take(&mut gap) {
            handler.heard_gap();
        }
        let opened_at = Instant::now();
        let ended = loop {
            tokio::select! {
                () = stop.cancelled() => return,
                changed = wanted.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    break Ended::Replaced;
                }
                next = subscription.next() => match next {
                    Ok(Some(notification)) => handler.heard(notification),
                    Ok(None) | Err(_) => break Ended::Over,
                },
            }
        };
        match ended {
            Ended::Replaced => current = Some(subscription),
            Ended::Over => {
                gap = true;
                if opened_at.elapsed() >= SHORT {
                    wait = MIN_WAIT;
                } else if !pause(&mut wait, &stop).await {
                    return;
                }
            }
        }
    }
}

/// Waits `wait` (doubling it for next time, up to [`MAX_WAIT`]); false when `stop` fired.
async fn pause(wait: &mut Duration, stop: &CancellationToken) -> bool {
    let now = *wait;
    *wait = (*wait * 2).min(MAX_WAIT);
    tokio::select! {
        () = tokio::time::sleep(now) => true,
        () = stop.cancelled() => false,
    }
}
