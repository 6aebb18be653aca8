//! The wire of one agent connection: newline-delimited JSON-RPC 2.0, with the answers JSON-RPC
//! requires for lines rmcp's own reader would drop without a word or misfile as unknown methods.
//!
//! | line | answer | then |
//! |---|---|---|
//! | not JSON (or not UTF-8) | -32700 parse error, `"id": null` | next line |
//! | longer than the limit | -32700 parse error, `"id": null`, naming the limit | rest of the line skipped |
//! | JSON, but not a JSON-RPC message: an object with an `id`, an array, a bare value | -32600 invalid request, that `id` (`null` when there is none or it is unusable) | next line |
//! | an object without an `id` that is not a valid notification | none: JSON-RPC never answers notifications | next line |
//! | a request for a method the endpoint serves whose `params` do not fit | -32602 invalid params, saying what is wrong | next line |
//! | a `tools/call` (or its `notifications/cancelled`) the fast path takes ([`Relay`]) | its one answer, written when the call ends | next line |
//! | anything else | handed to rmcp's service loop | — |
//!
//! The connection stays open in every case. Our answers are written by a spawned task (so a
//! cancelled `receive` never leaves half a line on the socket) that the next `receive` waits
//! for, so an answer always goes out before anything the following lines cause.
//!
//! With a line deadline ([`LineTransport::with_line_deadline`]), a line whose newline has not
//! come that long after its first byte ends the connection ([`End::Stalled`]). The bounds on
//! what a connection may have in flight are a layer above ([`super::bounded`]).

use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleServer;
#[expect(
    deprecated,
    reason = "logging/setLevel is deprecated by SEP-2577; 2025-era clients still send it"
)]
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, ErrorCode, ErrorData,
    InitializeRequestParams, JsonRpcMessage, JsonRpcRequest, PaginatedRequestParams,
    ServerJsonRpcMessage,
};
use rmcp::transport::Transport;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

/// How long the answers of calls in flight may still be written once the agent's input ended
/// (rmcp's drain time for its own requests).
pub const DRAIN_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

use super::fast::{Relay, Taken};

