//! The few bytes of a message the fast path reads: the envelope of an agent's `tools/call` or
//! `notifications/cancelled`, and the envelope of the server's answer. Members are borrowed
//! from the line ([`RawValue`]); a `result` is never decoded into a tree.

use std::borrow::Cow;
use std::ops::Range;

use bytes::Bytes;

use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use tokio::io::{AsyncWrite, AsyncWriteExt};

/// A JSON-RPC message from an agent, as far as routing needs it.
#[derive(Deserialize)]
pub struct Incoming<'a> {
    /// The request id, as sent.
    #[serde(borrow, default)]
    pub id: Option<&'a RawValue>,
    /// The method.
    #[serde(borrow, default)]
    pub method: Option<Cow<'a, str>>,
    /// The params, as sent.
    #[serde(borrow, default)]
    pub params: Option<&'a RawValue>,
}

/// The params of a `tools/call` the fast path can forward: nothing but `name`, `arguments`
/// and a `_meta` the fast path may ignore ([`needs_slow_path`]; anything else goes the slow way).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallParams<'a> {
    /// The wrapped tool name.
    #[serde(borrow)]
    pub name: Cow<'a, str>,
    /// The arguments object (or `null`), as sent.
    #[serde(borrow, default)]
    pub arguments: Option<&'a RawValue>,
    /// The request's `_meta`, as sent.
    #[serde(borrow, default, rename = "_meta")]
    pub meta: Option<&'a RawValue>,
}

/// Whether the params of a `tools/call` carry `task` (MCP 2025-11-25 utilities/tasks: the
/// call is to answer with a `CreateTaskResult`, not its result).
pub fn is_task_augmented(params: &RawValue) -> bool {
    #[derive(Deserialize)]
    struct Augmented {
        #[serde(default)]
        task: Option<IgnoredAny>,
    }
    serde_json::from_str::<Augmented>(params.get()).is_ok_and(|p| p.task.is_some())
}

/// Whether a call with this `_meta` takes the slow path: it asks for progress (which the slow
/// path forwards), or it names a protocol version of its own (a 2026-07-28 request, whose
/// envelope rmcp checks and whose result needs `resultType`).
pub fn needs_slow_path(meta: &RawValue) -> bool {
    #[derive(Deserialize)]
    struct Meta {
        #[serde(rename = "progressToken", default)]
        progress_token: Option<IgnoredAny>,
        #[serde(rename = "io.modelcontextprotocol/protocolVersion", default)]
        protocol_version: Option<IgnoredAny>,
    }
    // Anything but an object goes the slow way too (serde would read `[]` as an empty struct).
    !meta.get().starts_with('{')
        || serde_json::from_str::<Meta>(meta.get()).map_or(true, |m| {
            m.progress_token.is_some() || m.protocol_version.is_some()
        })
}

/// The params of a `tools/list` the fast path can answer: at most a `cursor` (a `_meta` may
/// carry a protocol version of its own, which rmcp judges).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListParams<'a> {
    /// The cursor, as sent.
    #[serde(borrow, default)]
    pub cursor: Option<Cow<'a, str>>,
}

/// The offset a `tools/list` asks for: 0 without params or cursor, else the cursor read as the
/// endpoint reads it; `None` for params the fast path leaves to rmcp (which then answers).
pub fn list_start(params: Option<&RawValue>) -> Option<usize> {
    let Some(params) = params else {
        return Some(0);
    };
    let params = serde_json::from_str::<ListParams<'_>>(params.get()).ok()?;
    params.cursor.map_or(Some(0), |c| c.parse().ok())
}

/// The `requestId` of a `notifications/cancelled`.
#[derive(Deserialize)]
pub struct CancelledParams {
    /// Which request the agent cancels.
    #[serde(rename = "requestId")]
    pub request_id: serde_json::Value,
}

