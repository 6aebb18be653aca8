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

use std::path::PathBuf;

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Deserialize;
use serde::de::IgnoredAny;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use super::accept::AT_CONNECTION_LIMIT;
use super::socket;
use crate::io::{LineReader, Overflow, Read};
use crate::upstream::MAX_MESSAGE_BYTES;

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

/// Hands stdin and stdout to the companion ([`super::handoff`]) and waits for the session's
/// end; copies as [`pump`] does when the companion does not take them.
///
/// # Errors
/// [`BridgeError::SessionClosed`] when the companion ended the session while the client was
/// still writing, or closed the connection without saying how it ended (it died);
/// [`BridgeError::OfferUnanswered`] when it does not answer the offer in time.
#[cfg(unix)]
async fn hand_over(mut stream: tokio::net::UnixStream) -> Result<(), BridgeError> {
    use super::handoff::{self, ENDED_AFTER_INPUT, Reply};
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
#[cfg(unix)]
async fn handoff_reply(
    stream: &mut tokio::net::UnixStream,
) -> Result<super::handoff::Reply, BridgeError> {
    let bound = super::quick::bound();
    match tokio::time::timeout(bound, super::handoff::reply(stream)).await {
        Ok(reply) => Ok(reply?),
        Err(_) => Err(BridgeError::OfferUnanswered(super::quick::unanswered(
            "the bridge's stdio offer",
            bound,
        ))),
    }
}

/// Whether `line` is a request that opens a session (`initialize`, `server/discover`, `ping`):
/// the companion answers it at once, so the copying bridge bounds the wait for its answer.
fn opens_session(line: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Method<'a> {
        #[serde(borrow)]
        method: std::borrow::Cow<'a, str>,
    }
    serde_json::from_slice::<Method<'_>>(line.trim_ascii_start())
        .is_ok_and(|m| matches!(&*m.method, "initialize" | "server/discover" | "ping"))
}

/// How the companion's side of [`pump`] ended.
enum Down {
    /// Every request had its answer after the client's input ended.
    Done,
    /// The companion hung up: how many requests were left unanswered, and its refusal at the
    /// connection cap when that was why.
    HungUp(usize, Option<String>),
    /// The companion said nothing within the quick-answer bound after the client's first
    /// request opened the session; the text says so.
    Silent(String),
}

