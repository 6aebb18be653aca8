//! The requests a call can be parked in, as MCP 2026-07-28 lets a server answer them with
//! `InputRequiredResult`: `tools/call`, `prompts/get` and `resources/read` (not
//! `completion/complete`, whose result has no such form). Each one's `requestState` is bound to
//! its method and what it names ([`seal::request_digest`]): the tool and its arguments, the
//! prompt and its arguments, the URI.

use std::future::Future;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, InputRequiredResult, InputResponses, ReadResourceRequestParams,
    ReadResourceResponse, ServerResult,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};

use super::{Agent, Done, Outcome, Parks, seal};
use crate::endpoint::era;
use crate::hub::Hub;
use crate::upstream::call::Downstream;

/// The agent's answer to one kind of request a call can be parked in.
trait Parkable: Sized {
    /// The answer carrying `result`, or `None` when `result` is another kind's.
    fn complete(result: ServerResult) -> Option<Self>;
    /// The answer asking the agent `asked`.
    fn input_required(asked: InputRequiredResult) -> Self;
    /// Why the request failed when it ended with another kind's result.
    fn mismatch() -> String;
    /// What the agent gets when the companion ended the request, saying `why`: -32603 unless
    /// the kind has a result for it.
    fn failed(why: String) -> Result<Self, McpError> {
        Err(McpError::internal_error(why, None))
    }
}

impl Parkable for CallToolResponse {
    fn complete(result: ServerResult) -> Option<Self> {
        match result {
            ServerResult::CallToolResult(result) => {
                Some(CallToolResponse::Complete(era::complete(result)))
            }
            _ => None,
        }
    }
    fn input_required(asked: InputRequiredResult) -> Self {
        CallToolResponse::InputRequired(asked)
    }
    fn mismatch() -> String {
        "the call ended without a tools/call result".to_owned()
    }
    /// An `isError` result, as every failed call.
    fn failed(why: String) -> Result<Self, McpError> {
        Ok(tool_failed(&why))
    }
}

impl Parkable for GetPromptResponse {
    fn complete(result: ServerResult) -> Option<Self> {
        match result {
            ServerResult::GetPromptResult(result) => Some(GetPromptResponse::Complete(result)),
            _ => None,
        }
    }
    fn input_required(asked: InputRequiredResult) -> Self {
        GetPromptResponse::InputRequired(asked)
    }
    fn mismatch() -> String {
        ended("prompts/get", "messages")
    }
}

impl Parkable for ReadResourceResponse {
    fn complete(result: ServerResult) -> Option<Self> {
        match result {
            ServerResult::ReadResourceResult(result) => {
                Some(ReadResourceResponse::Complete(result))
            }
            _ => None,
        }
    }
    fn input_required(asked: InputRequiredResult) -> Self {
        ReadResourceResponse::InputRequired(asked)
    }
    fn mismatch() -> String {
        ended("resources/read", "contents")
    }
}

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
        mut params: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let digest = seal::request_digest("tools/call", &name, params.arguments.as_ref());
        let retry = (params.request_state.take(), params.input_responses.take());
        let arguments = params.arguments;
        self.park(
            agent,
            digest,
            retry,
            cx,
            move |hub, downstream| async move {
                let result = hub.call(&name, arguments, Some(&downstream)).await;
                Ok(ServerResult::CallToolResult(result))
            },
        )
        .await
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
        let retry = (params.request_state.take(), params.input_responses.take());
        self.park(
            agent,
            digest,
            retry,
            cx,
            move |hub, downstream| async move {
                Ok(ServerResult::GetPromptResult(
                    hub.get_prompt(params, Some(&downstream)).await?,
                ))
            },
        )
        .await
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
        let retry = (params.request_state.take(), params.input_responses.take());
        self.park(
            agent,
            digest,
            retry,
            cx,
            move |hub, downstream| async move {
                Ok(ServerResult::ReadResourceResult(
                    hub.read_resource(params, Some(&downstream)).await?,
                ))
            },
        )
        .await
    }

    /// The request of digest `digest` run by [`Parks::start`], or resumed when the agent sent
    /// a `requestState` (`retry`: that state and its `inputResponses`, none meaning none
    /// answered); the agent's answer of kind `R`.
    ///
    /// # Errors
    /// As [`Parks::start`]; the error the request ended with; what [`Parkable::failed`] gives.
    async fn park<R, F, Fut>(
        self: &Arc<Self>,
        agent: Agent<'_>,
        digest: [u8; 32],
        retry: (Option<String>, Option<InputResponses>),
        cx: RequestContext<RoleServer>,
        run: F,
    ) -> Result<R, McpError>
    where
        R: Parkable,
        F: FnOnce(Hub, Downstream) -> Fut,
        Fut: Future<Output = Done> + Send + 'static,
    {
        let (state, responses) = retry;
        let retry = state
            .as_deref()
            .map(|state| (state, responses.unwrap_or_default()));
        match self.start(agent, digest, retry, cx, run).await? {
            Outcome::Done(done) => match R::complete((*done)?) {
                Some(answer) => Ok(answer),
                None => R::failed(R::mismatch()),
            },
            Outcome::InputRequired(asked) => Ok(R::input_required(asked)),
            Outcome::Failed(why) => R::failed(why),
        }
    }
}

fn tool_failed(why: &str) -> CallToolResponse {
    CallToolResponse::Complete(era::complete(CallToolResult::error(vec![
        ContentBlock::text(why.to_owned()),
    ])))
}

fn ended(method: &str, expected: &str) -> String {
    format!("the {method} request ended without its {expected}")
}