/// The key under which a call is found again by its agent's `notifications/cancelled`: the id
/// as canonical JSON (`1` and `"1"` differ; `"\u0031"` and `"1"` do not).
pub fn id_key(id: &serde_json::Value) -> String {
    id.to_string()
}

/// Whether `raw` is an id the fast path echoes byte for byte: a string or an integer (a
/// fractional id such as `1.0` goes the slow way, where rmcp reads it as `1`).
pub fn plain_id(raw: &RawValue) -> bool {
    let text = raw.get();
    text.starts_with('"') || text.bytes().all(|b| b.is_ascii_digit() || b == b'-')
}

/// A server's answer to a fast-lane request.
#[derive(Deserialize)]
pub struct Answer<'a> {
    /// The `result` member, as sent.
    #[serde(borrow, default)]
    pub result: Option<&'a RawValue>,
    /// The `error` member.
    #[serde(default)]
    pub error: Option<RpcError>,
    /// A `method` member: a malformed answer (the lane's peek already leaves lines with one to
    /// rmcp when it sees the member before `result` or `error`).
    #[serde(default)]
    pub method: Option<IgnoredAny>,
}

/// A JSON-RPC error object.
#[derive(Deserialize)]
pub struct RpcError {
    /// The error code.
    pub code: i32,
    /// The server's message.
    #[serde(default)]
    pub message: String,
    /// The error's `data` member, as sent.
    #[serde(default)]
    pub data: Option<serde_json::Value>,
}

/// A `tools/call` result the fast path passes through untouched: `content` blocks of the
/// shapes rmcp accepts or of types no revision this build knows, optional
/// `structuredContent`, `isError`, `_meta`, and keys a later revision may add (forward
/// compatibility: an agent that knows them gets them). Anything this does not accept is
/// decoded the slow way, which then decides.
#[derive(Deserialize)]
struct PlainResult<'a> {
    #[serde(borrow)]
    content: Vec<Block<'a>>,
    #[serde(rename = "structuredContent", default)]
    _structured: Option<IgnoredAny>,
    #[serde(rename = "isError", default)]
    _is_error: Option<bool>,
    #[serde(rename = "_meta", default)]
    _meta: Option<serde_json::Map<String, serde_json::Value>>,
    /// A task handle or a result type of its own: not a plain result.
    #[serde(default)]
    task: Option<IgnoredAny>,
    #[serde(rename = "resultType", default)]
    result_type: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    text: Option<&'a RawValue>,
    #[serde(borrow, default)]
    data: Option<&'a RawValue>,
    #[serde(rename = "mimeType", borrow, default)]
    mime_type: Option<&'a RawValue>,
}

/// Whether `result` is a plain `tools/call` result: `content` (text, image or audio blocks
/// of valid shape, or blocks of an unknown type), `structuredContent`, `isError` other than
/// `true` (error results are decoded, so known secrets in them are masked), `_meta`, and any
/// other key but `task` and `resultType`.
pub fn is_plain_result(result: &RawValue) -> bool {
    let Ok(plain) = serde_json::from_str::<PlainResult<'_>>(result.get()) else {
        return false;
    };
    if plain._is_error == Some(true) || plain.task.is_some() || plain.result_type.is_some() {
        return false;
    }
    let string = |v: Option<&RawValue>| v.is_some_and(|v| v.get().starts_with('"'));
    plain.content.iter().all(|b| match b.kind.as_ref() {
        "text" => string(b.text),
        "image" | "audio" => string(b.data) && string(b.mime_type),
        // Decoded: their URIs may be rewritten.
        "resource" | "resource_link" => false,
        _ => true,
    })
}

/// Whether the JSON text `result` may hold a `uri` or `resourceUri` member, the ones
/// [`crate::hub::to_agent`] rewrites: false only when neither key appears literally and no
/// `\u` escape could spell one. A result of a server whose URIs are rewritten is spliced
/// through untouched only when this is false.
pub fn may_name_a_uri(result: &str) -> bool {
    result.contains("\"uri\"") || result.contains("\"resourceUri\"") || result.contains("\\u")
}