/// Copies `input` → `stream` and `stream` → `output`, a line at a time, until `stream` reaches end
/// of file, or until `input` has ended and every JSON-RPC request read from it has its response
/// (then `stream` is dropped, which closes the connection). When `stream` ends first, every
/// request still in flight gets an error answer on `output` ([`GONE_CODE`]), so each request
/// the client sent has exactly one response. When the client's first request opens the session
/// (`initialize`, `server/discover` or `ping`) and the companion sends nothing within the quick-answer bound
/// ([`super::quick`]), the requests in flight are answered with an error saying so.
///
/// # Errors
/// [`BridgeError::Unanswered`] when the companion stayed silent after the session's opening
/// request; [`BridgeError::Io`] when reading the companion or writing `output` fails;
/// [`BridgeError::CompanionClosed`] when the companion hung up while `input` was still open. A
/// failing `input` only ends the upward direction.
pub async fn pump<I, O, S>(input: I, mut output: O, stream: S) -> Result<(), BridgeError>
where
    I: AsyncRead + Unpin,
    O: AsyncWrite + Unpin,
    S: AsyncRead + AsyncWrite + Unpin,
{
    let (sock_rd, mut sock_wr) = tokio::io::split(stream);
    let in_flight = InFlight::default();
    // Notified when the client's first request opens the session: its answer is bounded.
    let opening_sent = tokio::sync::Notify::new();
    // `Ok(true)`: the client's input ended (or failed); `Ok(false)`: the companion stopped
    // taking lines (it is going away; the downward side sees it and answers what is left).
    let upward = async {
        let mut input = LineReader::new(BufReader::new(input), MAX_MESSAGE_BYTES, Overflow::Pass);
        // Inside an over-long line whose pieces are being copied on.
        let mut passing = false;
        loop {
            let read = match input.next().await {
                Ok(read) => read,
                Err(e) => {
                    tracing::debug!(error = %e, "reading the client's input failed; treated as its end");
                    break;
                }
            };
            // The last message, sent without its newline before the input ended, gets one:
            // the companion only reads whole lines.
            let end: &[u8] = match read {
                Read::Last => b"\n",
                Read::Eof | Read::Stalled if passing => b"\n",
                Read::Eof | Read::Stalled => break,
                Read::Line | Read::TooLong | Read::Piece => b"",
            };
            let line = input.line();
            if matches!(read, Read::Line | Read::Last) {
                in_flight.sent(line);
                if opens_session(line) {
                    opening_sent.notify_one();
                }
            }
            passing = matches!(read, Read::TooLong | Read::Piece) && !line.ends_with(b"\n");
            let sent = async {
                sock_wr.write_all(line).await?;
                sock_wr.write_all(end).await?;
                sock_wr.flush().await
            };
            if let Err(e) = sent.await {
                tracing::debug!(error = %e, "the companion stopped taking requests");
                return false;
            }
            if matches!(read, Read::Last | Read::Eof) {
                break;
            }
        }
        // The client closed stdin: on Unix the companion sees end of file; answers still come.
        if let Err(e) = sock_wr.shutdown().await {
            tracing::debug!(error = %e, "could not half-close the connection");
        }
        true
    };
    let downward = async {
        // The companion's refusal at its connection cap, when that is why it hangs up.
        let mut refusal: Option<String> = None;
        let mut sock_rd =
            LineReader::new(BufReader::new(sock_rd), MAX_MESSAGE_BYTES, Overflow::Pass);
        let bound = super::quick::bound();
        let silent = async {
            opening_sent.notified().await;
            tokio::time::sleep(bound).await;
        };
        tokio::pin!(silent);
        let mut heard = false;
        loop {
            let next = if heard {
                sock_rd.next().await
            } else {
                tokio::select! {
                    next = sock_rd.next() => next,
                    () = &mut silent => {
                        let why = super::quick::unanswered("the agent's first request", bound);
                        answer_gone(&mut output, &in_flight.take_all(), &why).await?;
                        return Ok(Down::Silent(why));
                    }
                }
            };
            heard = true;
            let read = match next {
                Ok(Read::Eof | Read::Stalled) => break,
                Ok(read) => read,
                // A companion that exits with our lines unread resets the connection: it is
                // gone all the same.
                Err(e) if is_hang_up(&e) => break,
                Err(e) => return Err(e),
            };
            let line = sock_rd.line();
            if refusal.is_none() {
                refusal = connection_limit_refusal(line);
            }
            output.write_all(line).await?;
            output.flush().await?;
            if matches!(read, Read::Line | Read::Last) && in_flight.answered(line) {
                output.flush().await?;
                return Ok(Down::Done);
            }
        }
        // The companion hung up first: answer what it left unanswered.
        let unanswered = in_flight.take_all();
        let why = match &refusal {
            Some(message) => format!("{message}; the request was not run"),
            None => "the companion closed the connection before answering (it stopped or crashed); the request may or may not have run".to_owned(),
        };
        answer_gone(&mut output, &unanswered, &why).await?;
        Ok::<_, std::io::Error>(Down::HungUp(unanswered.len(), refusal.take()))
    };
    tokio::pin!(upward, downward);
    let mut upward_done = false;
    loop {
        tokio::select! {
            r = &mut downward => {
                return match r? {
                    Down::HungUp(_, Some(message)) => Err(BridgeError::AtConnectionLimit { message }),
                    Down::HungUp(unanswered, None) if !in_flight.has_input_ended() => {
                        Err(BridgeError::CompanionClosed { unanswered })
                    }
                    Down::Silent(why) => Err(BridgeError::Unanswered(why)),
                    Down::HungUp(..) | Down::Done => Ok(()),
                };
            }
            input_ended = &mut upward, if !upward_done => {
                upward_done = true;
                if input_ended && in_flight.input_ended() {
                    return Ok(());
                }
            }
        }
    }
}

