//! The envelope of an agent's message: its id, method and params, the params of a `tools/call`,
//! `tools/list` or `notifications/cancelled`, and whether the fast path may take it.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

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
/// call is to answer with a `CreateTaskResult`, not its result). Parsed only when the text
/// could spell the key: `task` in it, or a `\u` escape.
pub fn is_task_augmented(params: &RawValue) -> bool {
    let text = params.get();
    if !text.contains("task") && !text.contains("\\u") {
        return false;
    }
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
