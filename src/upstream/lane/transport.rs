//! [`LaneTransport`]: the read half of a stdio session, below rmcp's service loop. It reads the
//! server's stdout one bounded line at a time, hands answers to fast-lane requests to their
//! tickets, and decodes everything else for rmcp with rmcp's own rules for stdio:
//!
//! | line | rmcp's stdio transport | here |
//! |---|---|---|
//! | answer to a waiting `"fp-<n>"` request | — | raw bytes to its [`super::Ticket`] |
//! | a JSON-RPC message | decoded | decoded |
//! | not JSON | skipped (logged) | skipped (logged) |
//! | a notification rmcp does not know | skipped | skipped |
//! | other JSON that is not a message | answered `-32600 Invalid request` | the same |
//! | longer than the limit | skipped (logged) | skipped (logged) |
//! | end of output / read error | the session ends | the session ends; waiting tickets get [`LaneEnd::Lost`] |

use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

use super::peek::fast_id;
use super::{FastLane, LaneEnd};

/// Read buffer size: large enough that a big answer takes few reads.
const READ_BUFFER: usize = 64 * 1024;

/// rmcp's upstream transport for a stdio server with a [`FastLane`] (see the module doc).
pub struct LaneTransport<R> {
    read: BufReader<R>,
    /// The line being read; survives a cancelled `receive`.
    line: Vec<u8>,
    /// Skipping the rest of an oversized line.
    discarding: bool,
    max_line: usize,
    lane: FastLane,
}

enum Line {
    Complete,
    Oversized,
    Eof,
}

impl<R: AsyncRead + Send + Unpin> LaneTransport<R> {
    /// Reads `read` (the server's stdout) for `lane`, accepting lines up to `max_line` bytes.
    pub fn new(read: R, lane: FastLane, max_line: usize) -> Self {
        LaneTransport {
            read: BufReader::with_capacity(READ_BUFFER, read),
            line: Vec::new(),
            discarding: false,
            max_line,
            lane,
        }
    }

    /// Reads up to and including the next `\n` into `self.line`. Cancel-safe: bytes move into
    /// `self.line` and are consumed together. The buffer grows by at most a quarter of what it
    /// holds (or one read) at a time, so a large line costs at most ~1.25× its size, not the
    /// up-to-2× of doubling.
    async fn read_line(&mut self) -> std::io::Result<Line> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(Line::Eof);
            }
            let newline = memchr::memchr(b'\n', available);
            let take = newline.map_or(available.len(), |i| i + 1);
            let outcome = if self.discarding {
                if newline.is_some() {
                    self.discarding = false;
                }
                None
            } else if self.line.len() + take > self.max_line + 1 {
                self.line = Vec::new();
                self.discarding = newline.is_none();
                Some(Line::Oversized)
            } else {
                let spare = self.line.capacity() - self.line.len();
                if spare < take {
                    let grow = take.max(self.line.len() / 4);
                    let room = (self.max_line + 1).saturating_sub(self.line.len());
                    self.line.reserve_exact(grow.min(room).max(take));
                }
                self.line.extend_from_slice(&available[..take]);
                newline.map(|_| Line::Complete)
            };
            self.read.consume(take);
            if let Some(outcome) = outcome {
                return Ok(outcome);
            }
        }
    }

    /// The message in the complete line `self.line` for rmcp, if any; answers of fast-lane
    /// requests go to their tickets.
    fn route(&mut self) -> Option<ServerJsonRpcMessage> {
        if self.lane.has_waiting()
            && let Some(n) = fast_id(&self.line)
        {
            let line = std::mem::take(&mut self.line);
            match self.lane.deliver(n, line) {
                Ok(()) => return None,
                Err(line) => {
                    // Its caller left (cancelled or timed out): the answer is not wanted.
                    tracing::debug!(
                        request = n,
                        bytes = line.len(),
                        "late fast-lane answer dropped"
                    );
                    return None;
                }
            }
        }
        let parsed = decode(&self.line, &self.lane);
        if self.line.capacity() > READ_BUFFER * 4 {
            // Do not keep a large answer's buffer for the small lines that follow.
            self.line = Vec::new();
        } else {
            self.line.clear();
        }
        parsed
    }
}

/// Decodes one line for rmcp with the rules of rmcp's stdio transport (module doc).
fn decode(line: &[u8], lane: &FastLane) -> Option<ServerJsonRpcMessage> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.is_empty() {
        return None;
    }
    let e = match serde_json::from_slice::<ServerJsonRpcMessage>(line) {
        Ok(message) => return Some(message),
        Err(e) => e,
    };
    if e.is_syntax() || e.is_eof() {
        tracing::debug!(error = %e, "ignoring a line that is not JSON");
        return None;
    }
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(line)
        && let Some(method) = value.get("method").and_then(serde_json::Value::as_str)
        && ignored_notification(value.get("id").is_none(), method)
    {
        return None;
    }
    tracing::debug!(error = %e, "answering a message that is not JSON-RPC with -32600");
    let lane = lane.clone();
    tokio::spawn(async move {
        let frame = b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid request\"}}\n";
        let _ = lane.write_frame(frame).await;
    });
    None
}

/// rmcp skips notifications it does not know (LSP-style and non-standard MCP ones).
fn ignored_notification(is_notification: bool, method: &str) -> bool {
    const STANDARD_NOTIFICATIONS: &[&str] = &[
        "notifications/cancelled",
        "notifications/initialized",
        "notifications/message",
        "notifications/progress",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
        "notifications/roots/list_changed",
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
    ];
    const STANDARD_REQUESTS: &[&str] = &[
        "initialize",
        "ping",
        "server/discover",
        "prompts/get",
        "prompts/list",
        "resources/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "resources/templates/list",
        "subscriptions/listen",
        "tools/call",
        "tools/list",
        "completion/complete",
        "elicitation/create",
        "logging/setLevel",
        "roots/list",
        "sampling/createMessage",
    ];
    let standard_notification = STANDARD_NOTIFICATIONS.contains(&method);
    let standard = standard_notification || STANDARD_REQUESTS.contains(&method);
    (is_notification && !standard)
        || (method.starts_with("notifications/") && !standard_notification)
}

impl<R: AsyncRead + Send + Unpin> Transport<RoleClient> for LaneTransport<R> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let lane = self.lane.clone();
        async move {
            let mut frame = serde_json::to_vec(&item)?;
            frame.push(b'\n');
            lane.write_frame(&frame).await
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            match self.read_line().await {
                Ok(Line::Complete) => {
                    if let Some(message) = self.route() {
                        return Some(message);
                    }
                }
                Ok(Line::Oversized) => {
                    tracing::error!(
                        max_line_length = self.max_line,
                        "Incoming message exceeded the maximum line length, discarding it"
                    );
                }
                Ok(Line::Eof) => {
                    self.lane.end(LaneEnd::Lost("the connection closed".into()));
                    return None;
                }
                Err(e) => {
                    tracing::error!(error = %e, "reading from the server failed");
                    self.lane.end(LaneEnd::Lost(format!(
                        "reading from the server failed: {e}"
                    )));
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.lane.end(LaneEnd::Closed);
        self.lane.close_writer().await;
        Ok(())
    }
}

impl<R> Drop for LaneTransport<R> {
    fn drop(&mut self) {
        self.lane.end(LaneEnd::Closed);
    }
}
