//! [`ServerHandler`] for [`Endpoint`]: each method of the table in [`super`] answered, from
//! the hub's catalog or by routing to the hub.

use std::borrow::Cow;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use super::{Endpoint, client_names, era, limits, listen, native};

/// Why an `initialize` on this connection is refused, when it is: the connection's session
/// has begun (MCP lifecycle: initialization is the first interaction, once per session), with
/// an `initialize` (`initialized` is set) or with 2026-07-28 requests (rmcp set no peer info).
/// The TypeScript SDK's streamable HTTP transport refuses a second one alike (-32600 "Server
/// already initialized"). Marks `initialized` when the `initialize` is taken. An agent that
/// reconnects opens a new connection, which is a new session.
fn refuse_initialize(
    initialized: &std::sync::OnceLock<()>,
    peer: &rmcp::Peer<RoleServer>,
) -> Option<McpError> {
    let message = match peer.peer_info() {
        None => "invalid request: this connection's session began with 2026-07-28 requests, \
                 which have no initialize; open a new connection to initialize"
            .to_owned(),
        Some(_) if initialized.set(()).is_ok() => return None,
        Some(info) => format!(
            "invalid request: this session is already initialized (protocol version {}); \
             open a new connection to start another",
            info.protocol_version
        ),
    };
    Some(McpError::invalid_request(message, None))
}

impl ServerHandler for Endpoint {
    fn get_info(&self) -> ServerConfig {
        let catalog = self.hub.catalog();
        let mut capabilities = native::capabilities(catalog.native().declared());
        // Declared too while this session has a task, whose `tasks/get` is answered
        // whatever became of its server (`hub/tasks/lost.rs`, `hub/tasks/ended.rs`).
        if crate::catalog::execution::any_task_tool(catalog.tools())
            || self.hub.any_modern_task_server()
            || !self.tasks.is_empty()
        {
            // Written out as `tasks` by the line encoder (rmcp has no field for it).
            capabilities.experimental.get_or_insert_default().insert(
                crate::catalog::execution::TASKS_STASH.to_owned(),
                crate::catalog::execution::tasks_capability(),
            );
            // The 2026-07-28 extension; rmcp serves its `tasks/*` only when it is declared.
            // `initialize` answers drop it, `server/discover` answers the stash (`era`).
            capabilities.extensions.get_or_insert_default().insert(
                rmcp::model::TASKS_EXTENSION_ID.to_owned(),
                serde_json::Map::new(),
            );
        }
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                "mcp-companion",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
            .with_instructions(self.hub.instructions())
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(era::supported())
    }

    /// `server/discover`: as rmcp answers it, with the 2026-07-28 Tasks extension declared
    /// when some served tool takes tasks or this session has a task, and without the
    /// `initialize` era's `tasks`.
    async fn discover(
        &self,
        _cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::DiscoverResult, McpError> {
        Ok(rmcp::model::DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            era::without_legacy_tasks(self.get_info()),
        ))
    }

