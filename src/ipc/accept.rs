//! The one accept loop behind both local sockets (the MCP endpoint and the control API):
//! accept until told to stop, and run each connection as a task on a [`TaskTracker`] so the
//! companion's shutdown can wait for every session to end. At most [`ConnectionLimit::max`]
//! sessions run at once; a connection over the limit gets one refusal line and is closed.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
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

/// How many sessions one socket serves at once, and what a connection over that hears.
#[derive(Clone, Debug)]
pub struct ConnectionLimit {
    /// Sessions at once.
    pub max: usize,
    /// The line (newline included) written to a connection refused for being over `max`.
    pub refusal: Vec<u8>,
}

/// Accepts connections on `listener` until `shutdown` fires, running `session(stream, n)` for
/// the `n`-th connection (counting from 1) on `sessions`, in a span named `what` with the
/// session number, while fewer than `limit.max` run; a connection over the limit is sent
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
    F: FnMut(ServerStream, u64) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let slots = Arc::new(Semaphore::new(limit.max));
    let refusal: Arc<[u8]> = limit.refusal.into();
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
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            if !refusing {
                refusing = true;
                tracing::warn!(
                    what,
                    max = limit.max,
                    "too many connections; refusing new ones until one closes"
                );
            }
            sessions.spawn(refuse(stream, refusal.clone()));
            continue;
        };
        if refusing {
            refusing = false;
            tracing::info!(what, "accepting connections again");
        }
        count += 1;
        let span = tracing::info_span!("session", what, n = count);
        let run = session(stream, count);
        sessions.spawn(
            async move {
                run.await;
                drop(slot);
            }
            .instrument(span),
        );
    }
}

/// Writes `refusal` to a connection over the limit (giving up after [`REFUSAL_WRITE`]) and
/// closes it.
async fn refuse(mut stream: ServerStream, refusal: Arc<[u8]>) {
    let write = async {
        stream.write_all(&refusal).await?;
        stream.flush().await
    };
    if let Ok(Err(e)) = tokio::time::timeout(REFUSAL_WRITE, write).await {
        tracing::debug!(error = %e, "could not write the refusal");
    }
}
