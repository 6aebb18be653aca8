//! A tool's `execution` (MCP 2025-11-25 server/tools, `Tool.execution`: `taskSupport`
//! `"forbidden"`, `"optional"` or `"required"`, the Tasks utility), kept from the server's
//! listing to the agent's.
//!
//! The problem: rmcp 3.11's [`Tool`] has no `execution` field and keeps no unknown fields,
//! so a listing read into it loses the member. The strategy: where a server's listing is read
//! (the stdio lane's decoder and the HTTP client's answers,
//! [`crate::upstream::listing::keep_execution`]), each tool's `execution` is moved under
//! [`STASH`] in its `_meta`, which [`Tool`] keeps; every `tools/list` answer written to an
//! agent moves it back ([`unstash`]: the cached page JSON and the endpoint's line encoder). So
//! it travels with the tool through naming, profiles and pins, and the agent sees the member
//! as the server sent it.

use rmcp::model::Tool;
use serde_json::Value;

/// The `_meta` key a tool's `execution` travels under inside the companion; never written to
/// an agent.
pub const STASH: &str = "mcp-companion/execution";

/// Moves `execution` of each tool in `result.tools` (a `tools/list` result) under [`STASH`]
/// in its `_meta`; `true` when some tool had one.
pub fn stash(result: &mut Value) -> bool {
    let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) else {
        return false;
    };
    let mut moved = false;
    for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
        let Some(execution) = tool.remove("execution") else {
            continue;
        };
        let meta = tool
            .entry("_meta")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(STASH.to_owned(), execution);
            moved = true;
        }
    }
    moved
}

/// Moves each tool's [`STASH`] in `result.tools` back to its `execution` member, dropping a
/// `_meta` left empty; a result without tools is left as it is.
pub fn unstash(result: &mut Value) {
    let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) else {
        return;
    };
    for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
        let Some(meta) = tool.get_mut("_meta").and_then(Value::as_object_mut) else {
            continue;
        };
        let Some(execution) = meta.remove(STASH) else {
            continue;
        };
        if meta.is_empty() {
            tool.remove("_meta");
        }
        tool.insert("execution".to_owned(), execution);
    }
}

/// Whether any tool in `tools` carries a stashed `execution`.
pub fn any_stashed(tools: &[Tool]) -> bool {
    tools
        .iter()
        .any(|t| t.meta.as_ref().is_some_and(|m| m.contains_key(STASH)))
}

/// The tool's `execution.taskSupport` as the server listed it (`None` when absent).
pub fn task_support(tool: &Tool) -> Option<&str> {
    tool.meta.as_ref()?.get(STASH)?.get("taskSupport")?.as_str()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn execution_survives_the_tool_model_and_comes_back_unchanged() {
        let listed = json!({ "tools": [
            { "name": "a", "inputSchema": { "type": "object" },
              "execution": { "taskSupport": "required" } },
            { "name": "b", "inputSchema": { "type": "object" },
              "_meta": { "ui": { "resourceUri": "ui://b" } }, "execution": { "taskSupport": "optional" } },
            { "name": "c", "inputSchema": { "type": "object" } },
        ]});
        let mut stashed = listed.clone();
        assert!(stash(&mut stashed));
        let tools: Vec<Tool> =
            serde_json::from_value(stashed["tools"].clone()).expect("rmcp reads every tool");
        assert_eq!(task_support(&tools[0]), Some("required"));
        assert_eq!(task_support(&tools[1]), Some("optional"));
        assert_eq!(task_support(&tools[2]), None);
        assert!(any_stashed(&tools));
        let mut served = json!({ "tools": serde_json::to_value(&tools).expect("serialise") });
        unstash(&mut served);
        assert_eq!(served, listed);
    }

    #[test]
    fn a_listing_without_execution_is_untouched() {
        let listed = json!({ "tools": [{ "name": "a", "inputSchema": {} }], "nextCursor": "2" });
        let mut value = listed.clone();
        assert!(!stash(&mut value));
        unstash(&mut value);
        assert_eq!(value, listed);
        let mut other = json!({ "content": [] });
        unstash(&mut other);
        assert_eq!(other, json!({ "content": [] }));
    }
}
