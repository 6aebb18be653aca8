//! The copying bridge: lines from the client to the companion and back, the requests the
//! companion left unanswered answered with [`GONE_CODE`], and the bound on the wait for the
//! answer to the session's opening request.

use serde::Deserialize;
use serde::de::IgnoredAny;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use super::in_flight::InFlight;
use super::{BridgeError, FIRST_REQUEST_WAIT, GONE_CODE};
use crate::io::{LineReader, Overflow, Read};
use crate::ipc::accept::AT_CONNECTION_LIMIT;
use crate::upstream::MAX_MESSAGE_BYTES;

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
    /// The companion hung up: how many requests were left unanswered.
    HungUp(usize),
    /// The companion refused the connection at its cap, saying this; each request was
    /// answered with it.
    Refused(String),
    /// The companion said nothing within the quick-answer bound after the client's first
    /// request opened the session; the text says so.
    Silent(String),
}

/// Copies `input` → `stream` and `stream` → `output`, a line at a time, until `stream` reaches end
/// of file, or until `input` has ended and every JSON-RPC request read from it has its response
/// (then `stream` is dropped, which closes the connection). When `stream` ends first, every
/// request still in flight gets an error answer on `output` ([`GONE_CODE`]), so each request
/// the client sent has exactly one response. The companion's refusal at its connection cap (a
/// line without an id, [`crate::ipc::accept::refusal_line`]) is not copied: each request in
/// flight is answered with its message instead, or, when none is yet, the client's first
/// request (it started the bridge to send one; waited for at most [`FIRST_REQUEST_WAIT`]).
/// When the client's first request opens the session (`initialize`, `server/discover` or
/// `ping`) and the companion sends nothing within the quick-answer bound
/// ([`crate::ipc::quick`]), the requests in flight are answered with an error saying so.
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
    // `true`: the client's input ended (or failed); `false`: the companion had stopped taking
    // lines (it is going away; the downward side sees it and answers what is left). Lines
    // after that are still read and their requests noted, so that a refusal at the connection
    // cap can answer the client's first request under its id.
    let upward = async {
        let mut input = LineReader::new(BufReader::new(input), MAX_MESSAGE_BYTES, Overflow::Pass);
        // Inside an over-long line whose pieces are being copied on.
        let mut passing = false;
        let mut taken = true;
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
            if taken && let Err(e) = sent.await {
                tracing::debug!(error = %e, "the companion stopped taking requests");
                taken = false;
            }
            if matches!(read, Read::Last | Read::Eof) {
                break;
            }
        }
        if !taken {
            return false;
        }
        // The client closed stdin: on Unix the companion sees end of file; answers still come.
        if let Err(e) = sock_wr.shutdown().await {
            tracing::debug!(error = %e, "could not half-close the connection");
        }
        true
    };
    let downward = async {
        let mut sock_rd =
            LineReader::new(BufReader::new(sock_rd), MAX_MESSAGE_BYTES, Overflow::Pass);
        let bound = crate::ipc::quick::bound();
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
                        let why = crate::ipc::quick::unanswered("the agent's first request", bound);
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
            if let Some(message) = connection_limit_refusal(line) {
                let _ = tokio::time::timeout(FIRST_REQUEST_WAIT, in_flight.requested()).await;
                let why = format!("{message}; the request was not run");
                answer_gone(&mut output, &in_flight.take_all(), &why).await?;
                return Ok(Down::Refused(message));
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
        let why = "the companion closed the connection before answering (it stopped or crashed); the request may or may not have run";
        answer_gone(&mut output, &unanswered, why).await?;
        Ok::<_, std::io::Error>(Down::HungUp(unanswered.len()))
    };
    tokio::pin!(upward, downward);
    let mut upward_done = false;
    loop {
        tokio::select! {
            r = &mut downward => {
                return match r? {
                    Down::Refused(message) => Err(BridgeError::AtConnectionLimit { message }),
                    Down::HungUp(unanswered) if !in_flight.has_input_ended() => {
                        Err(BridgeError::CompanionClosed { unanswered })
                    }
                    Down::Silent(why) => Err(BridgeError::Unanswered(why)),
                    Down::HungUp(..) | Down::Done => Ok(()),
                };
            }
            input_ended = &mut upward, if !upward_done => {
                upward_done = true;
                in_flight.reading_ended();
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
