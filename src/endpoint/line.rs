//! The wire of one agent connection: newline-delimited JSON-RPC 2.0, with the answers JSON-RPC
//! requires for lines rmcp's own reader would drop without a word or misfile as unknown methods.
//!
//! | line | answer | then |
//! |---|---|---|
//! | not JSON (or not UTF-8) | -32700 parse error, `"id": null` | next line |
//! | longer than the limit | -32700 parse error, `"id": null`, naming the limit | rest of the line skipped |
//! | JSON, but not a JSON-RPC message: no `"jsonrpc": "2.0"`, no string `method` (and no `result`/`error`), an id that is not a string or an integer, an array (batch), a bare value | -32600 invalid request saying which (`shape.rs`), that `id` (`null` when there is none or it is unusable) | next line |
//! | a notification (`"jsonrpc": "2.0"`, a string `method`, no `id`) rmcp cannot read | none: JSON-RPC never answers notifications | next line |
//! | a request for a method the endpoint serves whose `params` do not fit (not an object, a member missing or mistyped, a prompt argument that is not a string) | -32602 invalid params, saying what is wrong without Rust type names (`params.rs`) | next line |
//! | a `tools/call` (or its `notifications/cancelled`) the [`Tap`] takes (the fast path, [`super::fast::Relay`]) | its one answer, written when the call ends | next line |
//! | anything else | handed to rmcp's service loop | — |
//!
//! The connection stays open in every case. Our answers are written by a spawned task (so a
//! cancelled `receive` never leaves half a line on the socket) that the next `receive` waits
//! for, so an answer always goes out before anything the following lines cause.
//!
//! With a line deadline ([`LineTransport::with_line_deadline`]), a line whose newline has not
//! come that long after its first byte ends the connection ([`End::Stalled`]). The bounds on
//! what a connection may have in flight are a layer above ([`super::bounded`]).

mod judge;
mod params;
mod shape;

use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ErrorCode, ErrorData, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

use crate::io::{LineReader, Overflow, Read};

pub use judge::{Verdict, judge};
pub use params::params_problem;

/// The write half of an agent connection, shared by everyone who answers on it. Each holder
/// writes whole lines while holding the lock, so lines never interleave.
pub type SharedWrite<W> = Arc<Mutex<W>>;

/// Sees every complete line of a connection before it is judged, and takes the lines it
/// answers itself (the fast path, [`super::fast::Relay`]).
pub trait Tap: Send {
    /// Offers one complete line (its `\n` included); `true` when the tap took it. A taken
    /// line is neither judged nor handed to rmcp; the tap answers it (or not) on its own,
    /// through the connection's [`SharedWrite`].
    fn take(&mut self, line: &[u8]) -> bool;
}

/// What one [`LineTransport::step`] read.
#[derive(Debug)]
pub enum Step {
    /// A message for rmcp's service loop.
    Message(Box<ClientJsonRpcMessage>),
    /// A line the [`Tap`] took.
    Taken,
    /// The input ended; [`LineTransport::end`] says how.
    End,
}

/// A newline-delimited JSON-RPC transport for the server side of an agent connection.
pub struct LineTransport<R, W> {
    /// The line being read survives a cancelled `receive` in here.
    read: LineReader<BufReader<R>>,
    write: SharedWrite<W>,
    /// The write of our last answer, awaited before the next line is read.
    answering: Option<JoinHandle<()>>,
    /// How long a line may take from its first byte to its newline (for the log line).
    line_deadline: Option<Duration>,
    /// Why `receive` last returned `None`.
    end: End,
    /// The fast path, when on: sees each line before it is judged.
    tap: Option<Box<dyn Tap>>,
}

