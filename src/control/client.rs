//! The control API's client side, used by the CLI, the single-instance check and the tests.

use std::path::{Path, PathBuf};

use tokio::io::{AsyncWriteExt, BufReader, ReadHalf, WriteHalf};

use super::lines::{self, Line};
use super::protocol::{ControlRequest, ControlResponse, ErrorKind, Refusal, Reply, StatusReport};
use crate::ipc::socket::{self, ClientStream};

/// Longest answer line a client accepts, in bytes (a `status` of many servers, a log batch).
const MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;

/// Errors of a control client.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// Nothing listens on the control socket.
    #[error(
        "no companion is running (nothing listens on {path}): start one with `mcp-companion serve`"
    )]
    NotRunning {
        /// The control socket path.
        path: PathBuf,
    },
    /// The companion refused the request; [`Refusal::kind`] says why in a stable form.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The companion accepted the connection but sent no answer within the request's bound
    /// ([`ControlRequest::answer_bound`]).
    #[error(
        "the companion accepted the connection but did not answer within {secs} s: it may be stopped (SIGSTOP, a debugger) or stuck; `kill -CONT` it, or stop it and start it again"
    )]
    Unanswered {
        /// The bound, in seconds.
        secs: u64,
    },
    /// The connection failed mid-request or the answer was malformed.
    #[error("control connection failed: {0}")]
    Io(String),
}

impl ControlError {
    /// The stable kind of a refusal (`None` for connection problems).
    pub fn kind(&self) -> Option<ErrorKind> {
        match self {
            ControlError::Refused(r) => Some(r.kind),
            _ => None,
        }
    }
}

/// A client connection to a companion's control socket.
pub struct ControlClient {
    rd: crate::io::LineReader<BufReader<ReadHalf<ClientStream>>>,
    wr: WriteHalf<ClientStream>,
    /// The last request sent: it decides how answers are read.
    asked: Option<ControlRequest>,
    /// Whether an answer to it arrived: only the first is bounded (a followed log's later
    /// batches come when the server writes).
    answered: bool,
}

impl ControlClient {
    /// Connects to the control socket at `path`.
    ///
    /// # Errors
    /// [`ControlError::NotRunning`] when nothing listens.
    pub async fn connect(path: &Path) -> Result<ControlClient, ControlError> {
        let stream = socket::connect(path).await.map_err(|e| {
            if e.kind() == std::io::ErrorKind::WouldBlock {
                // Unix: the listen queue is full, so something does listen.
                ControlError::Io(format!(
                    "the companion is running but its control socket {} takes no more connections right now (its queue is full); try again",
                    path.display()
                ))
            } else {
                ControlError::NotRunning {
                    path: path.to_path_buf(),
                }
            }
        })?;
        let (rd, wr) = tokio::io::split(stream);
        Ok(ControlClient {
            rd: lines::reader(BufReader::new(rd), MAX_ANSWER_BYTES),
            wr,
            asked: None,
            answered: false,
        })
    }

    /// Sends `req` without waiting for the answer.
    ///
    /// # Errors
    /// [`ControlError::Refused`] when the companion refused the connection before the request
    /// was written (at its connection limit, it sends one `busy` reply and closes);
    /// [`ControlError::Io`] when the connection fails otherwise.
    pub async fn send(&mut self, req: &ControlRequest) -> Result<(), ControlError> {
        let mut line = serde_json::to_vec(req).map_err(|e| ControlError::Io(e.to_string()))?;
        line.push(b'\n');
        if let Err(e) = self.wr.write_all(&line).await {
            // A closed connection may still hold the reply that says why it was closed.
            return Err(self.refusal_waiting().await.unwrap_or_else(|| {
                ControlError::Io(format!("the companion closed the connection: {e}"))
            }));
        }
        self.asked = Some(req.clone());
        self.answered = false;
        Ok(())
    }

    /// The refusal the companion sent before closing the connection, if one is waiting.
    async fn refusal_waiting(&mut self) -> Option<ControlError> {
        let read = tokio::time::timeout(
            std::time::Duration::from_secs(1),
            lines::read_line(&mut self.rd),
        );
        let Ok(Ok(Some(Line::Text(text)))) = read.await else {
            return None;
        };
        let reply: Reply = serde_json::from_str(&text).ok()?;
        reply.into_outcome().err().map(ControlError::Refused)
    }

    /// The next answer to the last request sent; `Ok(None)` when the companion closed the
    /// connection.
    ///
    /// # Errors
    /// [`ControlError::Refused`] with the companion's kind and message, or
    /// [`ControlError::Io`].
    pub async fn next(&mut self) -> Result<Option<ControlResponse>, ControlError> {
        let io = |e: String| ControlError::Io(e);
        let bound = match self.answered {
            false => self.asked.as_ref().and_then(ControlRequest::answer_bound),
            true => None,
        };
        let read = lines::read_line(&mut self.rd);
        let read =
            match bound {
                Some(bound) => tokio::time::timeout(bound, read).await.map_err(|_| {
                    ControlError::Unanswered {
                        secs: bound.as_secs(),
                    }
                })?,
                None => read.await,
            };
        self.answered = true;
        let line = match read.map_err(|e| io(e.to_string()))? {
            None => return Ok(None),
            Some(Line::Text(text)) => text,
            Some(Line::TooLong) => return Err(io("answer too long".into())),
            Some(Line::NotUtf8) => return Err(io("answer not UTF-8".into())),
        };
        let reply: Reply =
            serde_json::from_str(&line).map_err(|e| io(format!("malformed answer: {e}")))?;
        let result = reply.into_outcome()?;
        let asked = self
            .asked
            .as_ref()
            .ok_or_else(|| io("an answer arrived before any request".into()))?;
        asked
            .parse_result(result)
            .map(Some)
            .map_err(|e| io(format!("malformed answer: {e}")))
    }
}

/// Sends one request to the companion whose control socket is `path` and returns its answer.
///
/// # Errors
/// [`ControlError::NotRunning`] when nothing listens; [`ControlError::Refused`] with the
/// companion's kind and message when it rejects the request.
pub async fn request(path: &Path, req: &ControlRequest) -> Result<ControlResponse, ControlError> {
    let mut client = ControlClient::connect(path).await?;
    client.send(req).await?;
    client.next().await?.ok_or_else(|| {
        ControlError::Io("the companion closed the connection without answering".into())
    })
}

/// `status` of the companion at `path`.
///
/// # Errors
/// As [`request`].
pub async fn status(path: &Path) -> Result<StatusReport, ControlError> {
    match request(path, &ControlRequest::Status).await? {
        ControlResponse::Status(report) => Ok(report),
        // `parse_result` reads a status request's answer as a status report only.
        _ => Err(ControlError::Io("unexpected answer to status".into())),
    }
}
