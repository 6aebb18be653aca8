//! The -32601 "Method not found" answers (JSON-RPC 2.0 §5.1) an agent gets, in plain words:
//! which method, and what MCP Companion answers instead. The 2026-07-28 revision removed
//! `ping` and `logging/setLevel`.
//!
//! The 2026-07-28 Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) has `tasks/get`,
//! `tasks/update` and `tasks/cancel` only, and only while it is declared (some served tool
//! takes tasks, or the session has created a task); the 2025-11-25 era has `tasks/get`, `tasks/result`, `tasks/cancel` and
//! `tasks/list`.

use rmcp::ErrorData;
use rmcp::model::ErrorCode;
use serde_json::json;

/// The methods of the 2026-07-28 Tasks extension, which rmcp refuses with a bare -32601 (the
/// method name as the message) while the extension is not declared.
const EXTENSION_METHODS: [&str; 3] = ["tasks/get", "tasks/update", "tasks/cancel"];

/// -32601 for `method`, which nothing here serves; `modern` says the request came in the
/// 2026-07-28 era (no `initialize`), where `tasks/list` and `tasks/result` do not exist.
pub fn not_supported(method: &str, modern: bool) -> ErrorData {
    let message = if modern && matches!(method, "tasks/list" | "tasks/result") {
        format!(
            "method \"{method}\" is not part of the 2026-07-28 Tasks extension, which has \
             tasks/get, tasks/update and tasks/cancel"
        )
    } else {
        format!(
            "method \"{method}\" is not supported by MCP Companion; it answers initialize, \
             server/discover, ping, tools/*, prompts/*, resources/*, tasks/*, \
             subscriptions/listen, completion/complete and logging/setLevel"
        )
    };
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        message,
        Some(json!({ "method": method })),
    )
}

/// Methods the 2026-07-28 revision removed, which rmcp refuses to its requests with a bare
/// -32601.
const REMOVED_IN_2026: [&str; 2] = ["ping", "logging/setLevel"];

/// `error` in plain words when it is rmcp's bare refusal (its message is the method's name)
/// of a Tasks extension method (the extension is not declared now, and why) or of a method
/// the 2026-07-28 revision removed.
pub fn plain(error: &mut ErrorData) {
    if error.code != ErrorCode::METHOD_NOT_FOUND {
        return;
    }
    let method = error.message.as_ref();
    let message = if let Some(method) = EXTENSION_METHODS.into_iter().find(|m| method == *m) {
        format!(
            "method \"{method}\" is not offered now: no tool of the servers running now takes \
             tasks and this session has created none, so MCP Companion declares no Tasks \
             extension (io.modelcontextprotocol/tasks)"
        )
    } else if let Some(method) = REMOVED_IN_2026.into_iter().find(|m| method == *m) {
        format!(
            "method \"{method}\" is not part of the 2026-07-28 protocol revision, which removed it"
        )
    } else {
        return;
    };
    error.data = Some(json!({ "method": error.message.as_ref() }));
    error.message = message.into();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_refusal_of_an_extension_method_is_explained() {
        let mut error = ErrorData::new(ErrorCode::METHOD_NOT_FOUND, "tasks/get", None);
        plain(&mut error);
        assert!(
            error
                .message
                .starts_with("method \"tasks/get\" is not offered now")
                && error.message.contains("io.modelcontextprotocol/tasks"),
            "{}",
            error.message
        );
        assert_eq!(error.data, Some(json!({ "method": "tasks/get" })));
    }

    #[test]
    fn a_bare_refusal_of_a_removed_method_says_the_revision_removed_it() {
        let mut error = ErrorData::new(ErrorCode::METHOD_NOT_FOUND, "ping", None);
        plain(&mut error);
        assert_eq!(
            error.message,
            "method \"ping\" is not part of the 2026-07-28 protocol revision, which removed it"
        );
        assert_eq!(error.data, Some(json!({ "method": "ping" })));
    }

    #[test]
    fn other_errors_are_left_as_they_are() {
        for (code, message) in [
            (ErrorCode::METHOD_NOT_FOUND, "tools/get"),
            (ErrorCode::INVALID_PARAMS, "tasks/get"),
            (ErrorCode::METHOD_NOT_FOUND, "method \"tasks/get\" …"),
        ] {
            let mut error = ErrorData::new(code, message, None);
            plain(&mut error);
            assert_eq!((error.code, error.message.as_ref()), (code, message));
        }
    }

    #[test]
    fn a_2026_agent_asking_for_a_2025_task_method_is_told_what_the_extension_has() {
        let modern = not_supported("tasks/list", true);
        assert!(
            modern
                .message
                .contains("not part of the 2026-07-28 Tasks extension")
        );
        let legacy = not_supported("tasks/list", false);
        assert!(legacy.message.contains("is not supported by MCP Companion"));
        let other = not_supported("foo/bar", true);
        assert!(other.message.contains("is not supported by MCP Companion"));
    }
}
