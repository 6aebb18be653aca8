//! The demo server's prompts (prompts/list, prompts/get).

use rmcp::ErrorData as McpError;
use rmcp::model::{
    GetPromptRequestParams, GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage,
    Role,
};

/// The prompts, in list order.
pub fn list() -> Vec<Prompt> {
    vec![
        Prompt::new(
            "greet",
            Some("Ask the assistant to greet someone"),
            Some(vec![
                PromptArgument::new("name")
                    .with_description("Who to greet")
                    .with_required(true),
                PromptArgument::new("style")
                    .with_description("How to greet (default: friendly)")
                    .with_required(false),
            ]),
        ),
        Prompt::new(
            "review_code",
            Some("Ask the assistant to review a piece of code"),
            Some(vec![
                PromptArgument::new("code")
                    .with_description("The code to review")
                    .with_required(true),
            ]),
        ),
    ]
}

/// Renders one prompt (prompts/get).
///
/// Argument values must be strings, as the spec says; an empty `style` counts as absent.
///
/// # Errors
///
/// JSON-RPC `-32602` (invalid params) for an unknown prompt or a missing required argument.
pub fn get(request: &GetPromptRequestParams) -> Result<GetPromptResult, McpError> {
    let args = request.arguments.as_ref();
    match request.name.as_str() {
        "greet" => {
            let name = required(args, "name")?;
            let style = optional(args, "style").unwrap_or("friendly");
            Ok(GetPromptResult::new(vec![PromptMessage::new_text(
                Role::User,
                format!("Please greet {name} in a {style} way."),
            )])
            .with_description("Greet someone"))
        }
        "review_code" => {
            let code = required(args, "code")?;
            Ok(GetPromptResult::new(vec![
                PromptMessage::new_text(Role::User, format!("Please review this code:\n\n{code}")),
                PromptMessage::new_text(
                    Role::Assistant,
                    "Sure. I will look at correctness first, then readability.",
                ),
            ])
            .with_description("Review code"))
        }
        other => Err(McpError::invalid_params(
            format!("unknown prompt {other:?}"),
            None,
        )),
    }
}

fn optional<'a>(args: Option<&'a JsonObject>, key: &str) -> Option<&'a str> {
    args?.get(key)?.as_str().filter(|s| !s.is_empty())
}

fn required<'a>(args: Option<&'a JsonObject>, key: &str) -> Result<&'a str, McpError> {
    optional(args, key)
        .ok_or_else(|| McpError::invalid_params(format!("missing required argument {key:?}"), None))
}
