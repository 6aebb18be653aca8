//! `prompts/get` and `resources/read` passed to the server that owns the prompt or resource
//! (routed by the catalog's native table, as in `native.rs`), sent the way a tool call is sent
//! ([`crate::upstream::call::rounds`]): the calling agent is registered on the server's session
//! while the request is in flight, so the server's `elicitation/create`,
//! `sampling/createMessage` and `roots/list` reach that agent ([`crate::upstream::ask`]); a
//! 2026-07-28 server's `InputRequiredResult` is answered the same way and the request sent
//! again ([`crate::upstream::mrtr`]); the agent's progress token gets the server's progress;
//! the agent's cancel is sent upstream.
//!
//! Each round lasts at most the server's `toolTimeout` after its last progress (and
//! [`MAX_TIMEOUT_FACTOR`] times that in all). A server that is not running answers at once.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientRequest, GetPromptRequest, GetPromptRequestParams, GetPromptResult, ReadResourceRequest,
    ReadResourceRequestParams, ReadResourceResult, ServerResult,
};

use super::Hub;
use super::forward::MAX_TIMEOUT_FACTOR;
use super::native::{rewritten, to_agent};
use super::unserved::resource_route;
use crate::config::DEFAULT_TOOL_TIMEOUT;
use crate::upstream::call::{self, CallError, Clock, Downstream};

impl Hub {
    /// `prompts/get` of the served prompt `params.name`, for the agent of `downstream`.
    ///
    /// # Errors
    /// -32602 for a prompt not served (`hub/unserved.rs`); the server's own error; -32603 when the server is not
    /// running, does not answer within its `toolTimeout`, or the agent cancelled.
    pub async fn get_prompt(
        &self,
        mut params: GetPromptRequestParams,
        downstream: Option<&Downstream>,
    ) -> Result<GetPromptResult, McpError> {
        let catalog = self.catalog();
        let route = catalog
            .native()
            .prompt(&params.name)
            .cloned()
            .ok_or_else(|| self.unknown_prompt(&params.name, "get"))?;
        params.name.clone_from(&route.upstream);
        // The agent's own round state is the companion's business, never the server's.
        params.input_responses = None;
        params.request_state = None;
        let request = ClientRequest::GetPromptRequest(GetPromptRequest::new(params));
        match self
            .native_rounds(&route.server, "prompts/get", request, downstream)
            .await?
        {
            ServerResult::GetPromptResult(result) => {
                Ok(to_agent(catalog.native(), &route.server, result))
            }
            _ => Err(unexpected(&route.server, "prompts/get", "messages")),
        }
    }

    /// `resources/read` of the agent's `params.uri`, for the agent of `downstream`.
    ///
    /// # Errors
    /// -32002 when no one server can be said to own the URI (`hub/unserved.rs`); otherwise as
    /// [`Hub::get_prompt`].
    pub async fn read_resource(
        &self,
        mut params: ReadResourceRequestParams,
        downstream: Option<&Downstream>,
    ) -> Result<ReadResourceResult, McpError> {
        let catalog = self.catalog();
        let route = resource_route(catalog.native(), &params.uri, "read")?;
        let agent_uri = std::mem::replace(&mut params.uri, route.upstream.clone());
        params.input_responses = None;
        params.request_state = None;
        let request = ClientRequest::ReadResourceRequest(ReadResourceRequest::new(params));
        let answer = self
            .native_rounds(&route.server, "resources/read", request, downstream)
            .await?;
        let ServerResult::ReadResourceResult(result) = answer else {
            return Err(unexpected(&route.server, "resources/read", "contents"));
        };
        let native = catalog.native();
        // The contents of the URI read carry the URI the agent read (an expansion of a
        // rewritten template is in no table).
        Ok(if agent_uri == route.upstream {
            to_agent(native, &route.server, result)
        } else {
            rewritten(result, &|uri| {
                if uri == route.upstream {
                    agent_uri.clone()
                } else {
                    native.to_agent(&route.server, uri)
                }
            })
        })
    }

    /// `request` to `server` in rounds (module doc); its JSON-RPC error passed on as the
    /// server sent it, any other failure -32603 naming the server and `method`.
    async fn native_rounds(
        &self,
        server: &str,
        method: &str,
        request: ClientRequest,
        downstream: Option<&Downstream>,
    ) -> Result<ServerResult, McpError> {
        let live = self.live_for(server)?;
        let timeout = self
            .server(server)
            .and_then(|s| s.config().map(|c| c.tool_timeout))
            .unwrap_or(DEFAULT_TOOL_TIMEOUT);
        let clock = Clock {
            idle: timeout,
            max: timeout.saturating_mul(MAX_TIMEOUT_FACTOR),
        };
        let answer = call::rounds(live.upstream(), request, clock, downstream).await;
        answer.map_err(|e| match e {
            CallError::Rpc {
                code,
                message,
                data,
            } => McpError::new(rmcp::model::ErrorCode(code), message, data),
            CallError::Timeout { timeout } => McpError::internal_error(
                format!(
                    "server \"{server}\" did not answer {method} within {} s (its toolTimeout)",
                    timeout.as_secs_f64()
                ),
                None,
            ),
            other => McpError::internal_error(
                format!("server \"{server}\" could not answer {method}: {other}"),
                None,
            ),
        })
    }
}

/// -32603 for an answer that is not the result of the request.
fn unexpected(server: &str, method: &str, expected: &str) -> McpError {
    McpError::internal_error(
        format!("server \"{server}\" answered {method} with a result that has no {expected}"),
        None,
    )
}
