//! Whether a line's JSON is a JSON-RPC 2.0 message, and what is wrong with it in plain words
//! when it is not ([`envelope`]), for the lines rmcp's reader could not take (it says only
//! "unrecognized JSON-RPC message").
//!
//! JSON-RPC 2.0 §4: a request is an object with `"jsonrpc": "2.0"`, a string `method`, an `id`
//! and optional structured `params`; without an `id` it is a notification, which is never
//! answered (§4.1). §5: anything else gets -32600 "invalid request", with `"id": null` when
//! no id can be read. MCP (basic protocol, "Requests") narrows the id to a string or an
//! integer, never `null`, and MCP 2025-06-18 and later have no batches.

use serde_json::Value;

/// What one JSON value is, as a JSON-RPC message.
#[derive(Debug)]
pub(super) enum Envelope<'a> {
    /// A request whose envelope is sound, to be judged on its `params`.
    Request {
        /// The id as sent.
        id: Value,
        method: &'a str,
        params: Option<&'a Value>,
    },
    /// A notification (`"jsonrpc": "2.0"`, a string `method`, no `id`): never answered.
    Notification,
    /// Not a JSON-RPC message: answered -32600 with `id` (`null` when none is usable).
    Invalid {
        /// The id to answer with.
        id: Value,
        /// Why, in plain words.
        problem: String,
    },
}

/// What `value` is as a JSON-RPC message, checked in the order of the module doc; the first
/// problem found is named.
pub(super) fn envelope(value: &Value) -> Envelope<'_> {
    let fields = match value {
        Value::Object(fields) => fields,
        Value::Array(items) if items.is_empty() => {
            return invalid(Value::Null, "an empty batch (`[]`) is not a request".into());
        }
        Value::Array(_) => {
            return invalid(
                Value::Null,
                "batches (JSON arrays) are not supported; send each message on a line of its own"
                    .into(),
            );
        }
        other => {
            return invalid(
                Value::Null,
                format!("a message must be a JSON object, not {}", shown(other)),
            );
        }
    };
    let id = fields.get("id");
    let answer_id = id.map_or(Value::Null, usable_id);
    match fields.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        None => return invalid(answer_id, "\"jsonrpc\": \"2.0\" is missing".into()),
        Some(other) => {
            return invalid(
                answer_id,
                format!("\"jsonrpc\" must be \"2.0\", not {}", shown(other)),
            );
        }
    }
    let is_response = fields.contains_key("result") || fields.contains_key("error");
    let Some(method) = fields.get("method") else {
        return match (id, is_response) {
            (_, true) => response(fields, answer_id),
            (None, false) => invalid(
                answer_id,
                "\"method\" is missing: a request or notification names its method".into(),
            ),
            (Some(_), false) => invalid(
                answer_id,
                "\"method\" is missing: a request names its method (a response has \"result\" or \"error\")"
                    .into(),
            ),
        };
    };
    if is_response {
        return invalid(
            answer_id,
            "a message has \"method\" (a request or notification) or \"result\"/\"error\" (a response), not both"
                .into(),
        );
    }
    let Value::String(method) = method else {
        return invalid(
            answer_id,
            format!("\"method\" must be a string, not {}", shown(method)),
        );
    };
    let Some(id) = id else {
        return Envelope::Notification;
    };
    if let Some(problem) = id_problem(id) {
        return invalid(answer_id, problem);
    }
    Envelope::Request {
        id: answer_id,
        method,
        params: fields.get("params"),
    }
}

/// A response rmcp could not read, in words.
fn response(fields: &serde_json::Map<String, Value>, id: Value) -> Envelope<'_> {
    let problem = if fields.contains_key("result") && fields.contains_key("error") {
        "a response has \"result\" or \"error\", not both".to_owned()
    } else if !fields.contains_key("id") && fields.contains_key("result") {
        "\"id\" is missing: a response carries the id of the request it answers".to_owned()
    } else if let Some(problem) = fields.get("id").and_then(id_problem) {
        problem
    } else if fields.get("result").is_some_and(|r| !r.is_object()) {
        "a response's \"result\" must be an object".to_owned()
    } else {
        "a response's \"error\" must be an object with an integer \"code\" and a string \"message\""
            .to_owned()
    };
    invalid(id, problem)
}

fn invalid(id: Value, problem: String) -> Envelope<'static> {
    Envelope::Invalid { id, problem }
}

