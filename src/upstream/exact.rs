//! A stdio server's tool results and requests passed on as the server wrote them.
//!
//! rmcp reads every message into its model types, and writing them again changes what a
//! relay must not change: `temperature` and the model priorities of `sampling/createMessage`
//! are 32-bit floats there (0.7 becomes 0.699999988079071), a number in a
//! `serde_json::Value` is an `i64`, `u64` or `f64` (a 30-digit integer becomes
//! 1.2345678901234568e+29, an `f64` schema bound 1000 becomes 1000.0), a content block of a
//! type no revision rmcp knows does not decode, and a result member it does not model is
//! dropped. So the text the server sent rides along, beside the typed message, and is what
//! the agent gets:
//!
//! | message from the server | where its text is kept | written to the agent by |
//! |---|---|---|
//! | a request (`elicitation/create`, `sampling/createMessage`, `roots/list`) | its `params`, as the request extension [`ExactParams`] (rmcp hands request extensions to the handler's context; [`super::ask`] puts them on the request to the agent) | the endpoint's line encoder: `params` as kept |
//! | `notifications/progress` | its `params`, in their `_meta` under [`EXACT_KEY`] (`progress` 1 stays 1, not 1.0) | the endpoint's line encoder: `params` as kept, with the agent's `progressToken` ([`progress_line`]) |
//! | an answer whose `result` is a `tools/call` result, or one rmcp reads as no known result | the `result`, in the result's `_meta` under [`EXACT_KEY`] ([`tool_result`] reads one with content blocks of unknown types) | the endpoint's line encoder: `result` as kept ([`take_result`]) |
//!
//! The other way, an agent's `tools/call` `arguments` as the agent wrote them ride along as the
//! request extension [`ExactArguments`]: the endpoint's line reader keeps them, the call puts
//! them on its upstream request when the companion sends the same arguments
//! ([`crate::upstream::call::Downstream::arguments`]), and the stdio transport writes them in
//! place of the typed ones ([`call_line`]).
//!
//! The stdio transport keeps the text ([`keep`], called by `lane::transport`); a result that
//! came over HTTP is kept as rmcp read it (unknown blocks and members, not number text). The
//! companion's own changes drop or redo the kept text: a rewritten URI drops it (the typed
//! result is written), masking a secret in an `isError` result masks it in the text too
//! ([`masked`]).

use std::sync::Arc;

use rmcp::model::{
    CallToolResult, JsonRpcMessage, JsonRpcResponse, MetaObject, ServerJsonRpcMessage, ServerResult,
};
use serde_json::Value;
use serde_json::value::RawValue;

/// The `_meta` key of a result under which its text as the server sent it rides inside the
/// companion; never sent to an agent (the endpoint writes the text in place of the result).
pub const EXACT_KEY: &str = "mcp-companion/exact";

/// A request extension (never serialised): the `params` of a server's request as it arrived.
#[derive(Clone, Debug)]
pub struct ExactParams(pub Arc<RawValue>);

/// A request extension (never serialised): an agent's `tools/call` `arguments` as it wrote them.
#[derive(Clone, Debug)]
pub struct ExactArguments(pub Arc<RawValue>);

/// The `params` of an agent's `tools/call`, with its `arguments` raw.
#[derive(serde::Deserialize)]
struct CallMembers<'a> {
    #[serde(borrow, default)]
    params: Option<CallParams<'a>>,
}

#[derive(serde::Deserialize)]
struct CallParams<'a> {
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

/// Keeps the `arguments` of `message`, an agent's `tools/call` decoded from `line`, as
/// [`ExactArguments`].
pub fn keep_arguments(line: &[u8], message: &mut rmcp::model::ClientJsonRpcMessage) {
    let JsonRpcMessage::Request(request) = message else {
        return;
    };
    let rmcp::model::ClientRequest::CallToolRequest(call) = &mut request.request else {
        return;
    };
    if let Ok(CallMembers {
        params: Some(CallParams {
            arguments: Some(arguments),
        }),
    }) = serde_json::from_slice::<CallMembers>(line)
    {
        let arguments: Box<RawValue> = arguments.to_owned();
        call.extensions.insert(ExactArguments(Arc::from(arguments)));
    }
}

/// `arguments` as the agent wrote them, when they are the arguments `typed` the companion is
/// about to send (read the same way).
pub fn same_arguments(
    arguments: &Arc<RawValue>,
    typed: Option<&rmcp::model::JsonObject>,
) -> Option<ExactArguments> {
    let read = serde_json::from_str::<serde_json::Map<String, Value>>(arguments.get()).ok()?;
    (Some(&read) == typed).then(|| ExactArguments(arguments.clone()))
}

