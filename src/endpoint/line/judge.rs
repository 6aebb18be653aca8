//! How the endpoint judges one complete line from an agent ([`judge`]): the JSON-RPC answer a
//! malformed line gets, or the message rmcp's service loop receives (the table in
//! [`super`]'s module doc). Pure, so that it can be fuzzed (`fuzz/fuzz_targets/endpoint.rs`).

#[expect(
    deprecated,
    reason = "logging/setLevel is deprecated by SEP-2577; 2025-era clients still send it"
)]
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, CompleteRequestParams, ErrorData,
    GetPromptRequestParams, InitializeRequestParams, JsonRpcMessage, JsonRpcRequest,
    PaginatedRequestParams, ReadResourceRequestParams, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

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
                id: readable_id(line).unwrap_or(Value::Null),
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
            let message = match value.get("id").and_then(id_problem) {
                Some(problem) => format!("invalid request: {problem}"),
                None => format!("invalid request: {e}"),
            };
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

/// A request `id` as JSON-RPC allows it (string or number), else `null`. An integer beyond
/// ±2^53 that does not fit 64 bits was read as a float that has lost digits: echoing it would
/// name another request, so it is `null` too (JSON-RPC 2.0 §5: the id could not be detected).
fn usable_id(id: &Value) -> Value {
    match id {
        Value::Number(n) if n.is_f64() && n.as_f64().is_some_and(lost_digits) => Value::Null,
        Value::String(_) | Value::Number(_) => id.clone(),
        _ => Value::Null,
    }
}

/// Whether the float `f` is an integer too large to have kept every digit it was sent with.
fn lost_digits(f: f64) -> bool {
    f.fract() == 0.0 && f.abs() >= 9_007_199_254_740_992.0
}

/// Why a request `id` cannot be taken, when it is a number rmcp cannot hold: ids are strings
/// or 64-bit signed integers.
fn id_problem(id: &Value) -> Option<&'static str> {
    match id {
        Value::Number(n) if n.as_i64().is_none() => Some(
            "a numeric id must be an integer from -9223372036854775808 to 9223372036854775807; \
             send other ids as strings",
        ),
        _ => None,
    }
}

/// Why `params` do not fit `method`, for the methods the endpoint serves; `None` when they
/// fit or the method is not one of ours (rmcp answers -32601 for those).
///
/// rmcp files a request whose `params` do not deserialise as a custom request, which would be
/// answered "method not found"; this names the real problem.
pub fn params_problem(method: &str, params: Option<&Value>) -> Option<String> {
    problem_of(method, Params::Value(params))
}

/// [`params_problem`] read from the line's own text, where a key given twice is still seen
/// (a parsed [`Value`] keeps only the last); for a known method rmcp could not read, a
/// problem is always named.
fn text_problem(method: &str, line: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        #[serde(borrow)]
        params: Option<&'a serde_json::value::RawValue>,
    }
    let params = serde_json::from_slice::<Line<'_>>(line).ok()?.params?;
    problem_of(method, Params::Text(params.get())).or_else(|| {
        problem_of(method, Params::Value(Some(&Value::Null)))
            .is_some()
            .then(|| "the params do not match this method's schema".to_owned())
    })
}

/// The params of a request: as rmcp parsed them, or as the line wrote them.
#[derive(Clone, Copy)]
enum Params<'a> {
    Value(Option<&'a Value>),
    Text(&'a str),
}

fn problem_of(method: &str, params: Params<'_>) -> Option<String> {
    fn check<T: DeserializeOwned>(params: Params<'_>, required: bool) -> Option<String> {
        match params {
            Params::Value(None | Some(Value::Null)) if required => {
                Some("params are missing".into())
            }
            Params::Value(None | Some(Value::Null)) => None,
            Params::Value(Some(p)) => serde_json::from_value::<T>(p.clone())
                .err()
                .map(|e| e.to_string()),
            Params::Text(text) => serde_json::from_str::<T>(text).err().map(|e| e.to_string()),
        }
    }
    match method {
        "tools/call" => check::<CallToolRequestParams>(params, true),
        "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
            check::<PaginatedRequestParams>(params, false)
        }
        "prompts/get" => check::<GetPromptRequestParams>(params, true),
        "resources/read" => check::<ReadResourceRequestParams>(params, true),
        "resources/subscribe" => check::<SubscribeRequestParams>(params, true),
        "resources/unsubscribe" => check::<UnsubscribeRequestParams>(params, true),
        "completion/complete" => check::<CompleteRequestParams>(params, true),
        "initialize" => check::<InitializeRequestParams>(params, true),
        "logging/setLevel" =>
        {
            #[expect(deprecated, reason = "see the import")]
            check::<SetLevelRequestParams>(params, true)
        }
        "ping" => {
            let value = match params {
                Params::Value(v) => v.cloned(),
                Params::Text(t) => serde_json::from_str(t).ok(),
            };
            match value {
                None | Some(Value::Null | Value::Object(_)) => None,
                Some(_) => Some("params must be an object".into()),
            }
        }
        _ => None,
    }
}
