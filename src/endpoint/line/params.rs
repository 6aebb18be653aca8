//! Whether a request's `params` fit the method the endpoint serves, and why not in plain words
//! (the -32602 "invalid params" answers of [`super::judge`]).
//!
//! | params | problem named |
//! |---|---|
//! | absent or `null` where the method needs them | `params are missing: an object with "name" is required` |
//! | not an object (a string, a number, an array…) | `params must be an object with "name"` (each method names its own members) |
//! | an object serde cannot read as the method's params | serde's reason without Rust type names or positions |
//! | `prompts/get` with an argument that is not a string | `argument "a" must be a string, not 5` (MCP: prompt arguments are strings) |

#[expect(
    deprecated,
    reason = "logging/setLevel is deprecated by SEP-2577; 2025-era clients still send it"
)]
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CallToolRequestParams, CompleteRequestParams, GetPromptRequestParams, InitializeRequestParams,
    PaginatedRequestParams, ReadResourceRequestParams, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::shape::shown;

/// The params of `tasks/get`, `tasks/result` and `tasks/cancel` (MCP 2025-11-25
/// utilities/tasks; the 2026-07-28 Tasks extension has the same `taskId`).
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskIdParams {
    #[expect(dead_code, reason = "only its presence and type are checked")]
    task_id: String,
}

/// What a method the endpoint serves takes as `params`.
struct Rule {
    /// Whether `params` must be present.
    required: bool,
    /// Its members in words, for the answer: `"name"`, `an optional "cursor"`.
    members: &'static str,
    /// Whether rmcp reads this method into a type of its own: when it files such a request as
    /// a custom one, its params did not fit even if no reason is found.
    typed: bool,
    /// serde's reason why an object does not fit.
    check: fn(Params<'_>) -> Option<String>,
}

/// The rule of `method`; `None` for methods whose params are left to rmcp.
fn rule(method: &str) -> Option<Rule> {
    let required = |members, check| {
        Some(Rule {
            required: true,
            members,
            typed: true,
            check,
        })
    };
    let cursor = |typed| {
        Some(Rule {
            required: false,
            members: "an optional \"cursor\"",
            typed,
            check: fits::<PaginatedRequestParams>,
        })
    };
    match method {
        "tools/call" => required("\"name\"", fits::<CallToolRequestParams>),
        "prompts/get" => required("\"name\"", fits::<GetPromptRequestParams>),
        "resources/read" => required("\"uri\"", fits::<ReadResourceRequestParams>),
        "resources/subscribe" => required("\"uri\"", fits::<SubscribeRequestParams>),
        "resources/unsubscribe" => required("\"uri\"", fits::<UnsubscribeRequestParams>),
        "completion/complete" => {
            required("\"ref\" and \"argument\"", fits::<CompleteRequestParams>)
        }
        "initialize" => required(
            "\"protocolVersion\", \"capabilities\" and \"clientInfo\"",
            fits::<InitializeRequestParams>,
        ),
        "logging/setLevel" =>
        {
            #[expect(deprecated, reason = "see the import")]
            required("\"level\"", fits::<SetLevelRequestParams>)
        }
        // rmcp types `tasks/get` and `tasks/cancel` (the 2026-07-28 extension's) but not
        // `tasks/result`, which MCP 2025-11-25 has.
        "tasks/get" | "tasks/cancel" => required("\"taskId\"", fits::<TaskIdParams>),
        "tasks/result" => Some(Rule {
            typed: false,
            ..required("\"taskId\"", fits::<TaskIdParams>)?
        }),
        "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
            cursor(true)
        }
        "tasks/list" => cursor(false),
        "ping" => Some(Rule {
            required: false,
            members: "",
            typed: true,
            check: |_| None,
        }),
        _ => None,
    }
}

