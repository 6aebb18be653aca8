//! `mcp-companion bridge`: stdio ⇄ local socket, for MCP clients that can only spawn a command
//! (DESIGN §10).
//!
//! When it copies (see below for when it does not), bytes are copied unchanged in both directions,
//! a line at a time; the framing (one JSON-RPC message per line) is the same on both sides. A line
//! over [`crate::upstream::MAX_MESSAGE_BYTES`] is copied on in pieces as it comes rather than held
//! whole (the companion answers an over-long request with its parse error), so the bridge's memory
//! stays bounded; such a line is not looked into for its id. The bridge ends when the companion
//! closes the connection, or when the client has closed stdin and every request it sent has its
//! response. The second rule matters on Windows: a named pipe has no half-close, so the companion
//! never sees end of file there and the session would last forever; the bridge ends it by closing
//! the pipe. On Unix the socket is also half-closed when stdin ends, as before.
//!
//! On Unix, when stdin and stdout are both pipes or sockets (as when an agent spawns the
//! bridge), nothing is copied: the bridge hands both descriptors to the companion
//! ([`super::handoff`]), which serves them as the session itself, and then only waits for the
//! session to end, exiting as the copying bridge would (0 once the client's input had ended,
//! non-zero with a message when the companion stopped, crashed or was killed; the client sees
//! its stdout close). It copies instead when its stdio is a terminal or a file, and when the
//! companion declines the offer. Requests in flight when the companion dies then get no answer
//! from the bridge (it never sees them); the client sees end of file. Windows keeps the copying
//! bridge: handing over there means the companion opening the bridge's process
//! (`GetNamedPipeClientProcessId`, `OpenProcess` with `PROCESS_DUP_HANDLE`) to pull its handles
//! with `DuplicateHandle`, and then serving handles that may be anonymous pipes, which have no
//! overlapped I/O and so no async reads in tokio (a blocking thread each). That is more moving
//! parts than one copy per direction, and there is no Windows machine here to test it on.
//!
//! It lives in `ipc`, the local transport, not with the agent endpoint: it is a client of the
//! socket that runs in its own short-lived process, finds the socket as `serve` does
//! ([`super::record`], [`super::paths`]) and moves lines without reading them as MCP, so it
//! needs neither the hub nor a session, and a bridge build pulls in no part of the endpoint.

mod copy;
#[cfg(unix)]
mod hand_over;
mod in_flight;
mod refuse;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

use super::socket;

pub use copy::pump;
#[cfg(unix)]
use hand_over::hand_over;
pub use refuse::{FIRST_REQUEST_WAIT, answer_first_request};

/// Why the bridge could not run.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// Nothing accepts connections at any of the places looked at.
    #[error(
        "nothing is listening on {}: start the companion first (`mcp-companion serve` or the desktop app)",
        .tried.iter().map(|(p, why)| format!("{} ({why})", p.display())).collect::<Vec<_>>().join(", nor on ")
    )]
    NotRunning {
        /// Every socket path or pipe name tried, in order, with what the OS said.
        tried: Vec<(PathBuf, String)>,
    },
    /// Copying failed mid-session (the error's source says how).
    #[error("bridge i/o failed")]
    Io(#[from] std::io::Error),
    /// The companion closed the connection while the client was still connected (it stopped
    /// or crashed); each request it had not answered was answered with [`GONE_CODE`].
    #[error(
        "the companion closed the connection (it stopped or crashed); {unanswered} request(s) \
         in flight were answered with an error"
    )]
    CompanionClosed {
        /// Requests in flight at that moment.
        unanswered: usize,
    },
    /// The companion is running but refused this connection: it serves as many agent
    /// connections as it allows ([`super::accept`]). Each request sent was answered with its
    /// message.
    #[error("{message}")]
    AtConnectionLimit {
        /// The companion's refusal, quoted.
        message: String,
    },
    /// Copying: the companion accepted the connection but did not answer the agent's opening
    /// request within the quick-answer bound ([`super::quick`]): it is stopped or stuck. The
    /// requests in flight were answered with [`GONE_CODE`] and this text.
    #[error("{0}")]
    Unanswered(String),
    /// Unix: the companion accepted the connection but did not answer the stdio offer within
    /// the quick-answer bound; it took nothing, and the agent's input is still unread.
    #[error("{0}")]
    OfferUnanswered(String),
    /// Unix, stdio handed over: the companion ended the session while the client was still
    /// connected; the client saw its stdout close.
    #[error("the companion closed the session while the client was connected ({how})")]
    SessionClosed {
        /// What the companion said, or that it said nothing.
        how: &'static str,
    },
}

/// The JSON-RPC error code of the answer the bridge writes for a request the companion never
/// answered because it went away (an implementation-defined server error, JSON-RPC 2.0 §5.1).
pub const GONE_CODE: i64 = -32000;

/// Connects to the first of `candidates` that accepts (see [`super::record::candidates`]) and
/// copies the process's stdin/stdout to it until the companion hangs up.
///
/// # Errors
/// [`BridgeError::NotRunning`] naming every candidate when none accepts (the CLI exits 1 with
/// that message).
pub async fn run_stdio(candidates: &[PathBuf]) -> Result<(), BridgeError> {
    let mut tried = Vec::new();
    for path in candidates {
        match socket::connect(path).await {
            #[cfg(unix)]
            Ok(stream) if super::handoff::can_hand_over() => return hand_over(stream).await,
            Ok(stream) => return pump(tokio::io::stdin(), tokio::io::stdout(), stream).await,
            Err(e) => tried.push((path.clone(), e.to_string())),
        }
    }
    Err(BridgeError::NotRunning { tried })
}
