//! The upstream request of a call: `tools/call` with the arguments, `resources/read` of the
//! resource or of the expanded template, `prompts/get` with the arguments as strings.

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, GetPromptRequest,
    GetPromptRequestParams, JsonObject, ReadResourceRequest, ReadResourceRequestParams,
};

use super::CallError;
use crate::catalog::{Target, uri_template};

pub(super) fn build(
    target: &Target,
    arguments: Option<JsonObject>,
) -> Result<ClientRequest, CallError> {
    Ok(match target {
        Target::Tool { name } => {
            let mut params = CallToolRequestParams::new(name.clone());
            params.arguments = arguments;
            ClientRequest::CallToolRequest(CallToolRequest::new(params))
        }
        Target::Resource { uri } => ClientRequest::ReadResourceRequest(ReadResourceRequest::new(
            ReadResourceRequestParams::new(uri.clone()),
        )),
        Target::ResourceTemplate { uri_template } => {
            let args = arguments.unwrap_or_default();
            let uri =
                uri_template::expand(uri_template, &args).map_err(|e| CallError::Arguments {
                    reason: e.to_string(),
                })?;
            ClientRequest::ReadResourceRequest(ReadResourceRequest::new(
                ReadResourceRequestParams::new(uri),
            ))
        }
        Target::Prompt { name, .. } => {
            let mut params = GetPromptRequestParams::new(name.clone());
            params.arguments = arguments.map(stringify_values);
            ClientRequest::GetPromptRequest(GetPromptRequest::new(params))
        }
    })
}

/// Prompt arguments are strings on the wire; agents sometimes send numbers or booleans.
fn stringify_values(args: JsonObject) -> JsonObject {
    args.into_iter()
        .map(|(k, v)| {
            let v = match v {
                serde_json::Value::String(s) => serde_json::Value::String(s),
                other => serde_json::Value::String(other.to_string()),
            };
            (k, v)
        })
        .collect()
}
