//! `mcp-companion bridge`: stdio ⇄ local socket, for MCP clients that can only spawn a command
//! (DESIGN §10).
//!
//! Bytes are copied unchanged in both directions; the framing (one JSON-RPC message per line) is
//! the same on both sides. The bridge ends when the companion closes the connection; when the
//! client closes stdin, the bridge half-closes the socket and still delivers the responses that
//! are in flight.

use std::path::PathBuf;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use super::socket;

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
    /// Copying failed mid-session.
    #[error("bridge i/o failed: {0}")]
    Io(#[from] std::io::Error),
}

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
            Ok(stream) => return pump(tokio::io::stdin(), tokio::io::stdout(), stream).await,
            Err(e) => tried.push((path.clone(), e.to_string())),
        }
    }
    Err(BridgeError::NotRunning { tried })
}

/// Copies `input` → `stream` and `stream` → `output` until `stream` reaches end of file.
pub async fn pump<I, O, S>(mut input: I, mut output: O, stream: S) -> Result<(), BridgeError>
where
    I: AsyncRead + Unpin,
    O: AsyncWrite + Unpin,
    S: AsyncRead + AsyncWrite + Unpin,
{
    let (mut sock_rd, mut sock_wr) = tokio::io::split(stream);
    let upward = async {
        tokio::io::copy(&mut input, &mut sock_wr).await?;
        // The client closed stdin: let the companion see end of file, keep reading answers.
        sock_wr.shutdown().await
    };
    let downward = async {
        tokio::io::copy(&mut sock_rd, &mut output).await?;
        output.flush().await
    };
    tokio::pin!(upward, downward);
    let mut upward_done = false;
    loop {
        tokio::select! {
            r = &mut downward => return r.map_err(BridgeError::from),
            r = &mut upward, if !upward_done => {
                upward_done = true;
                if let Err(e) = r {
                    tracing::debug!(error = %e, "stdin side of the bridge ended with an error");
                }
            }
        }
    }
}
