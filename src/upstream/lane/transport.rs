//! [`LaneTransport`]: the read half of a stdio session, below rmcp's service loop. It reads the
//! server's stdout one bounded line at a time, hands answers to fast-lane requests to their
//! tickets, and decodes everything else for rmcp with rmcp's own rules for stdio:
//!
//! | line | rmcp's stdio transport | here |
//! |---|---|---|
//! | answer to a waiting `"fp-<n>"` request | — | raw bytes to its [`super::Ticket`] |
//! | a JSON-RPC message | decoded | decoded (a `tools/list` answer with each tool's `execution` kept in its `_meta`, [`crate::upstream::listing::keep_execution`]) |
//! | not JSON | skipped (logged) | skipped (logged) |
//! | a notification rmcp does not know | skipped | skipped |
//! | an answer (id, no method) that does not decode, e.g. both `result` and `error` | skipped: its request waits for its timeout | a JSON-RPC error `-32603` for that id, logged once |
//! | other JSON that is not a message | answered `-32600 Invalid request` | the same |
//! | longer than the limit | skipped (logged) | skipped (logged) |
//! | end of output / read error | the session ends | the session ends; waiting tickets get [`LaneEnd::Lost`] |

use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncRead, BufReader};

use super::peek::fast_id;
use super::{FastLane, LaneEnd};
use crate::io::{LineReader, Overflow, Read};

/// Read buffer size: large enough that a big answer takes few reads.
const READ_BUFFER: usize = 64 * 1024;

/// rmcp's upstream transport for a stdio server with a [`FastLane`] (see the module doc).
pub struct LaneTransport<R> {
    /// The line being read survives a cancelled `receive` in here.
    read: LineReader<BufReader<R>>,
    lane: FastLane,
}

impl<R: AsyncRead + Send + Unpin> LaneTransport<R> {
    /// Reads `read` (the server's stdout) for `lane`, accepting lines up to `max_line` bytes.
    pub fn new(read: R, lane: FastLane, max_line: usize) -> Self {
        LaneTransport {
            read: LineReader::new(
                BufReader::with_capacity(READ_BUFFER, read),
                max_line,
                Overflow::Skip,
            ),
            lane,
        }
    }

