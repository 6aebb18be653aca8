//! [`Reply`]: one answer to an agent, ready to write: the server's `result` bytes spliced in
//! untouched (shared, never copied when large), or a result or error made here.

use std::ops::Range;

use bytes::Bytes;
use rmcp::model::CallToolResult;
use tokio::io::{AsyncWrite, AsyncWriteExt};

/// Bodies up to this size are copied into one buffer and written with one call.
pub(super) const ONE_WRITE: usize = 16 * 1024;

/// One answer to an agent, ready to write.
pub struct Reply {
    /// Everything up to the body (or the whole frame).
    head: Bytes,
    /// The server's answer line and where its `result` lies in it.
    body: Option<(Bytes, Range<usize>)>,
    /// Where the `result` lies in `head`, when the head holds one.
    result_in_head: Option<Range<usize>>,
}

/// `{"jsonrpc":"2.0","id":<agent_id>,"result":`, with room for `more` bytes after it.
fn result_head(agent_id: &str, more: usize) -> Vec<u8> {
    let mut head = Vec::with_capacity(40 + agent_id.len() + more);
    head.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    head.extend_from_slice(agent_id.as_bytes());
    head.extend_from_slice(b",\"result\":");
    head
}

impl Reply {
    /// `{"jsonrpc":"2.0","id":<agent_id>,"result":<line[range]>}`, the result bytes untouched.
    pub fn spliced(agent_id: &str, line: Vec<u8>, range: Range<usize>) -> Reply {
        if range.len() <= ONE_WRITE {
            return Reply::with_result_bytes(agent_id, &line[range]);
        }
        Reply {
            head: result_head(agent_id, 0).into(),
            body: Some((Bytes::from(line), range)),
            result_in_head: None,
        }
    }

    /// `{"jsonrpc":"2.0","id":<agent_id>,"result":<result>}`, `result` being JSON text.
    pub fn with_result_json(agent_id: &str, result: &str) -> Reply {
        Reply::with_result_bytes(agent_id, result.as_bytes())
    }

    fn with_result_bytes(agent_id: &str, result: &[u8]) -> Reply {
        let mut head = result_head(agent_id, result.len() + 2);
        let start = head.len();
        head.extend_from_slice(result);
        let end = head.len();
        head.extend_from_slice(b"}\n");
        Reply {
            head: head.into(),
            body: None,
            result_in_head: Some(start..end),
        }
    }

    /// The JSON-RPC error `error` for `agent_id`.
    pub fn error(agent_id: &str, error: &rmcp::model::ErrorData) -> Reply {
        let body = serde_json::to_string(error).unwrap_or_else(|_| {
            r#"{"code":-32603,"message":"the error could not be encoded"}"#.to_owned()
        });
        let mut head =
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{agent_id},\"error\":{body}}}").into_bytes();
        head.push(b'\n');
        Reply {
            head: head.into(),
            body: None,
            result_in_head: None,
        }
    }

    /// The answer `result` for `agent_id`: the kept text when the result carries the server's
    /// own (`crate::upstream::exact`), else the result encoded.
    pub fn result(agent_id: &str, result: &CallToolResult) -> Reply {
        // A result kept as the server wrote it (`crate::upstream::exact`) is written so.
        if let Some(kept) = crate::upstream::exact::kept(result)
            && let Ok(body) = crate::upstream::exact::result_text(kept, result.result_type.as_ref())
        {
            return Reply::with_result_json(agent_id, &body);
        }
        let body = serde_json::to_string(result).unwrap_or_else(|_| {
            r#"{"content":[{"type":"text","text":"the result could not be encoded"}],"isError":true}"#.to_owned()
        });
        Reply::with_result_json(agent_id, &body)
    }

    /// The `result` JSON text of the frame, sharing the frame's bytes (no copy, however large):
    /// what the activity log keeps of the answer until its writer has read it. Empty for an
    /// error frame.
    pub fn result_json(&self) -> Bytes {
        match (&self.body, &self.result_in_head) {
            (Some((line, range)), _) => line.slice(range.clone()),
            (None, Some(range)) => self.head.slice(range.clone()),
            (None, None) => Bytes::new(),
        }
    }

    /// The frame's length in bytes, newline included.
    pub fn frame_len(&self) -> usize {
        self.head.len() + self.body.as_ref().map_or(0, |(_, range)| range.len() + 2)
    }

    /// Writes the whole frame to `w` and flushes.
    ///
    /// # Errors
    /// The agent's connection failed.
    pub async fn write_to<W: AsyncWrite + Unpin>(&self, w: &mut W) -> std::io::Result<()> {
        w.write_all(&self.head).await?;
        if let Some((line, range)) = &self.body {
            w.write_all(&line[range.clone()]).await?;
            w.write_all(b"}\n").await?;
        }
        w.flush().await
    }

    /// The frame as one buffer (for tests).
    #[cfg(test)]
    pub fn bytes(&self) -> Vec<u8> {
        let mut all = self.head.to_vec();
        if let Some((line, range)) = &self.body {
            all.extend_from_slice(&line[range.clone()]);
            all.extend_from_slice(b"}\n");
        }
        all
    }
}
