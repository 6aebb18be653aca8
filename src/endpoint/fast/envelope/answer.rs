//! The envelope of a server's answer: its `result` borrowed as sent or its error, and whether
//! the result may be passed through untouched.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

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
