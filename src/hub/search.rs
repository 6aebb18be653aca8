//! The two search tools of a view with `toolSearch` on ([`crate::catalog::search`]), answered
//! by the hub: `search_tools` searches the session's own catalog (its profile's, so it never
//! finds a tool outside the profile), and `call_tool` becomes the call of the tool it names.
//!
//! `call_tool {name, arguments}` is the call of `name` with `arguments` on the rmcp path
//! ([`Hub::call_as`]): the same routing (an unknown or out-of-profile name gets the same
//! `unknown tool` answer), deadline, retry rule and error texts ([`super::forward::Forward`]),
//! and one activity record, under `name`. A `search_tools` call is recorded under its own
//! name. Both tools take the rmcp path (the fast path never routes them).

use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde_json::{Value, json};

use super::Hub;
use super::forward::error_result;
use crate::catalog::Catalog;
use crate::catalog::search::{CALL_TOOL, DEFAULT_LIMIT, MAX_LIMIT, SEARCH_TOOLS};

/// What a search tool call comes to.
pub(super) enum SearchCall {
    /// Answered here.
    Answer(CallToolResult),
    /// `call_tool`: the call of this tool with these arguments.
    Call(String, Option<JsonObject>),
}

impl Hub {
    /// The search tool `name`'s call with `arguments`, over `catalog` (the session's).
    pub(super) fn search_call(
        catalog: &Catalog,
        name: &str,
        arguments: Option<&JsonObject>,
    ) -> SearchCall {
        let empty = JsonObject::new();
        let arguments = arguments.unwrap_or(&empty);
        if name == CALL_TOOL {
            let Some(target) = arguments.get("name").and_then(Value::as_str) else {
                return SearchCall::Answer(error_result(format!(
                    "{CALL_TOOL} needs \"name\": the name of a tool {SEARCH_TOOLS} returned"
                )));
            };
            if crate::catalog::search::is_search_tool(target) {
                return SearchCall::Answer(error_result(format!(
                    "call \"{target}\" directly, not through {CALL_TOOL}"
                )));
            }
            let inner = match arguments.get("arguments") {
                None | Some(Value::Null) => None,
                Some(Value::Object(o)) => Some(o.clone()),
                Some(_) => {
                    return SearchCall::Answer(error_result(format!(
                        "{CALL_TOOL}: \"arguments\" must be an object"
                    )));
                }
            };
            return SearchCall::Call(target.to_owned(), inner);
        }
        let Some(query) = arguments
            .get("query")
            .and_then(Value::as_str)
            .filter(|q| !q.trim().is_empty())
        else {
            return SearchCall::Answer(error_result(format!(
                "{SEARCH_TOOLS} needs \"query\": a few words describing the task"
            )));
        };
        let limit = match arguments.get("limit") {
            None | Some(Value::Null) => DEFAULT_LIMIT,
            Some(v) => match v.as_u64() {
                Some(n @ 1..) => usize::try_from(n).map_or(MAX_LIMIT, |n| n.min(MAX_LIMIT)),
                _ => {
                    return SearchCall::Answer(error_result(format!(
                        "{SEARCH_TOOLS}: \"limit\" must be an integer from 1 to {MAX_LIMIT}"
                    )));
                }
            },
        };
        let found = catalog.search(query, limit);
        let tools: Vec<Value> = found
            .iter()
            .map(|f| {
                json!({
                    "name": f.tool.name,
                    "description": f.tool.description,
                    "inputSchema": f.tool.input_schema,
                })
            })
            .collect();
        let text = if tools.is_empty() {
            format!("No tool matches \"{query}\". Try other words for the task.")
        } else {
            let count = match tools.len() {
                1 => "1 tool matches".to_owned(),
                n => format!("{n} tools match"),
            };
            let mut text = format!(
                "{count} \"{query}\", best first. Call one with {CALL_TOOL} \
                 {{\"name\": <name>, \"arguments\": {{...}}}}.\n"
            );
            for tool in &tools {
                text.push('\n');
                text.push_str(&tool.to_string());
            }
            text
        };
        let mut result = CallToolResult::structured(json!({ "tools": tools }));
        result.content = vec![ContentBlock::text(text)];
        SearchCall::Answer(result)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use rmcp::model::{JsonObject, Tool};
    use serde_json::json;

    use super::SearchCall;
    use crate::catalog::{Catalog, CatalogInput, ServerListing};
    use crate::hub::Hub;

    fn catalog() -> Catalog {
        let listing = ServerListing {
            tools: vec![Tool::new(
                "echo",
                "Return the message unchanged",
                JsonObject::new(),
            )],
            ..ServerListing::default()
        };
        let config =
            crate::config::parse(r#"{"toolSearch": true}"#, Path::new("c.json")).expect("parses");
        Catalog::build(&[CatalogInput {
            server: "s",
            enabled_tools: &["*".to_owned()],
            listing: &listing,
        }])
        .with_tool_search(&config.tool_search)
    }

    fn answer(name: &str, args: serde_json::Value) -> String {
        match Hub::search_call(&catalog(), name, args.as_object()) {
            SearchCall::Answer(a) => {
                let text: Vec<String> = a
                    .content
                    .iter()
                    .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                    .collect();
                format!(
                    "{}{}",
                    if a.is_error == Some(true) {
                        "error: "
                    } else {
                        ""
                    },
                    text.join("")
                )
            }
            SearchCall::Call(name, args) => format!("call {name} {}", json!(args)),
        }
    }

    #[test]
    fn bad_arguments_are_answered_with_what_is_wrong() {
        assert!(
            answer("search_tools", json!({})).starts_with("error: search_tools needs \"query\"")
        );
        assert!(answer("search_tools", json!({"query": " "})).starts_with("error: "));
        for limit in [json!(0), json!(-1), json!("5"), json!(1.5)] {
            let a = answer("search_tools", json!({"query": "echo", "limit": limit}));
            assert!(
                a.contains("\"limit\" must be an integer from 1 to 20"),
                "{a}"
            );
        }
        assert!(answer("call_tool", json!({})).starts_with("error: call_tool needs \"name\""));
        assert!(answer("call_tool", json!({"name": "search_tools"})).contains("directly"));
        let bad = answer("call_tool", json!({"name": "mcp_s_echo", "arguments": [1]}));
        assert!(bad.contains("\"arguments\" must be an object"), "{bad}");
    }

    #[test]
    fn call_tool_becomes_the_named_call_and_search_finds() {
        assert_eq!(
            answer(
                "call_tool",
                json!({"name": "mcp_s_echo", "arguments": {"message": "m"}})
            ),
            r#"call mcp_s_echo {"message":"m"}"#
        );
        assert_eq!(answer("call_tool", json!({"name": "x"})), "call x null");
        let found = answer(
            "search_tools",
            json!({"query": "unchanged message", "limit": 99}),
        );
        assert!(
            found.starts_with("1 tool matches \"unchanged message\""),
            "{found}"
        );
        assert!(found.contains("\"mcp_s_echo\""), "{found}");
        let none = answer("search_tools", json!({"query": "weather"}));
        assert!(none.starts_with("No tool matches"), "{none}");
    }
}
