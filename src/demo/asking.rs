//! The `ask_name` prompt and the `demo://asking/name` resource (`--asking`): each asks the
//! client for a name before it answers, in the way of the server's era: with `--stateless`
//! (2026-07-28) an `InputRequiredResult` with one `elicitation/create` form under the key `name`
//! and the `requestState` [`STATE`]; otherwise an `elicitation/create` request sent to the
//! client while the request is in flight. The answer names who answered: `Hello, <name>!`, and
//! `(state kept)` when a retry carried the state back unchanged; `(declined)` for an answer
//! that was not `accept`.

use std::collections::BTreeMap;

use rmcp::model::{
    ClientResult, ElicitRequest, ElicitRequestParams, ElicitationAction, ElicitationSchema,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, InputRequest, InputRequiredResult,
    InputResponses, Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, Role, ServerRequest,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::Value;

/// The prompt's name.
pub const PROMPT: &str = "ask_name";
/// The resource's URI.
pub const URI: &str = "demo://asking/name";
/// The `requestState` the first round hands out.
pub const STATE: &str = "demo-ask-1";

/// The prompt, for prompts/list.
pub fn prompt() -> Prompt {
    Prompt::new(
        PROMPT,
        Some("Ask the client for a name, then greet it"),
        Some(vec![
            PromptArgument::new("greeting")
                .with_description("The greeting (default: Hello)")
                .with_required(false),
        ]),
    )
}

/// The resource, for resources/list.
pub fn resource() -> Resource {
    Resource::new(URI, "asking")
        .with_description("Asks the client for a name, then greets it")
        .with_mime_type("text/plain")
}

/// `prompts/get` of [`PROMPT`].
///
/// # Errors
/// -32603 when the client could not be asked (`initialize` era).
pub async fn get_prompt(
    params: GetPromptRequestParams,
    stateless: bool,
    cx: &RequestContext<RoleServer>,
) -> Result<GetPromptResponse, McpError> {
    let greeting = params
        .arguments
        .as_ref()
        .and_then(|a| a.get("greeting"))
        .and_then(Value::as_str)
        .unwrap_or("Hello")
        .to_owned();
    let text = match ask(
        params.input_responses.as_ref(),
        params.request_state.as_deref(),
        stateless,
        cx,
    )
    .await?
    {
        Asked::Answer(name) => format!("{greeting}, {name}"),
        Asked::Input(input) => return Ok(GetPromptResponse::InputRequired(input)),
    };
    Ok(GetPromptResponse::Complete(GetPromptResult::new(vec![
        PromptMessage::new_text(Role::User, text),
    ])))
}

/// `resources/read` of [`URI`].
///
/// # Errors
/// As [`get_prompt`].
pub async fn read(
    params: ReadResourceRequestParams,
    stateless: bool,
    cx: &RequestContext<RoleServer>,
) -> Result<ReadResourceResponse, McpError> {
    let asked = ask(
        params.input_responses.as_ref(),
        params.request_state.as_deref(),
        stateless,
        cx,
    )
    .await?;
    match asked {
        Asked::Answer(name) => Ok(ReadResourceResponse::Complete(ReadResourceResult::new(
            vec![ResourceContents::text(format!("Hello, {name}"), URI)],
        ))),
        Asked::Input(input) => Ok(ReadResourceResponse::InputRequired(input)),
    }
}

enum Asked {
    /// What follows the greeting: `<name>!` and the notes of the module doc.
    Answer(String),
    /// The first round of a 2026-07-28 request.
    Input(InputRequiredResult),
}

async fn ask(
    responses: Option<&InputResponses>,
    state: Option<&str>,
    stateless: bool,
    cx: &RequestContext<RoleServer>,
) -> Result<Asked, McpError> {
    if stateless {
        let Some(answer) = responses.and_then(|r| r.get("name")) else {
            let requests =
                BTreeMap::from([("name".to_owned(), InputRequest::Elicitation(form()?))]);
            return Ok(Asked::Input(InputRequiredResult::new(
                Some(requests),
                Some(STATE.to_owned()),
            )));
        };
        let kept = if state == Some(STATE) {
            " (state kept)"
        } else {
            ""
        };
        return Ok(Asked::Answer(format!("{}{kept}", named(answer))));
    }
    let answer = cx
        .peer
        .send_request(ServerRequest::ElicitRequest(form()?))
        .await
        .map_err(|e| McpError::internal_error(format!("could not ask the client: {e}"), None))?;
    match answer {
        ClientResult::ElicitResult(r) if r.action == ElicitationAction::Accept => {
            let content = r.content.unwrap_or_default();
            Ok(Asked::Answer(named(
                &serde_json::json!({ "action": "accept", "content": content }),
            )))
        }
        ClientResult::ElicitResult(_) => Ok(Asked::Answer("(declined)".to_owned())),
        _ => Err(McpError::internal_error(
            "the client answered elicitation/create with another result",
            None,
        )),
    }
}

/// `<name>!` from an elicitation result (as JSON), or `(declined)`.
fn named(answer: &Value) -> String {
    if answer["action"] != "accept" {
        return "(declined)".to_owned();
    }
    match answer["content"]["name"].as_str() {
        Some(name) => format!("{name}!"),
        None => "(no name)".to_owned(),
    }
}

fn form() -> Result<ElicitRequest, McpError> {
    let schema = ElicitationSchema::builder()
        .required_string("name")
        .build()
        .map_err(|e| McpError::internal_error(format!("the name form: {e}"), None))?;
    Ok(ElicitRequest::new(
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: "Your name?".to_owned(),
            requested_schema: schema,
        },
    ))
}
