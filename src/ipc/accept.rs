//! The one accept loop behind both local sockets (the MCP endpoint and the control API):
//! accept until told to stop, and run each connection as a task on a [`TaskTracker`] so the
//! companion's shutdown can wait for every session to end.

use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use super::socket::{LocalListener, ServerStream};

/// How long the loop pauses after a failed accept (e.g. out of file descriptors), so it does
/// not spin.
const ACCEPT_RETRY: Duration = Duration::from_millis(50);

/// Accepts connections on `listener` until `shutdown` fires, running `session(stream, n)` for
/// the `n`-th connection (counting from 1) on `sessions`, in a span named `what` with the
/// session number. Sessions get `shutdown` too and must end when it fires. Returns when
/// `shutdown` fires; dropping the listener then removes its socket file.
pub async fn accept_loop<F, Fut>(
    listener: LocalListener,
    what: &'static str,
    sessions: TaskTracker,
    shutdown: CancellationToken,
    mut session: F,
) where
    F: FnMut(ServerStream, u64) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
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
        count += 1;
        let span = tracing::info_span!("session", what, n = count);
        sessions.spawn(session(stream, count).instrument(span));
    }
}