/// A request `id` as JSON-RPC allows it (string or number), else `null`. An integer beyond
/// ±2^53 that does not fit 64 bits was read as a float that has lost digits: echoing it would
/// name another request, so it is `null` too (JSON-RPC 2.0 §5: the id could not be detected).
pub(super) fn usable_id(id: &Value) -> Value {
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

/// Why a request `id` cannot be taken: MCP ids are strings or integers (never `null`), and rmcp
/// holds integers in 64 signed bits (an integer in float form, `1.0`, below 2^53 too).
pub(super) fn id_problem(id: &Value) -> Option<String> {
    match id {
        Value::String(_) => None,
        Value::Number(n)
            if n.as_i64().is_some()
                || n.as_f64()
                    .is_some_and(|f| f.fract() == 0.0 && !lost_digits(f)) =>
        {
            None
        }
        Value::Number(_) => Some(
            "a numeric id must be an integer from -9223372036854775808 to 9223372036854775807; \
             send other ids as strings"
                .to_owned(),
        ),
        other => Some(format!(
            "\"id\" must be a string or an integer, not {}",
            shown(other)
        )),
    }
}

/// `value` for a message: short scalars as their JSON text, others by their kind.
pub(super) fn shown(value: &Value) -> String {
    const LONGEST: usize = 40;
    match value {
        Value::Object(_) => "an object".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::String(s) if s.len() > LONGEST => "a long string".to_owned(),
        scalar => {
            let text = scalar.to_string();
            if text.len() > LONGEST {
                "a long number".to_owned()
            } else {
                text
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn problem_of(value: &Value) -> (Value, String) {
        match envelope(value) {
            Envelope::Invalid { id, problem } => (id, problem),
            other => panic!("{value}: {other:?}"),
        }
    }

    #[test]
    fn each_way_of_not_being_a_message_is_named() {
        for (value, id, want) in [
            (
                json!({"jsonrpc": "2.0"}),
                Value::Null,
                "\"method\" is missing",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 1}),
                json!(1),
                "\"method\" is missing",
            ),
            (
                json!({"jsonrpc": "1.0", "id": 2, "method": "ping"}),
                json!(2),
                "\"jsonrpc\" must be \"2.0\", not \"1.0\"",
            ),
            (
                json!({"jsonrpc": "1.0", "method": "notifications/initialized"}),
                Value::Null,
                "\"jsonrpc\" must be \"2.0\"",
            ),
            (
                json!({"id": 3, "method": "ping"}),
                json!(3),
                "\"jsonrpc\": \"2.0\" is missing",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 4, "method": 5}),
                json!(4),
                "\"method\" must be a string, not 5",
            ),
            (
                json!({"jsonrpc": "2.0", "method": 5}),
                Value::Null,
                "\"method\" must be a string, not 5",
            ),
            (json!([]), Value::Null, "an empty batch"),
            (
                json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]),
                Value::Null,
                "batches",
            ),
            (json!(42), Value::Null, "must be a JSON object, not 42"),
            (
                json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
                Value::Null,
                "\"id\" must be a string or an integer, not null",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}),
                json!(1.5),
                "numeric id must be an integer",
            ),
            (
                json!({"jsonrpc": "2.0", "result": {}}),
                Value::Null,
                "\"id\" is missing: a response",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 5, "method": "ping", "result": {}}),
                json!(5),
                "not both",
            ),
        ] {
            let (got_id, problem) = problem_of(&value);
            assert_eq!(got_id, id, "{value}");
            assert!(problem.contains(want), "{value}: {problem}");
        }
    }

    #[test]
    fn notifications_and_sound_requests_pass() {
        assert!(matches!(
            envelope(&json!({"jsonrpc": "2.0", "method": "notifications/x", "params": "odd"})),
            Envelope::Notification
        ));
        assert!(matches!(
            envelope(&json!({"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": "x"})),
            Envelope::Request {
                method: "tools/call",
                params: Some(Value::String(_)),
                ..
            }
        ));
    }

    #[test]
    fn long_values_are_shown_by_their_kind() {
        assert_eq!(shown(&json!("x".repeat(41))), "a long string");
        assert_eq!(shown(&json!({"a": 1})), "an object");
        assert_eq!(shown(&json!("ok")), "\"ok\"");
    }
}
