//! The requests during which a server may ask the agent for input — `tools/call`,
//! `prompts/get`, `resources/read` — and how each era of agent is reached meanwhile:
//!
//! | agent | the server's `elicitation/create`, `sampling/createMessage`, `roots/list` (or a 2026-07-28 server's `InputRequiredResult`) |
//! |---|---|
//! | `initialize` era | sent to it on this session as requests ([`crate::upstream::ask`], [`crate::upstream::mrtr`]) |
//! | 2026-07-28 | the request is parked and the agent answered `InputRequiredResult` with a signed `requestState` ([`super::park`]) |
//!
//! Either way the request is dropped (and so cancelled upstream) when its agent has gone.

use std::future::Future;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse,
    ReadResourceRequestParams, ReadResourceResponse,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};

use super::{Endpoint, client_names, era, park};
use crate::upstream::call::Downstream;

impl Endpoint {
    /// How a 2026-07-28 agent's request parks: `None` for an agent of the `initialize` era
    /// (and when the process has no key to sign states with, so nothing can be parked).
    fn parking(&self, cx: &RequestContext<RoleServer>) -> Option<park::Agent<'_>> {
        let parks =
            !era::is_initialize_session(&cx.peer) && park::seal::Sealer::process().is_some();
        parks.then_some(park::Agent {
            hub: &self.hub,
            gone: &self.agent_gone,
            shutdown: &self.shutdown,
        })
    }

    /// The agent side of a request of an agent of the `initialize` era.
    fn downstream(&self, cx: RequestContext<RoleServer>) -> Downstream {
        Downstream {
            progress_token: cx.meta.get_progress_token(),
            meta: crate::upstream::call::forwarded_meta(&cx.meta),
            arguments: cx
                .extensions
                .get::<crate::upstream::exact::ExactArguments>()
                .map(|a| a.0.clone()),
            peer: cx.peer,
            cancelled: cx.ct,
            shutdown: self.shutdown.clone(),
            relay: None,
        }
    }

    /// `work`'s answer, unless the agent goes first: then `work` is dropped (which cancels it
    /// upstream) and the undeliverable answer is an error.
    async fn unless_gone<T>(&self, work: impl Future<Output = T>) -> Result<T, McpError> {
        tokio::select! {
            biased;
            answer = work => Ok(answer),
            () = self.agent_gone.cancelled() => Err(McpError::internal_error(
                "the agent connection closed before the request finished",
                None,
            )),
        }
    }

    /// `tools/call`, routed by wrapped name (as shortened for this agent, [`client_names`]).
    pub(super) async fn call_tool_asking(
        &self,
        params: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.hub.count_call();
        self.hub.agent_named(&cx.meta);
        let budget = client_names::budget_for(&cx.peer, &cx.meta);
        let catalog = self.hub.catalog();
        let name = client_names::wrapped_of(&catalog, &params.name, budget).into_owned();
        // A 2026-07-28 agent that declared the Tasks extension gets a task for a tool that
        // cannot be called otherwise.
        if !era::is_initialize_session(&cx.peer)
            && cx.client_capabilities().is_some_and(|c| c.supports_tasks())
            && (self.hub.runs_as_task(&name) || self.hub.offers_modern_tasks(&name))
        {
            // The call policy first, as for every call; a refusal is the call's result.
            let gate =
                (self.hub).task_call_refused(&name, params.arguments.as_ref(), Some(&cx.peer));
            if let Some(refused) = Box::pin(gate).await {
                return Ok(CallToolResponse::Complete(era::complete(refused)));
            }
            if self.hub.runs_as_task(&name) {
                let created =
                    self.hub
                        .call_tool_as_modern_task(&self.tasks, &name, params.arguments);
                return Box::pin(created).await.map(CallToolResponse::Task);
            }
            // A 2026-07-28 server that speaks the extension decides itself whether the call
            // becomes a task; when it asks for input first, the call goes the ordinary way.
            if self.hub.offers_modern_tasks(&name) {
                let arguments = params.arguments.clone();
                let call = self
                    .hub
                    .call_modern_server_as_task(&self.tasks, &name, arguments);
                match Box::pin(call).await? {
                    Some(CallToolResponse::Complete(result)) => {
                        return super::passed(era::complete(result))
                            .map(CallToolResponse::Complete);
                    }
                    Some(response) => return Ok(response),
                    None => {}
                }
            }
        }
        if let Some(agent) = self.parking(&cx) {
            return match Box::pin(self.parks.call(agent, name, params, cx)).await {
                Ok(CallToolResponse::Complete(result)) => {
                    super::passed(result).map(CallToolResponse::Complete)
                }
                other => other,
            };
        }
        let downstream = self.downstream(cx);
        // Boxed, as every hub future a handler awaits: rmcp spawns each request's handler, and
        // tokio copies a spawned task's whole future when it starts and ends it; the call's
        // future inline made those copies about a quarter of a remote call's instructions.
        // The server's log messages sent before its answer are written before it.
        let call = Box::pin(async {
            let result = self
                .hub
                .call(&name, params.arguments, Some(&downstream))
                .await;
            self.delivery.settle().await;
            result
        });
        let result = self.unless_gone(call).await?;
        super::passed(era::complete(result)).map(CallToolResponse::Complete)
    }

    /// `prompts/get`, routed by the native table.
    pub(super) async fn get_prompt_asking(
        &self,
        params: GetPromptRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if let Some(agent) = self.parking(&cx) {
            return Box::pin(self.parks.get_prompt(agent, params, cx)).await;
        }
        let downstream = self.downstream(cx);
        // The server's log messages sent before its answer are written before it.
        let get = Box::pin(async {
            let answer = self.hub.get_prompt(params, Some(&downstream)).await;
            self.delivery.settle().await;
            answer
        });
        Ok(GetPromptResponse::Complete(self.unless_gone(get).await??))
    }

    /// `resources/read`, routed by the native table.
    pub(super) async fn read_resource_asking(
        &self,
        params: ReadResourceRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if let Some(agent) = self.parking(&cx) {
            return Box::pin(self.parks.read_resource(agent, params, cx)).await;
        }
        let downstream = self.downstream(cx);
        // The server's log messages sent before its answer are written before it.
        let read = Box::pin(async {
            let answer = self.hub.read_resource(params, Some(&downstream)).await;
            self.delivery.settle().await;
            answer
        });
        Ok(ReadResourceResponse::Complete(
            self.unless_gone(read).await??,
        ))
    }
}