/// The params of a request: as parsed, or as the line wrote them (where a key given twice is
/// still seen; a parsed [`Value`] keeps only the last).
#[derive(Clone, Copy)]
enum Params<'a> {
    Value(&'a Value),
    Text(&'a str),
}

/// Why `params` do not fit `method`, for the methods the endpoint serves; `None` when they
/// fit or the method is not one of ours (rmcp answers -32601 for those).
///
/// rmcp files a request whose `params` do not deserialise as a custom request, which would be
/// answered "method not found"; this names the real problem.
pub fn params_problem(method: &str, params: Option<&Value>) -> Option<String> {
    let rule = rule(method)?;
    match params {
        None | Some(Value::Null) => missing(&rule),
        Some(value @ Value::Object(fields)) => {
            (rule.check)(Params::Value(value)).or_else(|| arguments_problem(method, fields))
        }
        Some(_) => Some(not_object(&rule)),
    }
}

/// [`params_problem`] read from the line's own text; for a method rmcp reads into a type of its
/// own, a problem is always named (rmcp could not read it, so something is wrong).
pub(super) fn text_problem(method: &str, line: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        #[serde(borrow)]
        params: Option<&'a serde_json::value::RawValue>,
    }
    let rule = rule(method)?;
    let params = serde_json::from_slice::<Line<'_>>(line).ok()?.params?;
    let value: Value = serde_json::from_str(params.get()).ok()?;
    let problem = match &value {
        Value::Null => missing(&rule),
        Value::Object(fields) => {
            (rule.check)(Params::Text(params.get())).or_else(|| arguments_problem(method, fields))
        }
        _ => Some(not_object(&rule)),
    };
    problem.or_else(|| {
        (rule.typed && rule.required)
            .then(|| "the params do not match this method's schema".to_owned())
    })
}

/// Why the arguments of a `prompts/get` are not all strings (MCP `GetPromptRequest`:
/// `arguments` maps names to string values); `None` for other methods.
pub(super) fn arguments_problem(method: &str, params: &Map<String, Value>) -> Option<String> {
    if method != "prompts/get" {
        return None;
    }
    let arguments = params.get("arguments")?.as_object()?;
    argument_problem(arguments)
}

/// Why `arguments` (of a `prompts/get`) are not all strings.
pub(super) fn argument_problem(arguments: &Map<String, Value>) -> Option<String> {
    let (name, value) = arguments.iter().find(|(_, v)| !v.is_string())?;
    Some(format!(
        "argument {} must be a string, not {} (MCP prompt arguments are strings)",
        Value::from(name.as_str()),
        shown(value)
    ))
}

fn missing(rule: &Rule) -> Option<String> {
    rule.required.then(|| {
        format!(
            "params are missing: an object with {} is required",
            rule.members
        )
    })
}

fn not_object(rule: &Rule) -> String {
    match (rule.required, rule.members) {
        (true, members) => format!("params must be an object with {members}"),
        (false, "") => "params must be an object, or left out".to_owned(),
        (false, members) => format!("params must be an object with {members}, or left out"),
    }
}

/// serde's reason why `params` (an object) is not a `T`, in plain words.
fn fits<T: DeserializeOwned>(params: Params<'_>) -> Option<String> {
    let result = match params {
        Params::Value(value) => T::deserialize(value).map(drop),
        Params::Text(text) => serde_json::from_str::<T>(text).map(drop),
    };
    result.err().map(|e| plain(&e))
}