/// Why [`LineTransport`]'s `receive` returned `None`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// It has not.
    Open,
    /// End of input: the agent closed its side (possibly only its sending half).
    Eof,
    /// Reading failed (e.g. the connection was reset).
    Failed,
    /// A line was begun and not finished within the line deadline.
    Stalled,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// A transport on `read`/`write` accepting lines up to `max_line` bytes (newline excluded).
    pub fn new(read: R, write: W, max_line: usize) -> Self {
        LineTransport {
            read: LineReader::new(BufReader::new(read), max_line, Overflow::Skip),
            write: Arc::new(Mutex::new(write)),
            answering: None,
            line_deadline: None,
            end: End::Open,
            tap: None,
        }
    }

    /// Ends the connection when a line's newline has not come `deadline` after its first byte.
    #[must_use]
    pub fn with_line_deadline(mut self, deadline: Duration) -> Self {
        self.line_deadline = Some(deadline);
        self.read = self.read.with_line_deadline(deadline);
        self
    }

    /// Why `receive` returned `None` ([`End::Open`] while it has not).
    pub fn end(&self) -> End {
        self.end
    }

    /// Writes `bytes` (one whole line, newline included) after any write already queued; the
    /// returned future does not borrow the transport.
    pub fn write_line(
        &self,
        bytes: Vec<u8>,
    ) -> impl Future<Output = std::io::Result<()>> + Send + 'static {
        let write = self.write.clone();
        async move {
            let mut w = write.lock().await;
            write_all_flush(&mut *w, &bytes).await
        }
    }

    /// The transport with `tap` seeing every complete line first (the fast path).
    #[must_use]
    pub fn with_tap(mut self, tap: Box<dyn Tap>) -> Self {
        self.tap = Some(tap);
        self
    }

    /// The connection's write half, for a [`Tap`] that answers on it.
    pub fn shared_write(&self) -> SharedWrite<W> {
        self.write.clone()
    }

    /// Reads lines until one is for the layer above: a message for rmcp, a line the [`Tap`]
    /// took, or the end of input. Malformed lines are answered on the way (the module doc).
    /// Cancel-safe: a line is judged only once complete, with no wait in between.
    ///
    /// At the end of input it returns at once, whatever the tap still has running: the layer
    /// above ([`super::bounded::Bounded`]) waits for those calls through its budget.
    pub async fn step(&mut self) -> Step {
        loop {
            if let Some(answering) = self.answering.as_mut() {
                let _ = answering.await;
                self.answering = None;
            }
            match self.read.next().await {
                Ok(Read::Line) => {
                    let taken = self
                        .tap
                        .as_mut()
                        .is_some_and(|tap| tap.take(self.read.line()));
                    let message = if taken { None } else { self.classify() };
                    if taken {
                        return Step::Taken;
                    }
                    if let Some(message) = message {
                        return Step::Message(Box::new(message));
                    }
                }
                Ok(Read::TooLong) => {
                    let message = format!(
                        "parse error: message longer than {} bytes; skipped",
                        self.read.max()
                    );
                    self.answer(
                        Value::Null,
                        ErrorData::new(ErrorCode::PARSE_ERROR, message, None),
                    );
                }
                // A last message without its newline is not a message (as for rmcp's reader).
                Ok(Read::Eof | Read::Last) => {
                    self.end = End::Eof;
                    return Step::End;
                }
                // Only `Overflow::Pass` hands on pieces.
                Ok(Read::Piece) => {}
                Ok(Read::Stalled) => {
                    tracing::info!(
                        received_bytes = self.read.line().len(),
                        "agent connection sent part of a message and not its end within {} s; closing it",
                        self.line_deadline.unwrap_or_default().as_secs()
                    );
                    self.end = End::Stalled;
                    return Step::End;
                }
                Err(e) => {
                    tracing::debug!(error = %e, "agent connection read failed");
                    self.end = End::Failed;
                    return Step::End;
                }
            }
        }
    }

    /// Sends `error` (for `id`, `null` when unknown) from a spawned task.
    fn answer(&mut self, id: Value, error: ErrorData) {
        let mut bytes = json!({"jsonrpc": "2.0", "id": id, "error": error}).to_string();
        bytes.push('\n');
        let write = self.write.clone();
        self.answering = Some(tokio::spawn(async move {
            let mut w = write.lock().await;
            if let Err(e) = write_all_flush(&mut *w, bytes.as_bytes()).await {
                tracing::debug!(error = %e, "could not answer a malformed message");
            }
        }));
    }

    /// Hands one complete line to [`judge`] and sends its answer, if any.
    fn classify(&mut self) -> Option<ClientJsonRpcMessage> {
        match judge(self.read.line()) {
            Verdict::Deliver(mut message) => {
                // A call's arguments go upstream as the agent wrote them.
                crate::upstream::exact::keep_arguments(self.read.line(), &mut message);
                Some(*message)
            }
            Verdict::Answer { id, error } => {
                self.answer(id, error);
                None
            }
            Verdict::Ignore => None,
        }
    }
}