/// Answers each request `ids` (JSON text) on `output` with a [`GONE_CODE`] error saying `why`.
async fn answer_gone<O: AsyncWrite + Unpin>(
    output: &mut O,
    ids: &[String],
    why: &str,
) -> std::io::Result<()> {
    for id in ids {
        let answer = serde_json::json!({
            "jsonrpc": "2.0",
            "error": { "code": GONE_CODE, "message": why },
        });
        // The id is spliced as the JSON text it was sent as (`1` and `"1"` differ).
        let answer = answer.to_string();
        let answer = format!("{{\"id\":{id},{}\n", &answer[1..]);
        output.write_all(answer.as_bytes()).await?;
    }
    output.flush().await
}

/// The message of the companion's refusal at its connection cap, when `line` is that refusal
/// (an error without an id whose `data.reason` is [`AT_CONNECTION_LIMIT`]).
fn connection_limit_refusal(line: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Refusal {
        id: Option<IgnoredAny>,
        error: RefusalError,
    }
    #[derive(Deserialize)]
    struct RefusalError {
        message: String,
        data: RefusalData,
    }
    #[derive(Deserialize)]
    struct RefusalData {
        reason: String,
    }
    if line.len() > 4096 || memchr::memmem::find(line, AT_CONNECTION_LIMIT.as_bytes()).is_none() {
        return None;
    }
    let refusal: Refusal = serde_json::from_slice(line).ok()?;
    (refusal.id.is_none() && refusal.error.data.reason == AT_CONNECTION_LIMIT)
        .then_some(refusal.error.message)
}

/// Whether a read error means the companion hung up (reset or broken connection).
fn is_hang_up(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::BrokenPipe
    )
}

/// The ids of the client's requests that have no response yet, and whether its input ended.
#[derive(Debug, Default)]
struct InFlight {
    /// Each id as JSON text, so `1` and `"1"` stay distinct (JSON-RPC 2.0 §4).
    ids: Mutex<HashSet<String>>,
    input_ended: AtomicBool,
}

/// The two members of a JSON-RPC message the bridge looks at; the rest is skipped unparsed.
#[derive(Deserialize)]
struct Peek {
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(default)]
    method: Option<IgnoredAny>,
}

impl InFlight {
    fn ids(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.ids.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Notes the request (with `method` and `id`) in a line sent to the companion, when the
    /// companion will answer it with that same id: the id a string or an integer (JSON-RPC
    /// 2.0 §4; the companion answers others, batches, lines that are not UTF-8 and lines over
    /// its size limit with an error whose id is `null` or normalised).
    fn sent(&self, line: &[u8]) {
        if line.len() > MAX_MESSAGE_BYTES || std::str::from_utf8(line).is_err() {
            return;
        }
        if let Ok(Peek {
            id: Some(id),
            method: Some(_),
        }) = serde_json::from_slice::<Peek>(line.trim_ascii_start())
            && (id.is_string() || id.is_i64() || id.is_u64())
        {
            self.ids().insert(id.to_string());
        }
    }

    /// Notes the responses (`id` without `method`) in a line from the companion; true when the
    /// input has ended and nothing is in flight any more.
    fn answered(&self, line: &[u8]) -> bool {
        let mut ids = self.ids();
        if !ids.is_empty() {
            for m in peek(line) {
                if let (Some(id), None) = (m.id, m.method) {
                    ids.remove(&id.to_string());
                }
            }
        }
        ids.is_empty() && self.input_ended.load(Ordering::SeqCst)
    }

    /// Every id still in flight (JSON text), forgetting them.
    fn take_all(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.ids().drain().collect();
        ids.sort();
        ids
    }

    fn has_input_ended(&self) -> bool {
        self.input_ended.load(Ordering::SeqCst)
    }

    /// Marks the input as ended; true when nothing is in flight.
    fn input_ended(&self) -> bool {
        let ids = self.ids();
        self.input_ended.store(true, Ordering::SeqCst);
        ids.is_empty()
    }
}

/// The messages of one line: an object, or each object of a batch array; nothing when the line
/// is not JSON-RPC (the companion answers that itself).
fn peek(line: &[u8]) -> Vec<Peek> {
    let trimmed = line.trim_ascii_start();
    if trimmed.first() == Some(&b'[') {
        serde_json::from_slice(trimmed).unwrap_or_default()
    } else {
        serde_json::from_slice(trimmed)
            .map(|m| vec![m])
            .unwrap_or_default()
    }
}

mod refuse;
pub use refuse::{FIRST_REQUEST_WAIT, answer_first_request};

#[cfg(test)]
mod tests;
