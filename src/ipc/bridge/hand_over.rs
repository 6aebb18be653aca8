//! Unix: the bridge offers its stdin and stdout to the companion ([`crate::ipc::handoff`]) and,
//! when the companion takes them, waits for the session's end instead of copying.

use super::{BridgeError, pump};

/// Hands stdin and stdout to the companion ([`crate::ipc::handoff`]) and waits for the session's
/// end; copies as [`pump`] does when the companion does not take them.
///
/// # Errors
/// [`BridgeError::SessionClosed`] when the companion ended the session while the client was
/// still writing, or closed the connection without saying how it ended (it died);
/// [`BridgeError::OfferUnanswered`] when it does not answer the offer in time.
pub(super) async fn hand_over(mut stream: tokio::net::UnixStream) -> Result<(), BridgeError> {
    use crate::ipc::handoff::{self, ENDED_AFTER_INPUT, Reply};
    let declined = match handoff::offer(&stream).await {
        Ok(()) => match handoff_reply(&mut stream).await? {
            Reply::Taken(seen) => {
                handoff::release_stdio()?;
                return match handoff::session_end(&mut stream, seen).await {
                    Some(ENDED_AFTER_INPUT) => Ok(()),
                    Some(_) => Err(BridgeError::SessionClosed {
                        how: "it stopped, or ended the session",
                    }),
                    None => Err(BridgeError::SessionClosed {
                        how: "the connection closed without an end status: it crashed or was killed",
                    }),
                };
            }
            Reply::Declined(seen) => seen,
        },
        Err(e) => {
            tracing::debug!(error = %e, "could not offer stdio to the companion; copying instead");
            Vec::new()
        }
    };
    // Not taken: what the companion said so far is the start of what it says to the client.
    use tokio::io::AsyncReadExt;
    let (rd, wr) = stream.into_split();
    let stream = tokio::io::join(std::io::Cursor::new(declined).chain(rd), wr);
    pump(tokio::io::stdin(), tokio::io::stdout(), stream).await
}

/// The companion's reply to the stdio offer, within the quick-answer bound.
///
/// # Errors
/// [`BridgeError::OfferUnanswered`] when none came in time (nothing was taken: the bridge still
/// holds its stdio); [`BridgeError::Io`] when reading failed.
async fn handoff_reply(
    stream: &mut tokio::net::UnixStream,
) -> Result<crate::ipc::handoff::Reply, BridgeError> {
    let bound = crate::ipc::quick::bound();
    match tokio::time::timeout(bound, crate::ipc::handoff::reply(stream)).await {
        Ok(reply) => Ok(reply?),
        Err(_) => Err(BridgeError::OfferUnanswered(crate::ipc::quick::unanswered(
            "the bridge's stdio offer",
            bound,
        ))),
    }
}
