//! The requests a call can be parked in, as MCP 2026-07-28 lets a server answer them with
//! `InputRequiredResult`: `tools/call`, `prompts/get` and `resources/read` (not
//! `completion/complete`, whose result has no such form). Each one's `requestState` is bound to
//! its method and what it names ([`seal::request_digest`]): the tool and its arguments, the
//! prompt and its arguments, the URI.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, ReadResourceRequestParams, ReadResourceResponse, ServerResult,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};

use super::{Agent, Outcome, Parks, seal};
use crate::endpoint::era;

impl Parks {
    /// `tools/call` of the wrapped tool `name` from an agent of the 2026-07-28 era
    /// ([`Parks::start`]). What the companion ends is an `isError` result, as every failed call.
    ///
    /// # Errors
    /// As [`Parks::start`].
    pub async fn call(
        self: &Arc<Self>,
        agent: Agent<'_>,
        name: String,
        params: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let digest = seal::request_digest("tools/call", &name, params.arguments.as_ref());
        let retry = params
            .request_state
            .as_deref()
            .map(|state| (state, params.input_responses.clone().unwrap_or_default()));
        let arguments = params.arguments;
        let outcome = self
            .start(
                agent,
                digest,
                retry,
                cx,
                move |hub, downstream| async move {
                    let result = hub.call(&name, arguments, Some(&downstream)).await;
                    Ok(ServerResult::CallToolResult(result))
                },
            )
            .await?;
        Ok(match outcome {
            Outcome::Done(done) => match *done {
                Ok(ServerResult::CallToolResult(result)) => {
                    CallToolResponse::Complete(era::complete(result))
                }
                Ok(_) => tool_failed("the call ended without a tools/call result"),
                Err(e) => return Err(e),
            },
            Outcome::InputRequired(asked) => CallToolResponse::InputRequired(asked),
            Outcome::Failed(why) => tool_failed(&why),
        })
    }

    /// `prompts/get` of the served prompt `params.name` from an agent of the 2026-07-28 era
    /// ([`Parks::start`]).
    ///
    /// # Errors
    /// As [`Parks::start`]; what the companion ends is -32603 saying why.
    pub async fn get_prompt(
        self: &Arc<Self>,
        agent: Agent<'_>,
        mut params: GetPromptRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let digest = seal::request_digest("prompts/get", &params.name, params.arguments.as_ref());
        let state = params.request_state.take();
        let responses = params.input_responses.take().unwrap_or_default();
        let retry = state.as_deref().map(|state| (state, responses));
        let outcome = self
            .start(
                agent,
                digest,
                retry,
                cx,
                move |hub, downstream| async move {
                    let result = hub.get_prompt(params, Some(&downstream)).await?;
                    Ok(ServerResult::GetPromptResult(result))
                },
            )
            .await?;
        match outcome {
            Outcome::Done(done) => match *done {
                Ok(ServerResult::GetPromptResult(result)) => {
                    Ok(GetPromptResponse::Complete(result))
                }
                Ok(_) => Err(ended("prompts/get", "messages")),
                Err(e) => Err(e),
            },
            Outcome::InputRequired(asked) => Ok(GetPromptResponse::InputRequired(asked)),
            Outcome::Failed(why) => Err(McpError::internal_error(why, None)),
        }
    }

    /// `resources/read` of `params.uri` from an agent of the 2026-07-28 era
    /// ([`Parks::start`]).
    ///
    /// # Errors
    /// As [`Parks::get_prompt`].
    pub async fn read_resource(
        self: &Arc<Self>,
        agent: Agent<'_>,
        mut params: ReadResourceRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let digest = seal::request_digest("resources/read", &params.uri, None);
        let state = params.request_state.take();
        let responses = params.input_responses.take().unwrap_or_default();
        let retry = state.as_deref().map(|state| (state, responses));
        let outcome = self
            .start(
                agent,
                digest,
                retry,
                cx,
                move |hub, downstream| async move {
                    let result = hub.read_resource(params, Some(&downstream)).await?;
                    Ok(ServerResult::ReadResourceResult(result))
                },
            )
            .await?;
        match outcome {
            Outcome::Done(done) => match *done {
                Ok(ServerResult::ReadResourceResult(result)) => {
                    Ok(ReadResourceResponse::Complete(result))
                }
                Ok(_) => Err(ended("resources/read", "contents")),
                Err(e) => Err(e),
            },
            Outcome::InputRequired(asked) => Ok(ReadResourceResponse::InputRequired(asked)),
            Outcome::Failed(why) => Err(McpError::internal_error(why, None)),
        }
    }
}

fn tool_failed(why: &str) -> CallToolResponse {
    CallToolResponse::Complete(era::complete(CallToolResult::error(vec![
        ContentBlock::text(why.to_owned()),
    ])))
}

fn ended(method: &str, expected: &str) -> McpError {
    McpError::internal_error(
        format!("the {method} request ended without its {expected}"),
        None,
    )
}