/// The line of `message` when it is a `tools/call` carrying [`ExactArguments`]: its JSON with
/// those in place of the typed arguments; `None` otherwise (written as typed).
pub fn call_line(message: &rmcp::model::ClientJsonRpcMessage) -> Option<Vec<u8>> {
    let JsonRpcMessage::Request(request) = message else {
        return None;
    };
    let rmcp::model::ClientRequest::CallToolRequest(call) = &request.request else {
        return None;
    };
    let ExactArguments(arguments) = call.extensions.get::<ExactArguments>()?;
    let mut value = serde_json::to_value(message).ok()?;
    let params = value.get_mut("params")?.as_object_mut()?;
    params.remove("arguments")?;
    let params = serde_json::to_string(params).ok()?;
    let rest = params.strip_prefix('{')?;
    let sep = if rest.starts_with('}') { "" } else { "," };
    let id = serde_json::to_string(&request.id).ok()?;
    Some(
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"arguments\":{}{sep}{rest}}}",
            arguments.get()
        )
        .into_bytes(),
    )
}

/// The members of a message this module reads raw.
#[derive(serde::Deserialize)]
struct Members<'a> {
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
}

/// Keeps the text of `line` that `message` (decoded from it) will be written from: a request's
/// `params`, a tool result's `result` (module doc).
pub fn keep(line: &[u8], message: &mut ServerJsonRpcMessage) {
    match message {
        JsonRpcMessage::Request(request) => {
            if let Ok(Members {
                params: Some(params),
                ..
            }) = serde_json::from_slice::<Members>(line)
            {
                let params: Box<RawValue> = params.to_owned();
                rmcp::model::GetExtensions::extensions_mut(&mut request.request)
                    .insert(ExactParams(Arc::from(params)));
            }
        }
        JsonRpcMessage::Notification(note) => {
            if let rmcp::model::ServerNotification::ProgressNotification(progress) =
                &mut note.notification
                && let Ok(Members {
                    params: Some(params),
                    ..
                }) = serde_json::from_slice::<Members>(line)
            {
                progress
                    .params
                    .meta
                    .get_or_insert_with(Default::default)
                    .insert(EXACT_KEY.to_owned(), Value::String(params.get().to_owned()));
            }
        }
        JsonRpcMessage::Response(JsonRpcResponse { result, .. }) => {
            let wanted = matches!(
                result,
                ServerResult::CallToolResult(_) | ServerResult::CustomResult(_)
            );
            let text = wanted
                .then(|| serde_json::from_slice::<Members>(line).ok())
                .flatten()
                .and_then(|m| m.result)
                .map(|raw| raw.get().to_owned());
            match (result, text) {
                (ServerResult::CallToolResult(r), Some(text)) => {
                    r.meta
                        .get_or_insert_with(MetaObject::default)
                        .insert(EXACT_KEY.to_owned(), Value::String(text));
                }
                (ServerResult::CustomResult(r), Some(text)) => {
                    if let Some(meta) = meta_of(&mut r.0) {
                        meta.insert(EXACT_KEY.to_owned(), Value::String(text));
                    }
                }
                _ => {}
            }
        }
        _ => {}
    }
}

/// The `_meta` object of `result`, made when it has none; `None` when `result` is not an
/// object or its `_meta` is not one.
fn meta_of(result: &mut Value) -> Option<&mut serde_json::Map<String, Value>> {
    let object = result.as_object_mut()?;
    object
        .entry("_meta")
        .or_insert_with(|| Value::Object(serde_json::Map::new()))
        .as_object_mut()
}

/// The content block types rmcp reads (MCP 2025-11-25 `ContentBlock`).
const KNOWN_BLOCKS: &[&str] = &["text", "image", "audio", "resource_link", "resource"];

/// A `tools/call` result rmcp read as no known result, typed: its content blocks of types
/// rmcp does not know left out of the typed result and kept, with the rest, in the text under
/// [`EXACT_KEY`] (the server's text when the transport kept it, else the JSON as read).
/// `None` when it is no `tools/call` result (no `content` array) or a block of a known type
/// is malformed.
pub fn tool_result(mut value: Value) -> Option<CallToolResult> {
    let text = match meta_of(&mut value).and_then(|m| m.remove(EXACT_KEY)) {
        Some(Value::String(text)) => text,
        _ => {
            if let Some(meta) = value.get("_meta").and_then(Value::as_object)
                && meta.is_empty()
                && let Some(object) = value.as_object_mut()
            {
                object.remove("_meta");
            }
            value.to_string()
        }
    };
    let mut known = value.clone();
    let blocks = known.get_mut("content")?.as_array_mut()?;
    blocks.retain(|b| {
        b.get("type")
            .and_then(Value::as_str)
            .is_none_or(|t| KNOWN_BLOCKS.contains(&t))
    });
    if super::bad_answer::content_problem(&known).is_some() {
        return None;
    }
    if let Some(meta) = known.get("_meta").and_then(Value::as_object)
        && meta.is_empty()
        && let Some(object) = known.as_object_mut()
    {
        object.remove("_meta");
    }
    let mut result: CallToolResult = serde_json::from_value(known).ok()?;
    result
        .meta
        .get_or_insert_with(MetaObject::default)
        .insert(EXACT_KEY.to_owned(), Value::String(text));
    Some(result)
}

/// Takes the kept text off `result`, leaving its `_meta` as the server sent it.
pub fn take_result(result: &mut CallToolResult) -> Option<String> {
    let meta = result.meta.as_mut()?;
    let Some(Value::String(text)) = meta.remove(EXACT_KEY) else {
        return None;
    };
    if meta.is_empty() {
        result.meta = None;
    }
    Some(text)
}