    /// `tasks/get` of a 2026-07-28 agent ([`crate::hub::Tasks`]).
    async fn get_task(
        &self,
        params: rmcp::model::GetTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, McpError> {
        // Who answers the questions of a task that needs input: this agent, as it declared.
        let agent = (
            cx.peer.clone(),
            cx.client_capabilities().unwrap_or_default(),
        );
        Box::pin(
            self.hub
                .get_modern_task(&self.tasks, &params.task_id, agent),
        )
        .await
    }

    /// `tasks/cancel` of a 2026-07-28 agent.
    async fn cancel_task(
        &self,
        params: rmcp::model::CancelTaskParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Box::pin(self.hub.cancel_modern_task(&self.tasks, &params.task_id)).await
    }

    /// `tasks/update` of a 2026-07-28 agent.
    async fn update_task(
        &self,
        params: rmcp::model::UpdateTaskParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let update =
            (self.hub).update_modern_task(&self.tasks, &params.task_id, &params.input_responses);
        Box::pin(update).await
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(listen::accepted_filter(&self.hub, requested))
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), McpError> {
        Box::pin(listen::listen(&self.hub, subscription)).await;
        Ok(())
    }

    /// `initialize`: answered once the servers have settled (at most `firstListTimeout`, and
    /// at most half of [`INITIALIZE_TIMEOUT`](limits::INITIALIZE_TIMEOUT)), so the capabilities
    /// declared cover them (`native.rs`); after at most
    /// [`first_list::AT_ONCE_GRACE`](super::first_list::AT_ONCE_GRACE) for an agent
    /// [`first_list`](super::first_list) does not hold, whose first `tools/list` is then
    /// answered at once. The answer carries only what the negotiated version defines
    /// ([`era::as_negotiated`]).
    ///
    /// Once per connection: a second `initialize` (or one after 2026-07-28 requests) gets
    /// -32600 and changes nothing (`refuse_initialize`).
    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, McpError> {
        if let Some(refusal) = refuse_initialize(&self.initialized, &cx.peer) {
            return Err(refusal);
        }
        // The agent has spoken: its connection is no idle one to close at the cap.
        self.handshake.done();
        // Before anything is read: a main-socket session may get a profile by its name.
        if let Some(profile) = self.hub.choose_for_client(&request.client_info.name) {
            tracing::debug!(profile, client = %request.client_info.name, "agent session's profile");
        }
        if self.first_list_policy.holds(&request.client_info.name) {
            // Half the handshake's own deadline at most: the session must not be closed for it.
            let _ = tokio::time::timeout(limits::INITIALIZE_TIMEOUT / 2, self.settled()).await;
        } else {
            // Answered with what is ready after a moment; the rest follows with list_changed.
            self.hub.wait_settled(self.first_list_policy.grace()).await;
            let _ = self.first_list.set(());
            tracing::debug!(
                agent = ?request.client_info.name,
                "first listing answered at once (firstListHold)"
            );
        }
        cx.peer.set_peer_info(request.clone());
        let answer = self.negotiate_initialize(&request).map(era::as_negotiated);
        if let Ok(result) = &answer {
            self.hub
                .agent_initialized(&request.client_info, result.protocol_version.as_str());
        }
        answer
    }

    async fn list_resources(
        &self,
        params: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, McpError> {
        let catalog = self.hub.catalog();
        let (items, next) =
            native::page(catalog.native().resources(), params.and_then(|p| p.cursor))?;
        let mut result = rmcp::model::ListResourcesResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        params: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, McpError> {
        let catalog = self.hub.catalog();
        let (items, next) =
            native::page(catalog.native().templates(), params.and_then(|p| p.cursor))?;
        let mut result = rmcp::model::ListResourceTemplatesResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    async fn read_resource(
        &self,
        params: rmcp::model::ReadResourceRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, McpError> {
        Box::pin(self.read_resource_asking(params, cx))
            .await
            .map(era::complete_read)
    }

    async fn list_prompts(
        &self,
        params: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, McpError> {
        let catalog = self.hub.catalog();
        let (items, next) =
            native::page(catalog.native().prompts(), params.and_then(|p| p.cursor))?;
        let mut result = rmcp::model::ListPromptsResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    async fn get_prompt(
        &self,
        params: rmcp::model::GetPromptRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, McpError> {
        Box::pin(self.get_prompt_asking(params, cx))
            .await
            .map(era::complete_prompt)
    }

    async fn complete(
        &self,
        params: rmcp::model::CompleteRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, McpError> {
        Box::pin(self.hub.complete(params))
            .await
            .map(era::complete_completion)
    }

    /// `resources/subscribe`: recorded for this session, and sent upstream unless another
    /// agent already subscribed to the same resource.
    async fn subscribe(
        &self,
        params: rmcp::model::SubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if let Some(route) = self.interest.route(&params.uri) {
            return Box::pin(self.hub.refresh_subscription(&route)).await;
        }
        let route = Box::pin(self.hub.subscribe_resource(&params.uri)).await?;
        if !self.interest.subscribed(&params.uri, route.clone()) {
            // Subscribed twice at once: only one counts upstream.
            Box::pin(self.hub.unsubscribe_resource(&route)).await;
        }
        Ok(())
    }

    async fn unsubscribe(
        &self,
        params: rmcp::model::UnsubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if let Some(route) = self.interest.unsubscribed(&params.uri) {
            Box::pin(self.hub.unsubscribe_resource(&route)).await;
        }
        Ok(())
    }

    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, McpError> {
        // A 2026-07-28 session has no `initialize`, so no peer info.
        let modern = cx.peer.peer_info().is_none();
        Err(super::unknown_method::not_supported(
            &request.method,
            modern,
        ))
    }

    /// `logging/setLevel`: this session gets the servers' log messages at `level` and above;
    /// servers that declared `logging` are sent it when it is more verbose than before.
    #[expect(
        deprecated,
        reason = "logging/setLevel is deprecated by SEP-2577; 2025-era clients still send it"
    )]
    async fn set_level(
        &self,
        params: rmcp::model::SetLevelRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.interest.set_level(params.level);
        Box::pin(self.hub.set_level(params.level)).await;
        Ok(())
    }

    /// `tools/list`: a page of the merged catalog, names shortened for an agent that prefixes
    /// them ([`client_names`]).
    async fn list_tools(
        &self,
        params: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        // A 2026-07-28 agent never initializes: its first listing is where the hold applies.
        if cx.peer.peer_info().is_none()
            && !self.first_list.initialized()
            && client_names::client_name(&cx.peer, &cx.meta)
                .is_some_and(|name| !self.first_list_policy.holds(&name))
        {
            self.hub.wait_settled(self.first_list_policy.grace()).await;
            let _ = self.first_list.set(());
        }
        self.settled().await;
        let catalog = self.hub.catalog();
        let cursor = params.and_then(|p| p.cursor);
        let start = match &cursor {
            None => Some(0),
            Some(cursor) => cursor.parse::<usize>().ok(),
        };
        let mut page = start.and_then(|start| catalog.page(start));
        self.hub.agent_named(&cx.meta);
        let budget = client_names::budget_for(&cx.peer, &cx.meta);
        if let Some(page) = &mut page
            && client_names::any_shortened(&catalog, budget)
        {
            for tool in &mut page.tools {
                if let std::borrow::Cow::Owned(short) = client_names::shown(&tool.name, budget) {
                    tool.name = short.into();
                }
            }
        }
        if let Some(page) = &page {
            let agent = || self.hub.agent_of(&cx.peer);
            (self.hub).record_listing(agent, "rmcp", page.tools.len(), cursor.as_deref());
        }
        page.ok_or_else(|| {
            McpError::invalid_params(
                format!("invalid cursor \"{}\"", cursor.unwrap_or_default()),
                None,
            )
        })
    }

    /// `notifications/roots/list_changed` from the agent: passed on to every running server.
    async fn on_roots_list_changed(&self, _cx: rmcp::service::NotificationContext<RoleServer>) {
        Box::pin(self.hub.roots_changed()).await;
    }

    async fn call_tool(
        &self,
        params: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        Box::pin(self.call_tool_asking(params, cx)).await
    }
}
