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

/// The `experimental` capability key the `tasks` capability travels under, for the same
/// reason: rmcp 3.11's `ServerCapabilities` has no `tasks` field.
pub const TASKS_STASH: &str = "mcp-companion/tasks";

/// The `tasks` capability (MCP 2025-11-25 utilities/tasks) the companion declares when some
/// served tool takes task-augmented calls: task-augmented `tools/call`, `tasks/list`,
/// `tasks/cancel`.
pub fn tasks_capability() -> serde_json::Map<String, Value> {
    let Value::Object(caps) = serde_json::json!({
        "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } }
    }) else {
        unreachable!("an object literal")
    };
    caps
}

/// Whether some tool in `tools` may be called as a task (`taskSupport` `optional` or
/// `required`).
pub fn any_task_tool(tools: &[Tool]) -> bool {
    tools
        .iter()
        .any(|t| matches!(task_support(t), Some("optional" | "required")))
}

/// Moves `capabilities.experimental[TASKS_STASH]` of an `initialize` result to
/// `capabilities.tasks`, dropping an `experimental` left empty.
pub fn unstash_capabilities(result: &mut Value) {
    let Some(caps) = result
        .get_mut("capabilities")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let Some(experimental) = caps.get_mut("experimental").and_then(Value::as_object_mut) else {
        return;
    };
    let Some(tasks) = experimental.remove(TASKS_STASH) else {
        return;
    };
    if experimental.is_empty() {
        caps.remove("experimental");
    }
    caps.insert("tasks".to_owned(), tasks);
}

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

/// Marks `tool`, of a 2026-07-28 server that declared the Tasks extension, `taskSupport:
/// "optional"` for `initialize`-era agents: 2026-07-28 tools carry no `execution` (the server
/// decides per call), and through the companion an `initialize`-era agent may call any of
/// them as a task (`hub/tasks/from_modern.rs`). A tool that has an `execution` keeps it.
pub fn mark_optional(tool: &mut Tool) {
    let meta = tool.meta.get_or_insert_with(Default::default);
    if !meta.contains_key(STASH) {
        meta.insert(
            STASH.to_owned(),
            serde_json::json!({ "taskSupport": "optional" }),
        );
    }
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
    fn a_2026_servers_tool_is_marked_optional_unless_it_says_otherwise() {
        let tools: Vec<Tool> = serde_json::from_value(json!([
            { "name": "plain", "inputSchema": { "type": "object" } },
            { "name": "said", "inputSchema": { "type": "object" },
              "_meta": { STASH: { "taskSupport": "forbidden" } } },
        ]))
        .expect("tools");
        let marked: Vec<Tool> = tools
            .into_iter()
            .map(|mut t| {
                mark_optional(&mut t);
                t
            })
            .collect();
        assert_eq!(task_support(&marked[0]), Some("optional"));
        assert_eq!(task_support(&marked[1]), Some("forbidden"));
    }

    #[test]
    fn the_tasks_capability_comes_out_where_the_spec_puts_it() {
        let mut result = json!({ "protocolVersion": "2025-11-25", "capabilities": {
            "tools": {}, "experimental": { TASKS_STASH: tasks_capability() } } });
        unstash_capabilities(&mut result);
        assert_eq!(
            result["capabilities"],
            json!({ "tools": {}, "tasks": {
                "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } } })
        );
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