/// serde's reason without what only a Rust programmer reads: a type name ("expected struct
/// CallToolRequestParams" is "expected an object") or the position in the params' own text.
fn plain(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let text = match text.rfind(" at line ") {
        Some(at) if e.line() > 0 => &text[..at],
        _ => &text,
    };
    let mut out: Vec<String> = Vec::new();
    let mut words = text.split(' ').peekable();
    while let Some(word) = words.next() {
        let kind = match word {
            "struct" => "an object",
            "enum" => "one of its allowed values",
            _ => {
                out.push(word.to_owned());
                continue;
            }
        };
        // The type's name goes; punctuation after it stays.
        let mut last = words.next().unwrap_or_default();
        if words.peek() == Some(&"with") {
            // "struct T with 2 elements": the struct read from an array.
            let _ = (words.next(), words.next());
            last = words.next().unwrap_or_default();
        }
        let tail = last.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_');
        out.push(format!("{kind}{tail}"));
    }
    out.join(" ")
        .replace("a map", "an object")
        .replace("a sequence", "an array")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// No answer names a Rust type, for params of any JSON kind, on every method with a rule.
    #[test]
    fn no_problem_names_a_rust_type() {
        let methods = [
            "tools/call",
            "prompts/get",
            "resources/read",
            "resources/subscribe",
            "resources/unsubscribe",
            "completion/complete",
            "initialize",
            "logging/setLevel",
            "tasks/get",
            "tasks/result",
            "tasks/cancel",
            "tasks/list",
            "tools/list",
            "ping",
        ];
        let params = [
            json!("x"),
            json!(5),
            json!(true),
            json!([]),
            json!([1, 2]),
            json!({}),
            json!({"name": 7}),
            json!({"name": "n", "arguments": []}),
            json!({"name": "n", "task": 5}),
            json!({"name": "n", "_meta": 5}),
            json!({"ref": [], "argument": []}),
            json!({"ref": {"type": "x"}, "argument": {"name": 1}}),
            json!({"level": "loud"}),
            json!({"protocolVersion": 1, "capabilities": [], "clientInfo": "c"}),
            json!({"uri": {}}),
            json!({"cursor": []}),
            json!({"taskId": 5}),
        ];
        for method in methods {
            for p in &params {
                let Some(problem) = params_problem(method, Some(p)) else {
                    continue;
                };
                let words: Vec<&str> = problem.split(' ').collect();
                assert!(
                    !words.iter().any(|w| matches!(*w, "struct" | "enum"))
                        && !problem.contains("Params")
                        && !problem.contains(" at line "),
                    "{method} {p}: {problem}"
                );
            }
        }
    }

    #[test]
    fn params_that_are_not_an_object_name_the_members_wanted() {
        for (method, params, want) in [
            (
                "tools/call",
                json!("x"),
                "params must be an object with \"name\"",
            ),
            (
                "prompts/get",
                json!(["name"]),
                "params must be an object with \"name\"",
            ),
            (
                "resources/read",
                json!(1),
                "params must be an object with \"uri\"",
            ),
            (
                "completion/complete",
                json!(false),
                "params must be an object with \"ref\" and \"argument\"",
            ),
            (
                "tasks/get",
                json!("x"),
                "params must be an object with \"taskId\"",
            ),
            (
                "tasks/list",
                json!("x"),
                "params must be an object with an optional \"cursor\", or left out",
            ),
            ("ping", json!(1), "params must be an object, or left out"),
            (
                "tools/call",
                Value::Null,
                "params are missing: an object with \"name\" is required",
            ),
        ] {
            assert_eq!(
                params_problem(method, Some(&params)).as_deref(),
                Some(want),
                "{method} {params}"
            );
        }
    }

    #[test]
    fn prompt_arguments_must_be_strings() {
        for (arguments, want) in [
            (
                json!({"a": 5}),
                Some("argument \"a\" must be a string, not 5 (MCP prompt arguments are strings)"),
            ),
            (
                json!({"ok": "x", "b": null}),
                Some(
                    "argument \"b\" must be a string, not null (MCP prompt arguments are strings)",
                ),
            ),
            (json!({"a": "5"}), None),
            (json!({}), None),
        ] {
            let params = json!({"name": "p", "arguments": arguments});
            assert_eq!(
                params_problem("prompts/get", Some(&params)).as_deref(),
                want,
                "{params}"
            );
        }
    }

    #[test]
    fn serde_reasons_are_read_without_type_names_or_positions() {
        let e = serde_json::from_str::<CallToolRequestParams>("\"x\"").expect_err("a string");
        assert_eq!(plain(&e), "invalid type: string \"x\", expected an object");
        let e = serde_json::from_str::<CallToolRequestParams>("[]").expect_err("an array");
        assert_eq!(plain(&e), "invalid length 1, expected an object");
        let e = serde_json::from_str::<CallToolRequestParams>("{\"name\":\"a\",\"arguments\":1}")
            .expect_err("arguments");
        assert_eq!(plain(&e), "invalid type: integer `1`, expected an object");
    }

    #[test]
    fn a_valid_tasks_result_filed_as_custom_is_not_a_problem() {
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"tasks/result","params":{"taskId":"t"}}"#;
        assert_eq!(text_problem("tasks/result", line), None);
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"tasks/result","params":"t"}"#;
        assert_eq!(
            text_problem("tasks/result", line).as_deref(),
            Some("params must be an object with \"taskId\"")
        );
    }
}