/// Bodies up to this size are copied into one buffer and written with one call.
const ONE_WRITE: usize = 16 * 1024;

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

/// Where `inner` (borrowed from `line`) lies in `line`.
pub fn range_in(line: &[u8], inner: &RawValue) -> Option<Range<usize>> {
    let start = (inner.get().as_ptr() as usize).checked_sub(line.as_ptr() as usize)?;
    let end = start + inner.get().len();
    (end <= line.len()).then_some(start..end)
}

/// The upstream `tools/call` line: `{"jsonrpc":"2.0","id":<id>,"method":"tools/call","params":{"name":<name>[,"arguments":<args>]}}`,
/// `args` the JSON text to send (the call's `Forward::raw_arguments` decides it).
pub fn request_frame(
    id_json: &str,
    raw_name: &str,
    arguments: Option<&str>,
    meta: Option<&str>,
) -> Vec<u8> {
    let name = serde_json::Value::String(raw_name.to_owned()).to_string();
    let args = arguments;
    let mut frame =
        Vec::with_capacity(90 + name.len() + args.map_or(0, str::len) + meta.map_or(0, str::len));
    frame.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    frame.extend_from_slice(id_json.as_bytes());
    frame.extend_from_slice(b",\"method\":\"tools/call\",\"params\":{\"name\":");
    frame.extend_from_slice(name.as_bytes());
    if let Some(args) = args {
        frame.extend_from_slice(b",\"arguments\":");
        frame.extend_from_slice(args.as_bytes());
    }
    if let Some(meta) = meta {
        frame.extend_from_slice(b",\"_meta\":");
        frame.extend_from_slice(meta.as_bytes());
    }
    frame.extend_from_slice(b"}}\n");
    frame
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).expect("json")
    }

    #[test]
    fn a_result_that_may_name_a_uri_is_told_from_one_that_cannot() {
        for may in [
            r#"{"content":[{"type":"resource_link","uri":"demo://a","name":"a"}]}"#,
            r#"{"content":[],"_meta":{"ui":{"resourceUri":"ui://app"}}}"#,
            r#"{"content":[],"structuredContent":{"uri":"file:///x"}}"#,
            // The key spelt with an escape.
            r#"{"content":[],"structuredContent":{"\u0075ri":"file:///x"}}"#,
        ] {
            assert!(may_name_a_uri(may), "{may}");
        }
        for cannot in [
            r#"{"content":[{"type":"text","text":"the uri is demo://a"}]}"#,
            r#"{"content":[{"type":"text","text":"Echo: \"hello\""}]}"#,
        ] {
            assert!(!may_name_a_uri(cannot), "{cannot}");
        }
    }

    #[test]
    fn a_task_augmented_call_is_told_from_a_plain_one() {
        let task = r#"{"name":"t","arguments":{},"task":{"ttl":60000}}"#;
        assert!(is_task_augmented(&raw(task)));
        // Never forwarded as an ordinary call: its params do not fit the fast path's.
        assert!(serde_json::from_str::<CallParams<'_>>(task).is_err());
        for plain in [
            r#"{"name":"t","arguments":{"task":1}}"#,
            r#"{"name":"t"}"#,
            "[]",
        ] {
            assert!(!is_task_augmented(&raw(plain)), "{plain}");
        }
    }

    #[test]
    fn plain_results_are_recognised_and_odd_ones_are_not() {
        assert!(is_plain_result(&raw(
            r#"{"content":[{"type":"text","text":"hi"}]}"#
        )));
        assert!(is_plain_result(&raw(
            r#"{"content":[],"structuredContent":{"a":1},"isError":false,"_meta":{"k":1}}"#
        )));
        assert!(is_plain_result(&raw(
            r#"{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}"#
        )));
        assert!(is_plain_result(&raw(
            r#"{"content":[{"type":"future_kind","x":{}}],"extraTopLevel":1}"#
        )));
        for odd in [
            r#"{"content":[{"type":"text","text":5}]}"#,
            r#"{"content":[{"type":"image","data":"AA=="}]}"#,
            r#"{"content":[{"type":"resource","resource":{}}]}"#,
            r#"{"content":[],"task":{}}"#,
            r#"{"tools":[]}"#,
            r#"{"content":[],"isError":true}"#,
            r#"{"content":[],"resultType":"complete"}"#,
            r#"{"content":"text"}"#,
            "[]",
        ] {
            assert!(!is_plain_result(&raw(odd)), "{odd}");
        }
    }

    #[test]
    fn a_spliced_reply_carries_the_agents_id_and_the_result_bytes_unchanged() {
        for size in [10, ONE_WRITE + 10] {
            let text = "x".repeat(size);
            let line = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":\"fp-1\",\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{text}\"}}]}}}}\n"
            )
            .into_bytes();
            let answer: Answer<'_> = serde_json::from_slice(&line).expect("answer");
            let result = answer.result.expect("result");
            let range = range_in(&line, result).expect("inside");
            let expected = result.get().to_owned();
            let reply = Reply::spliced("\"a\\\"b\"", line.clone(), range);
            // The log's copy of the result is the reply's own bytes, not a new buffer.
            let logged = reply.result_json();
            assert_eq!(&logged[..], expected.as_bytes());
            assert_eq!(logged.as_ptr(), reply.result_json().as_ptr());
            let bytes = reply.bytes();
            assert_eq!(bytes.last(), Some(&b'\n'));
            let v: serde_json::Value = serde_json::from_slice(&bytes).expect("valid JSON");
            assert_eq!(v["id"], "a\"b");
            assert_eq!(
                v["result"]["content"][0]["text"].as_str().map(str::len),
                Some(size)
            );
            let text = String::from_utf8(bytes).expect("utf-8");
            assert!(text.contains(&expected), "result bytes changed");
        }
    }

    #[test]
    fn the_request_frame_renames_and_keeps_arguments_as_sent() {
        let args = raw(r#"{"b": 1,"a":[2]}"#);
        let frame = request_frame("\"fp-3\"", "odd \"name\"", Some(args.get()), None);
        let text = String::from_utf8(frame).expect("utf-8");
        assert_eq!(
            text,
            "{\"jsonrpc\":\"2.0\",\"id\":\"fp-3\",\"method\":\"tools/call\",\"params\":{\"name\":\"odd \\\"name\\\"\",\"arguments\":{\"b\": 1,\"a\":[2]}}}\n"
        );
        let bare = request_frame("\"fp-4\"", "t", None, Some(r#"{"k":1}"#));
        assert!(
            !String::from_utf8(bare)
                .expect("utf-8")
                .contains("arguments")
        );
    }

    #[test]
    fn ids_and_meta_are_judged() {
        assert!(plain_id(&raw("\"x\"")));
        assert!(plain_id(&raw("-12")));
        assert!(!plain_id(&raw("1.0")));
        assert!(!plain_id(&raw("1e3")));
        assert!(needs_slow_path(&raw(r#"{"progressToken":"t"}"#)));
        assert!(!needs_slow_path(&raw(r#"{"other":1}"#)));
        assert!(
            needs_slow_path(&raw("[]")),
            "an odd _meta goes the slow way"
        );
        assert!(
            needs_slow_path(&raw(
                r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#
            )),
            "a 2026-07-28 request goes the slow way"
        );
        assert_eq!(
            id_key(&serde_json::json!("\u{31}")),
            id_key(&serde_json::json!("1"))
        );
        assert_ne!(
            id_key(&serde_json::json!(1)),
            id_key(&serde_json::json!("1"))
        );
    }
}
