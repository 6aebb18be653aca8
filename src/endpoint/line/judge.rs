//! How the endpoint judges one complete line from an agent ([`judge`]): the JSON-RPC answer a
//! malformed line gets, or the message rmcp's service loop receives (the table in
//! [`super`]'s module doc). Pure, so that it can be fuzzed (`fuzz/fuzz_targets/endpoint.rs`).
//! What a sound envelope is lives in `shape.rs`, what fits a method's params in `params.rs`.

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorData, JsonRpcMessage, JsonRpcRequest};
use serde_json::Value;

use super::params::{argument_problem, params_problem, text_problem};
use super::shape::{Envelope, envelope, usable_id};

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
    /// Say nothing: a blank line or a notification rmcp cannot read.
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
                id: readable_id(line).unwrap_or(Value::Null),
                error: ErrorData::parse_error(format!("parse error: {e}"), None),
            };
        }
        Err(e) => {
            let value: Value = serde_json::from_slice(line).unwrap_or(Value::Null);
            return unreadable(&value, &e);
        }
    };
    let JsonRpcMessage::Request(JsonRpcRequest { id, request, .. }) = &message else {
        return Verdict::Deliver(Box::new(message));
    };
    // rmcp files a request with unusable required params as a custom request (answered
    // -32601), and reads unusable optional params as none; both deserve -32602. It reads a
    // prompt's arguments as any JSON, where MCP has strings.
    let problem = match request {
        ClientRequest::CustomRequest(custom) => {
            params_problem(&custom.method, custom.params.as_ref())
                .or_else(|| text_problem(&custom.method, line))
                .map(|p| (custom.method.clone(), p))
        }
        ClientRequest::ListToolsRequest(_)
        | ClientRequest::ListPromptsRequest(_)
        | ClientRequest::ListResourcesRequest(_)
        | ClientRequest::ListResourceTemplatesRequest(_)
        | ClientRequest::PingRequest(_) => {
            let method = request.method().to_owned();
            let value: Value = serde_json::from_slice(line).unwrap_or(Value::Null);
            params_problem(&method, value.get("params")).map(|p| (method, p))
        }
        ClientRequest::GetPromptRequest(get) => get
            .params
            .arguments
            .as_ref()
            .and_then(argument_problem)
            .map(|p| (request.method().to_owned(), p)),
        _ => None,
    };
    match problem {
        Some((method, problem)) => Verdict::Answer {
            // Echoed as sent: rmcp reads an id such as `0.0` as the integer 0.
            id: serde_json::from_slice::<Value>(line)
                .ok()
                .and_then(|v| v.get("id").map(usable_id))
                .unwrap_or_else(|| serde_json::to_value(id).unwrap_or(Value::Null)),
            error: invalid_params(&method, &problem),
        },
        None => Verdict::Deliver(Box::new(message)),
    }
}

/// The verdict on JSON that rmcp's reader did not take (`e`): what is wrong with its envelope
/// (-32600), or with the params of a method we serve (-32602); a notification is never
/// answered.
fn unreadable(value: &Value, e: &serde_json::Error) -> Verdict {
    let (id, method, params) = match envelope(value) {
        Envelope::Notification => {
            tracing::debug!(error = %e, "malformed notification dropped");
            return Verdict::Ignore;
        }
        Envelope::Invalid { id, problem } => {
            return Verdict::Answer {
                id,
                error: ErrorData::invalid_request(format!("invalid request: {problem}"), None),
            };
        }
        Envelope::Request { id, method, params } => (id, method, params),
    };
    let error = match (params_problem(method, params), params) {
        (Some(problem), _) => invalid_params(method, &problem),
        // MCP's params are objects (JSON-RPC 2.0 §4.2 allows arrays too; rmcp does not).
        (None, Some(params)) if !params.is_object() && !params.is_null() => {
            ErrorData::invalid_request(
                format!(
                    "invalid request: \"params\" must be an object, not {}",
                    super::shape::shown(params)
                ),
                None,
            )
        }
        // The envelope is sound, so the params are what rmcp could not read.
        (None, _) => invalid_params(method, "the params do not match this method's schema"),
    };
    Verdict::Answer { id, error }
}

/// -32602 for `method`, saying `problem`.
fn invalid_params(method: &str, problem: &str) -> ErrorData {
    ErrorData::invalid_params(format!("invalid params for {method}: {problem}"), None)
}

/// The id of a line that is JSON but too deep to decode (nested past serde_json's recursion
/// limit of 128): its members are skipped without recursion, so the id is still readable.
/// `None` when the line is not JSON or has no usable id.
fn readable_id(line: &[u8]) -> Option<Value> {
    #[derive(serde::Deserialize)]
    struct Shallow<'a> {
        #[serde(borrow, default)]
        id: Option<&'a serde_json::value::RawValue>,
    }
    let shallow = serde_json::from_slice::<Shallow<'_>>(line).ok()?;
    let id = serde_json::from_str::<Value>(shallow.id?.get()).ok()?;
    Some(usable_id(&id)).filter(|id| !id.is_null())
}

/// The line without its `\n`, a `\r` before it, or a UTF-8 byte-order mark.
fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}