/// `message` as one line: its JSON and a newline (a `tools/list` answer with each tool's
/// `execution` back in place, an `initialize` answer with its `tasks` capability,
/// [`crate::catalog::execution`]; a request with the `progressToken` its server gave it, or
/// none, [`crate::upstream::sent_token`]: the companion follows no agent's progress; a
/// server's request or tool result with the text the server sent, [`crate::upstream::exact`]).
///
/// # Errors
/// When it does not serialise (a bug: every model type does).
pub fn encode_line(mut message: ServerJsonRpcMessage) -> std::io::Result<Vec<u8>> {
    if let Some(mut bytes) = exact_line(&mut message).transpose()? {
        bytes.push(b'\n');
        return Ok(bytes);
    }
    match &mut message {
        rmcp::model::JsonRpcMessage::Request(request) => {
            crate::upstream::sent_token::as_sent(&mut request.request);
        }
        rmcp::model::JsonRpcMessage::Error(error) => super::unknown_method::plain(&mut error.error),
        _ => {}
    }
    let message = &message;
    let mut bytes = match message {
        // A tool's `execution` travels in its `_meta` inside the companion (`catalog::execution`).
        rmcp::model::JsonRpcMessage::Response(rmcp::model::JsonRpcResponse {
            result: rmcp::model::ServerResult::ListToolsResult(list),
            ..
        }) if crate::catalog::execution::any_stashed(&list.tools) => {
            let mut value = serde_json::to_value(message)?;
            if let Some(result) = value.get_mut("result") {
                crate::catalog::execution::unstash(result);
            }
            serde_json::to_vec(&value)?
        }
        // So does the `tasks` capability, in `experimental`.
        rmcp::model::JsonRpcMessage::Response(rmcp::model::JsonRpcResponse {
            result: rmcp::model::ServerResult::InitializeResult(init),
            ..
        }) if init
            .capabilities
            .experimental
            .as_ref()
            .is_some_and(|e| e.contains_key(crate::catalog::execution::TASKS_STASH)) =>
        {
            let mut value = serde_json::to_value(message)?;
            if let Some(result) = value.get_mut("result") {
                crate::catalog::execution::unstash_capabilities(result);
            }
            serde_json::to_vec(&value)?
        }
        _ => serde_json::to_vec(message)?,
    };
    bytes.push(b'\n');
    Ok(bytes)
}

/// `message` as the server that it comes from wrote it, when its text was kept.
fn exact_line(message: &mut ServerJsonRpcMessage) -> Option<serde_json::Result<Vec<u8>>> {
    use crate::upstream::exact;
    use rmcp::model::{GetExtensions, JsonRpcMessage, JsonRpcResponse, ServerResult};
    match message {
        JsonRpcMessage::Request(request) => {
            let params = request
                .request
                .extensions()
                .get::<exact::ExactParams>()?
                .0
                .clone();
            exact::request_line(&request.id, &request.request, &params)
        }
        JsonRpcMessage::Response(JsonRpcResponse {
            id,
            result: ServerResult::CallToolResult(result),
            ..
        }) => {
            let text = exact::take_result(result)?;
            Some(exact::response_line(id, &text, result.result_type.as_ref()))
        }
        JsonRpcMessage::Notification(note) => match &note.notification {
            rmcp::model::ServerNotification::ProgressNotification(progress) => {
                exact::progress_line(&progress.params).map(Ok)
            }
            _ => None,
        },
        _ => None,
    }
}

async fn write_all_flush<W: AsyncWrite + Unpin>(w: &mut W, bytes: &[u8]) -> std::io::Result<()> {
    w.write_all(bytes).await?;
    w.flush().await
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = encode_line(item).map(|bytes| self.write_line(bytes));
        async move { write?.await }
    }

    async fn receive(&mut self) -> Option<rmcp::service::RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.step().await {
                Step::Message(message) => return Some(*message),
                Step::Taken => {}
                Step::End => return None,
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.lock().await.shutdown().await
    }
}

#[cfg(test)]
mod tests;
