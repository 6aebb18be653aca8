//! The answer of a call turned into a `tools/call` result: a tool's result as it is, a resource's
//! contents and a prompt's messages as content blocks, anything else a [`CallError::Unexpected`].

use rmcp::model::{
    CallToolResult, ContentBlock, GetPromptResult, ReadResourceResult, ResourceContents, Role,
    ServerResult,
};

use super::CallError;
use crate::catalog::Target;

/// The `tools/call` result in `raw` (the `result` member of a JSON-RPC response), judged as
/// [`call`](super::call()) judges a decoded one: the fast path's way for results it does not
/// pass through.
///
/// # Errors
/// [`CallError::Unexpected`] when `raw` is not a `tools/call` result.
pub fn tool_result_from_json(raw: &str) -> Result<CallToolResult, CallError> {
    let answer: ServerResult = serde_json::from_str(raw).map_err(|e| CallError::Unexpected {
        what: format!("the server sent an invalid result: {e}"),
    })?;
    let target = Target::Tool {
        name: String::new(),
    };
    into_tool_result(&target, answer)
}

pub(super) fn into_tool_result(
    target: &Target,
    answer: ServerResult,
) -> Result<CallToolResult, CallError> {
    match (target, answer) {
        (Target::Tool { .. }, ServerResult::CallToolResult(result)) => Ok(result),
        // Content blocks of a type rmcp does not know, or members it does not expect.
        (Target::Tool { .. }, ServerResult::CustomResult(custom))
            if let Some(result) = crate::upstream::exact::tool_result(custom.0.clone()) =>
        {
            Ok(result)
        }
        (
            Target::Resource { .. } | Target::ResourceTemplate { .. },
            ServerResult::ReadResourceResult(r),
        ) => Ok(resource_result(r)),
        (Target::Prompt { .. }, ServerResult::GetPromptResult(r)) => Ok(prompt_result(r)),
        (_, ServerResult::CreateTaskResult(_)) => Err(CallError::Unexpected {
            what: "a task handle (task-augmented calls are not supported yet)".into(),
        }),
        (target, other) => Err(CallError::Unexpected {
            what: describe_result(target, &other),
        }),
    }
}

/// "a result with fields tools, nextCursor where tools/call expects content": what arrived,
/// by its JSON field names (never a Rust `Debug` dump).
fn describe_result(target: &Target, result: &ServerResult) -> String {
    let expected = match target {
        Target::Tool { .. } => "tools/call expects content",
        Target::Resource { .. } | Target::ResourceTemplate { .. } => {
            "resources/read expects contents"
        }
        Target::Prompt { .. } => "prompts/get expects messages",
    };
    let value = serde_json::to_value(result).unwrap_or_default();
    if let Some(problem) = crate::upstream::bad_answer::content_problem(&value) {
        return format!("the server sent an invalid result: {problem}");
    }
    let fields = match value {
        serde_json::Value::Object(map) if !map.is_empty() => {
            let names: Vec<&str> = map.keys().map(String::as_str).take(8).collect();
            format!("a result with fields {}", names.join(", "))
        }
        _ => "an empty result".to_owned(),
    };
    format!("{fields} where {expected}")
}

fn resource_result(read: ReadResourceResult) -> CallToolResult {
    let content = read
        .contents
        .into_iter()
        .map(|item| match item {
            ResourceContents::TextResourceContents { text, .. } => ContentBlock::text(text),
            ResourceContents::BlobResourceContents {
                blob,
                mime_type: Some(mime),
                ..
            } if mime.starts_with("image/") => ContentBlock::image(blob, mime),
            ResourceContents::BlobResourceContents {
                blob,
                mime_type: Some(mime),
                ..
            } if mime.starts_with("audio/") => ContentBlock::audio(blob, mime),
            blob => ContentBlock::resource(blob),
        })
        .collect();
    CallToolResult::success(content)
}

fn prompt_result(prompt: GetPromptResult) -> CallToolResult {
    let content = prompt
        .messages
        .into_iter()
        .map(|m| {
            let role = match m.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            match m.content {
                ContentBlock::Text(t) => ContentBlock::text(format!("{role}: {}", t.text)),
                other => other,
            }
        })
        .collect();
    CallToolResult::success(content)
}
