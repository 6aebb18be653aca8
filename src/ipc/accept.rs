//! The one accept loop behind both local sockets (the MCP endpoint and the control API):
//! accept until told to stop, and run each connection as a task on a [`TaskTracker`] so the
//! companion's shutdown can wait for every session to end. At most [`ConnectionLimit::max`]
//! sessions run at once. At the cap, the oldest connection that has not finished its handshake
//! ([`Handshake::done`]: `initialize` for an agent, the first request for a control client) is
//! closed to make room; only when every connection has finished it is the new one refused, with
//! one refusal line ([`refusal_line`]), and closed. Idle connections opened by anyone therefore
//! cannot keep a real client out.
//!
//! A refused connection is not closed the moment its line is written: a client that writes its
//! request right after connecting would get EPIPE before it reads the refusal, and closing with
//! its bytes unread resets the connection (ECONNRESET after the line). So its writing side is
//! shut (the client reads the line, then end of file) and what the client sends is read and
//! dropped until it closes, for at most [`REFUSAL_LINGER`], by at most [`MAX_LINGERING`]
//! refused connections at once (each holds a descriptor; beyond that one is closed at once).

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Semaphore;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use super::socket::{LocalListener, ServerStream};

/// How long the loop pauses after a failed accept (e.g. out of file descriptors), so it does
/// not spin.
const ACCEPT_RETRY: Duration = Duration::from_millis(50);

/// How long a refused connection is given to take its refusal line before it is closed.
const REFUSAL_WRITE: Duration = Duration::from_secs(1);

/// How long a refused connection is read (and dropped) after its refusal line, until the
/// client closes it (see the module doc).
pub const REFUSAL_LINGER: Duration = Duration::from_secs(5);

/// How many refused connections linger at once; beyond that one is closed once its line is
/// written.
pub const MAX_LINGERING: usize = 16;

/// How long the loop waits for a closed connection's slot to come free (its task ends at its
/// next poll) before refusing the new one instead.
const EVICTION_WAIT: Duration = Duration::from_secs(1);

/// The `error.data.reason` of the agent socket's refusal line, which `bridge` recognises.
pub const AT_CONNECTION_LIMIT: &str = "connectionLimit";

/// How many sessions one socket serves at once, and what a connection over that hears.
#[derive(Clone, Debug)]
pub struct ConnectionLimit {
    /// Sessions at once.
    pub max: usize,
    /// The line (newline included) written to a connection refused for being over `max`.
    pub refusal: Vec<u8>,
}

/// The agent socket's refusal at its cap: one JSON-RPC error line without an id (-32000, a
/// server error) with `data.reason` = [`AT_CONNECTION_LIMIT`] and `data.max`.
pub fn refusal_line(message: &str, max: usize) -> Vec<u8> {
    let mut line = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32000,
            "message": message,
            "data": { "reason": AT_CONNECTION_LIMIT, "max": max },
        },
    })
    .to_string()
    .into_bytes();
    line.push(b'\n');
    line
}

/// A session's mark that its handshake is over: from then on it is never closed to make room.
#[derive(Clone, Debug, Default)]
pub struct Handshake(Arc<AtomicBool>);

impl Handshake {
    /// The handshake finished.
    pub fn done(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    fn is_done(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// One running session, as the loop remembers it (oldest first).
struct Running {
    handshake: Handshake,
    /// Cancelled when the session ends, or to close it.
    close: CancellationToken,
}

/// Accepts connections on `listener` until `shutdown` fires, running `session(stream,
/// handshake)` for each on `sessions`, in a span named `what` with the session number, while
/// fewer than `limit.max` run. At the cap the oldest session whose `handshake` is not done is
/// dropped (its connection closed) to make room; with none, the new connection is sent
/// `limit.refusal` and closed (logged once per episode). Sessions get `shutdown` too and must
/// end when it fires. Returns when `shutdown` fires; dropping the listener then removes its
/// socket file.
pub async fn accept_loop<F, Fut>(
    listener: LocalListener,
    what: &'static str,
    limit: ConnectionLimit,
    sessions: TaskTracker,
    shutdown: CancellationToken,
    mut session: F,
) where
    F: FnMut(ServerStream, Handshake) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let slots = Arc::new(Semaphore::new(limit.max));
    let lingering = Arc::new(Semaphore::new(MAX_LINGERING));
    let refusal: Arc<[u8]> = limit.refusal.into();
    let mut running: VecDeque<Running> = VecDeque::new();
    let mut refusing = false;
    let mut count: u64 = 0;
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(stream) => stream,
                Err(e) => {
                    tracing::warn!(error = %e, what, "accept failed");
                    tokio::time::sleep(ACCEPT_RETRY).await;
                    continue;
                }
            },
            () = shutdown.cancelled() => break,
        };
        running.retain(|r| !r.close.is_cancelled());
        let slot = match slots.clone().try_acquire_owned() {
            Ok(slot) => Some(slot),
            Err(_) => match running.iter().find(|r| !r.handshake.is_done()) {
                Some(oldest) => {
                    oldest.close.cancel();
                    tracing::info!(
                        what,
                        max = limit.max,
                        "at the connection limit: closed the oldest connection that had not finished its handshake"
                    );
                    tokio::time::timeout(EVICTION_WAIT, slots.clone().acquire_owned())
                        .await
                        .ok()
                        .and_then(Result::ok)
                }
                None => None,
            },
        };
        let Some(slot) = slot else {
            if !refusing {
                refusing = true;
                tracing::warn!(
                    what,
                    max = limit.max,
                    "too many connections; refusing new ones until one closes"
                );
            }
            let (linger, refusal) = (lingering.clone().try_acquire_owned().ok(), refusal.clone());
            let stop = shutdown.clone();
            sessions.spawn(async move {
                tokio::select! {
                    () = refuse(stream, refusal, linger) => {}
                    () = stop.cancelled() => {}
                }
            });
            continue;
        };
        if refusing {
            refusing = false;
            tracing::info!(what, "accepting connections again");
        }
        count += 1;
        let span = tracing::info_span!("session", what, n = count);
        let handshake = Handshake::default();
        let close = CancellationToken::new();
        running.push_back(Running {
            handshake: handshake.clone(),
            close: close.clone(),
        });
        let run = session(stream, handshake);
        sessions.spawn(
            async move {
                // Dropping the session closes its connection.
                tokio::select! {
                    () = run => {}
                    () = close.cancelled() => {}
                }
                close.cancel();
                drop(slot);
            }
            .instrument(span),
        );
    }
}

/// Writes `refusal` to a connection over the limit (giving up after [`REFUSAL_WRITE`]); with a
/// `linger` permit, shuts its writing side and reads what the client sends until it closes, at
/// most [`REFUSAL_LINGER`], so the client reads the refusal rather than a reset (module doc).
/// Then closes it.
async fn refuse(
    mut stream: ServerStream,
    refusal: Arc<[u8]>,
    linger: Option<tokio::sync::OwnedSemaphorePermit>,
) {
    let write = async {
        stream.write_all(&refusal).await?;
        stream.flush().await
    };
    match tokio::time::timeout(REFUSAL_WRITE, write).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "could not write the refusal");
            return;
        }
        Err(_) => return,
    }
    let Some(_linger) = linger else { return };
    if let Err(e) = stream.shutdown().await {
        tracing::debug!(error = %e, "could not end the refusal");
    }
    let drain = async {
        let mut buf = [0u8; 4096];
        while matches!(stream.read(&mut buf).await, Ok(n) if n > 0) {}
    };
    let _ = tokio::time::timeout(REFUSAL_LINGER, drain).await;
}