/// A newline-delimited JSON-RPC transport for the server side of an agent connection.
pub struct LineTransport<R, W> {
    read: BufReader<R>,
    /// The line being read; survives a cancelled `receive`.
    line: Vec<u8>,
    /// Skipping the rest of an oversized line.
    discarding: bool,
    max_line: usize,
    write: Arc<Mutex<W>>,
    /// The write of our last answer, awaited before the next line is read.
    answering: Option<JoinHandle<()>>,
    /// How long a line may take from its first byte to its newline.
    line_deadline: Option<Duration>,
    /// When the line being read (or skipped) began.
    line_started: Option<Instant>,
    /// Why `receive` last returned `None`.
    end: End,
    /// The fast path, when on: sees each line before it is judged.
    relay: Option<Relay>,
    /// The fast-path calls still running, each writing its own answer.
    forwarded: JoinSet<()>,
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
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            max_line,
            write: Arc::new(Mutex::new(write)),
            answering: None,
            line_deadline: None,
            line_started: None,
            end: End::Open,
            relay: None,
            forwarded: JoinSet::new(),
        }
    }

    /// Ends the connection when a line's newline has not come `deadline` after its first byte.
    #[must_use]
    pub fn with_line_deadline(mut self, deadline: Duration) -> Self {
        self.line_deadline = Some(deadline);
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

    /// The transport with `relay` taking the lines of the fast path ([`super::fast`]).
    pub fn with_relay(mut self, relay: Relay) -> Self {
        self.relay = Some(relay);
        self
    }

    /// At the end of the agent's input, as rmcp does for its own requests: lets the fast-path
    /// calls in flight write their answers for up to [`DRAIN_GRACE`], then cancels the rest
    /// (upstream too). Cancel-safe: a dropped drain resumes on the next `receive`.
    async fn drain_forwarded(&mut self) {
        if self.relay.is_none() {
            return;
        }
        let drained = tokio::time::timeout(DRAIN_GRACE, async {
            while self.forwarded.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            tracing::debug!("fast-path calls still running at the end of input; cancelled");
        }
        // Dropping the relay cancels what is left.
        self.relay = None;
    }

    /// Offers the complete line to the fast path; `true` when it took it. A taken call runs
    /// on its own task and writes its answer when it ends, so calls overlap freely.
    fn relay(&mut self) -> bool {
        let Some(relay) = self.relay.as_mut() else {
            return false;
        };
        match relay.take(&self.line) {
            Taken::No => false,
            Taken::Done => true,
            Taken::Call(forward) => {
                while self.forwarded.try_join_next().is_some() {}
                let write = self.write.clone();
                self.forwarded.spawn(async move {
                    let Some(reply) = forward.await else { return };
                    let mut w = write.lock().await;
                    if let Err(e) = reply.write_to(&mut *w).await {
                        tracing::debug!(error = %e, "could not answer a call");
                    }
                });
                true
            }
        }
    }

    /// Reads up to and including the next `\n` into `self.line`, never holding more than
    /// `max_line` bytes. Cancel-safe: bytes are moved into `self.line` and consumed together.
    async fn read_line(&mut self) -> std::io::Result<Line> {
        loop {
            let deadline = self
                .line_deadline
                .zip(self.line_started)
                .map(|(d, started)| started + d);
            let available = match deadline {
                Some(at) => match tokio::time::timeout_at(at, self.read.fill_buf()).await {
                    Ok(read) => read?,
                    Err(_) => return Ok(Line::Stalled),
                },
                None => self.read.fill_buf().await?,
            };
            if available.is_empty() {
                return Ok(Line::Eof);
            }
            if self.line_started.is_none() {
                self.line_started = Some(Instant::now());
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let outcome = if self.discarding {
                if newline.is_some() {
                    self.discarding = false;
                }
                None
            } else if self.line.len() + take > self.max_line + 1 {
                self.line.clear();
                self.discarding = newline.is_none();
                Some(Line::Oversized)
            } else {
                self.line.extend_from_slice(&available[..take]);
                newline.map(|_| Line::Complete)
            };
            self.read.consume(take);
            if newline.is_some() {
                self.line_started = None;
            }
            if let Some(outcome) = outcome {
                return Ok(outcome);
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
        match judge(&self.line) {
            Verdict::Deliver(message) => Some(*message),
            Verdict::Answer { id, error } => {
                self.answer(id, error);
                None
            }
            Verdict::Ignore => None,
        }
    }
}

/// What the endpoint does with one line from an agent.
#[derive(Debug)]
pub enum Verdict {
    /// A JSON-RPC message for rmcp's service loop.
    Deliver(Box<ClientJsonRpcMessage>),
    /// Answer with this error (`id` is `null` when unknown) and read on.
    Answer {
        /// The request id, or `null`.
        id: Value,
        /// The JSON-RPC error.
        error: ErrorData,
    },
    /// Say nothing: a blank line or a malformed notification.
    Ignore,
}

/// Judges one line (with or without its `\n`) as the table in the module doc says. Pure, so
/// that it can be fuzzed.
pub fn judge(line: &[u8]) -> Verdict {
    let line = trim_line(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Ignore;
    }
    let message = match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(message) => message,
        Err(e) if e.is_syntax() || e.is_eof() || std::str::from_utf8(line).is_err() => {
            return Verdict::Answer {
                id: Value::Null,
                error: ErrorData::parse_error(format!("parse error: {e}"), None),
            };
        }
        Err(e) => {
            let value: Value = serde_json::from_slice(line).unwrap_or(Value::Null);
            let id = match &value {
                // JSON-RPC never answers a notification, even a malformed one.
                Value::Object(fields) if !fields.contains_key("id") => {
                    tracing::debug!(error = %e, "malformed notification dropped");
                    return Verdict::Ignore;
                }
                Value::Object(fields) => {
                    let id = fields.get("id").map_or(Value::Null, usable_id);
                    let method = fields.get("method").and_then(Value::as_str);
                    if let Some(problem) =
                        method.and_then(|m| params_problem(m, fields.get("params")))
                    {
                        let method = method.unwrap_or_default();
                        return Verdict::Answer {
                            id,
                            error: ErrorData::invalid_params(
                                format!("invalid params for {method}: {problem}"),
                                None,
                            ),
                        };
                    }
                    id
                }
                // Arrays (JSON-RPC batches, which MCP does not use) and bare values.
                _ => Value::Null,
            };
            let message = format!("invalid request: {e}");
            return Verdict::Answer {
                id,
                error: ErrorData::invalid_request(message, None),
            };
        }
    };
    let JsonRpcMessage::Request(JsonRpcRequest { id, request, .. }) = &message else {
        return Verdict::Deliver(Box::new(message));
    };
    // rmcp files a request with unusable required params as a custom request (answered
    // -32601), and reads unusable optional params as none; both deserve -32602.
    let problem = match request {
        ClientRequest::CustomRequest(custom) => {
            params_problem(&custom.method, custom.params.as_ref())
                .map(|p| (custom.method.clone(), p))
        }
        ClientRequest::ListToolsRequest(_) | ClientRequest::PingRequest(_) => {
            let method = request.method().to_owned();
            let value: Value = serde_json::from_slice(line).unwrap_or(Value::Null);
            params_problem(&method, value.get("params")).map(|p| (method, p))
        }
        _ => None,
    };
    match problem {
        Some((method, problem)) => Verdict::Answer {
            // Echoed as sent: rmcp reads an id such as `0.0` as the integer 0.
            id: serde_json::from_slice::<Value>(line)
                .ok()
                .and_then(|v| v.get("id").map(usable_id))
                .unwrap_or_else(|| serde_json::to_value(id).unwrap_or(Value::Null)),
            error: ErrorData::invalid_params(
                format!("invalid params for {method}: {problem}"),
                None,
            ),
        },
        None => Verdict::Deliver(Box::new(message)),
    }
}

enum Line {
    Complete,
    Oversized,
    Eof,
    Stalled,
}

/// The line without its `\n`, a `\r` before it, or a UTF-8 byte-order mark.
fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

/// A request `id` as JSON-RPC allows it (string or number), else `null`.
fn usable_id(id: &Value) -> Value {
    match id {
        Value::String(_) | Value::Number(_) => id.clone(),
        _ => Value::Null,
    }
}

/// Why `params` do not fit `method`, for the methods the endpoint serves; `None` when they
/// fit or the method is not one of ours (rmcp answers -32601 for those).
///
/// rmcp files a request whose `params` do not deserialise as a custom request, which would be
/// answered "method not found"; this names the real problem.
pub fn params_problem(method: &str, params: Option<&Value>) -> Option<String> {
    fn check<T: DeserializeOwned>(params: Option<&Value>, required: bool) -> Option<String> {
        match params {
            None | Some(Value::Null) if required => Some("params are missing".into()),
            None | Some(Value::Null) => None,
            Some(p) => serde_json::from_value::<T>(p.clone())
                .err()
                .map(|e| e.to_string()),
        }
    }
    match method {
        "tools/call" => check::<CallToolRequestParams>(params, true),
        "tools/list" => check::<PaginatedRequestParams>(params, false),
        "initialize" => check::<InitializeRequestParams>(params, true),
        "logging/setLevel" =>
        {
            #[expect(deprecated, reason = "see the import")]
            check::<SetLevelRequestParams>(params, true)
        }
        "ping" => match params {
            None | Some(Value::Null | Value::Object(_)) => None,
            Some(_) => Some("params must be an object".into()),
        },
        _ => None,
    }
}

/// `message` as one line: its JSON and a newline.
///
/// # Errors
/// When it does not serialise (a bug: every model type does).
pub fn encode_line(message: &ServerJsonRpcMessage) -> std::io::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec(message)?;
    bytes.push(b'\n');
    Ok(bytes)
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
        let write = encode_line(&item).map(|bytes| self.write_line(bytes));
        async move { write?.await }
    }

    async fn receive(&mut self) -> Option<rmcp::service::RxJsonRpcMessage<RoleServer>> {
        loop {
            if let Some(answering) = self.answering.as_mut() {
                let _ = answering.await;
                self.answering = None;
            }
            match self.read_line().await {
                Ok(Line::Complete) => {
                    if self.relay() {
                        self.line.clear();
                        continue;
                    }
                    let message = self.classify();
                    self.line.clear();
                    if let Some(message) = message {
                        return Some(message);
                    }
                }
                Ok(Line::Oversized) => {
                    let message = format!(
                        "parse error: message longer than {} bytes; skipped",
                        self.max_line
                    );
                    self.answer(
                        Value::Null,
                        ErrorData::new(ErrorCode::PARSE_ERROR, message, None),
                    );
                }
                Ok(Line::Eof) => {
                    self.end = End::Eof;
                    self.drain_forwarded().await;
                    return None;
                }
                Ok(Line::Stalled) => {
                    tracing::info!(
                        received_bytes = self.line.len(),
                        "agent connection sent part of a message and not its end within {} s; closing it",
                        self.line_deadline.unwrap_or_default().as_secs()
                    );
                    self.end = End::Stalled;
                    return None;
                }
                Err(e) => {
                    tracing::debug!(error = %e, "agent connection read failed");
                    self.end = End::Failed;
                    self.drain_forwarded().await;
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.lock().await.shutdown().await
    }
}

impl<R, W> Drop for LineTransport<R, W> {
    fn drop(&mut self) {
        // The calls see their relay go (it is dropped after this) and end on their own,
        // sending `notifications/cancelled` upstream; aborting them here would skip that.
        self.forwarded.detach_all();
    }
}

#[cfg(test)]
mod tests;