    /// The message in the complete line just read for rmcp, if any; answers of fast-lane
    /// requests go to their tickets.
    fn route(&mut self) -> Option<ServerJsonRpcMessage> {
        if self.lane.has_waiting()
            && let Some(n) = fast_id(self.read.line())
        {
            let line = self.read.take_line();
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
        decode(self.read.line(), &self.lane)
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
    let kept = crate::upstream::listing::keep_execution(line);
    let line = kept.as_deref().unwrap_or(line);
    let e = match serde_json::from_slice::<ServerJsonRpcMessage>(line) {
        Ok(mut message) => {
            crate::upstream::exact::keep(line, &mut message);
            return Some(message);
        }
        Err(e) => e,
    };
    if let Some(message) = without_unreadable_items(line) {
        return Some(message);
    }
    if e.is_syntax() || e.is_eof() {
        tracing::debug!(error = %e, "ignoring a line that is not JSON");
        return None;
    }
    let value = serde_json::from_slice::<serde_json::Value>(line).ok();
    if let Some(value) = &value
        && let Some(method) = value.get("method").and_then(serde_json::Value::as_str)
        && ignored_notification(value.get("id").is_none(), method)
    {
        return None;
    }
    if let Some(answer) = value.as_ref().and_then(|v| unreadable_answer(v, &e)) {
        return Some(answer);
    }
    tracing::debug!(error = %e, "answering a message that is not JSON-RPC with -32600");
    let lane = lane.clone();
    tokio::spawn(async move {
        let frame = b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid request\"}}\n";
        let _ = lane.write_frame(frame).await;
    });
    None
}

/// The listings a server answers with: a `result` member holding one of these arrays.
const LISTS: &[&str] = &["tools", "resources", "resourceTemplates", "prompts"];

/// A listing answer (`result.tools`, `…resources`, …) that does not decode because some of its
/// items cannot be read as JSON (nested past serde_json's recursion limit of 128, say), decoded
/// without those items, each skipped with a warning: one bad capability must not keep the
/// server from starting. `None` when nothing was skipped (or the line is no listing).
fn without_unreadable_items(line: &[u8]) -> Option<ServerJsonRpcMessage> {
    use serde_json::value::RawValue;
    // Members are captured raw: capturing does not recurse, so depth does not fail it.
    let mut top =
        serde_json::from_slice::<std::collections::BTreeMap<String, Box<RawValue>>>(line).ok()?;
    let mut result = serde_json::from_str::<std::collections::BTreeMap<String, Box<RawValue>>>(
        top.get("result")?.get(),
    )
    .ok()?;
    let mut skipped = 0;
    for list in LISTS {
        let Some(items) = result.get(*list) else {
            continue;
        };
        let Ok(items) = serde_json::from_str::<Vec<Box<RawValue>>>(items.get()) else {
            continue;
        };
        let mut kept: Vec<serde_json::Value> = Vec::with_capacity(items.len());
        for item in items {
            // An item must be readable where it sits, three levels down (the message, its
            // `result`, the list): alone, one nested up to 3 levels less than the parser's
            // limit would still be read, and the rebuilt listing would fail again.
            let in_place = format!("[[[{}]]]", item.get());
            match serde_json::from_str::<serde_json::Value>(&in_place) {
                Ok(mut value) => kept.push(
                    value
                        .pointer_mut("/0/0/0")
                        .map(serde_json::Value::take)
                        .unwrap_or_default(),
                ),
                Err(e) => {
                    skipped += 1;
                    #[derive(serde::Deserialize)]
                    struct Named {
                        #[serde(default)]
                        name: Option<String>,
                    }
                    let name = serde_json::from_str::<Named>(item.get())
                        .ok()
                        .and_then(|n| n.name)
                        .unwrap_or_default();
                    tracing::warn!(list = %list, name = %crate::net::capped(&name), error = %e, "skipped an item of the server's listing that cannot be read");
                }
            }
        }
        let kept = serde_json::value::to_raw_value(&kept).ok()?;
        result.insert((*list).to_owned(), kept);
    }
    if skipped == 0 {
        return None;
    }
    top.insert(
        "result".to_owned(),
        serde_json::value::to_raw_value(&result).ok()?,
    );
    let line = serde_json::to_vec(&top).ok()?;
    serde_json::from_slice::<ServerJsonRpcMessage>(&line).ok()
}

/// An answer to one of rmcp's requests (an `id` that is a string or a number, no `method`)
/// that does not decode (`e`: both `result` and `error`, neither, a bad error object): turned
/// into a JSON-RPC error for that id, so the request ends at once instead of waiting for its
/// timeout. Logged once, the server's text capped.
fn unreadable_answer(
    value: &serde_json::Value,
    e: &serde_json::Error,
) -> Option<ServerJsonRpcMessage> {
    let id = value
        .get("id")
        .filter(|id| id.is_string() || id.is_number())?;
    if value.get("method").is_some() {
        return None;
    }
    let why = if value.get("result").is_some() && value.get("error").is_some() {
        "an answer with both result and error".to_owned()
    } else {
        format!("an answer that is not JSON-RPC: {e}")
    };
    tracing::warn!(id = %crate::net::capped(&id.to_string()), error = %crate::net::capped(&why), "the server sent an answer we cannot read");
    let error = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": -32603, "message": format!("the server sent {why}") },
    });
    serde_json::from_value(error).ok()
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
        let exact = crate::upstream::exact::call_line(&item);
        async move {
            let mut frame = match exact {
                Some(frame) => frame,
                None => serde_json::to_vec(&item)?,
            };
            frame.push(b'\n');
            match &item {
                // A request can be withdrawn while it waits ([`FastLane::withdraw`]).
                rmcp::model::JsonRpcMessage::Request(request) => {
                    lane.write_request(request.id.clone(), &frame).await
                }
                _ => lane.write_frame(&frame).await,
            }
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            match self.read.next().await {
                Ok(Read::Line) => {
                    if let Some(message) = self.route() {
                        return Some(message);
                    }
                }
                Ok(Read::TooLong) => {
                    tracing::error!(
                        max_line_length = self.read.max(),
                        "Incoming message exceeded the maximum line length, discarding it"
                    );
                }
                // Only `Overflow::Pass` hands on pieces, and only a line deadline stalls.
                Ok(Read::Piece | Read::Stalled) => {}
                // A last line without its newline is not a message (as for rmcp's reader).
                Ok(Read::Eof | Read::Last) => {
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

#[cfg(test)]
#[path = "server_line_props.rs"]
mod props;