/// The JSON of a result the companion goes on to edit as JSON (a task's id, a task's result):
/// the server's kept text when `value` (a serialised result) carries it under [`EXACT_KEY`],
/// else `value` itself; never with the key.
pub fn json_of(mut value: Value) -> Value {
    let Some(meta) = value.get_mut("_meta").and_then(Value::as_object_mut) else {
        return value;
    };
    let kept = meta.remove(EXACT_KEY);
    if meta.is_empty()
        && let Some(object) = value.as_object_mut()
    {
        object.remove("_meta");
    }
    match kept
        .as_ref()
        .and_then(Value::as_str)
        .map(serde_json::from_str::<Value>)
    {
        Some(Ok(server)) if server.is_object() => server,
        _ => value,
    }
}

/// The kept text of `result`, if any.
pub fn kept(result: &CallToolResult) -> Option<&str> {
    result.meta.as_ref()?.get(EXACT_KEY)?.as_str()
}

/// `result`'s kept text with every known secret masked ([`crate::net::scrub_known`]); dropped
/// when a secret is still in the JSON it holds (written with escapes), so the typed, masked
/// result is written instead.
pub fn masked(result: &mut CallToolResult) {
    let Some(text) = take_result(result) else {
        return;
    };
    let masked = crate::net::scrub_known(&text);
    let Ok(mut value) = serde_json::from_str::<Value>(&masked) else {
        return;
    };
    let before = value.clone();
    crate::net::scrub_known_value(&mut value);
    if value == before {
        result
            .meta
            .get_or_insert_with(MetaObject::default)
            .insert(EXACT_KEY.to_owned(), Value::String(masked));
    }
}

/// The line of a response to request `id` carrying `result` (the kept text) in place of the
/// typed result; `resultType` added when the typed result has one and the text none (an agent
/// of the 2026-07-28 era).
///
/// # Errors
/// When `id` does not serialise (it always does).
pub fn response_line(
    id: &rmcp::model::RequestId,
    result: &str,
    result_type: Option<&rmcp::model::ResultType>,
) -> serde_json::Result<Vec<u8>> {
    let mut line = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":",
        serde_json::to_string(id)?
    );
    line.push_str(&result_text(result, result_type)?);
    line.push('}');
    Ok(line.into_bytes())
}

/// The `result` JSON text to write for kept text `result`: as kept, with `resultType` added
/// first when `result_type` is given and the text has none.
///
/// # Errors
/// When `result_type` does not serialise (it always does).
pub fn result_text(
    result: &str,
    result_type: Option<&rmcp::model::ResultType>,
) -> serde_json::Result<String> {
    let body = result.trim();
    Ok(match result_type {
        Some(kind) if !has_member(body, "resultType") => {
            let rest = body.strip_prefix('{').unwrap_or(body).trim_start();
            let mut text = format!("{{\"resultType\":{}", serde_json::to_string(kind)?);
            if !rest.starts_with('}') {
                text.push(',');
            }
            text.push_str(rest);
            text
        }
        _ => body.to_owned(),
    })
}

/// The line of request `id` with `params` as kept; `None` for a request the companion does not
/// forward from a server.
///
/// # Errors
/// When `id` does not serialise (it always does).
pub fn request_line(
    id: &rmcp::model::RequestId,
    request: &rmcp::model::ServerRequest,
    params: &RawValue,
) -> Option<serde_json::Result<Vec<u8>>> {
    use rmcp::model::ServerRequest as R;
    let method = match request {
        R::ElicitRequest(_) => "elicitation/create",
        R::CreateMessageRequest(_) => "sampling/createMessage",
        R::ListRootsRequest(_) => "roots/list",
        _ => return None,
    };
    Some(serde_json::to_string(id).map(|id| {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{method}\",\"params\":{}}}",
            params.get()
        )
        .into_bytes()
    }))
}

/// The line of a `notifications/progress` whose `params` carry their kept text: that text
/// with `params.progressToken` (the agent's) in place of the server's; `None` when nothing was
/// kept.
pub fn progress_line(params: &rmcp::model::ProgressNotificationParam) -> Option<Vec<u8>> {
    let text = params.meta.as_ref()?.get(EXACT_KEY)?.as_str()?;
    let mut members =
        serde_json::from_str::<std::collections::BTreeMap<String, Box<RawValue>>>(text).ok()?;
    let token = serde_json::value::to_raw_value(&params.progress_token).ok()?;
    members.insert("progressToken".to_owned(), token);
    let params = serde_json::to_string(&members).ok()?;
    Some(
        format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{params}}}"
        )
        .into_bytes(),
    )
}

/// Whether the JSON object `text` has a top-level member `name`.
fn has_member(text: &str, name: &str) -> bool {
    serde_json::from_str::<std::collections::HashMap<String, serde::de::IgnoredAny>>(text)
        .is_ok_and(|members| members.contains_key(name))
}

#[cfg(test)]
mod tests;
