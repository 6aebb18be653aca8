//! The aggregated MCP server agents talk to (DESIGN §10): every connection on the local socket
//! is its own MCP session over newline-delimited JSON-RPC.
//!
//! | method | answer |
//! |---|---|
//! | `initialize` | negotiated down to the newest version with an `initialize` handshake (2025-11-25) |
//! | `server/discover` | the versions served (the `initialize` era and 2026-07-28), the capabilities and server info; a request naming another version gets -32022 listing them ([`era`]) |
//! | `subscriptions/listen` (2026-07-28) | acknowledged for the list changes asked and the resource URIs served; that stream then carries them ([`listen`](mod@listen)) |
//! | `ping` | empty result |
//! | `prompts/list`, `resources/list`, `resources/templates/list` | the catalog's native tables ([`crate::catalog::native`]), paged like tools |
//! | `prompts/get`, `resources/read`, `completion/complete` | routed by the native table to the owning server ([`Hub::get_prompt`], [`Hub::read_resource`], [`Hub::complete`]) |
//! | `resources/subscribe`, `resources/unsubscribe` | per session, sent upstream once per resource (`native.rs`) |
//! | `logging/setLevel` | this session's level for the servers' log messages; the most verbose level goes upstream |
//! | `tools/list` | the merged catalog, [`PAGE_SIZE`] tools per page, `nextCursor` as an offset; a session's first one waits (at most `firstListTimeout`) until every server has settled ([`Hub::wait_settled`]), except for agents [`first_list`] answers at once |
//! | `tools/call` | routed by wrapped name; always exactly one result (`isError` on failure); plain calls to stdio servers are forwarded by the fast path ([`fast`]) |
//! | `notifications/cancelled` | cancels the call and is forwarded upstream |
//! | `notifications/roots/list_changed` | forwarded to every running server |
//! | anything else | -32601, with a message that says what this server answers, and `data.method` |
//! | a line that is not JSON-RPC, or a request whose `params` do not fit | -32700 / -32600 / -32602 ([`LineTransport`](line::LineTransport)) |
//!
//! Progress: a `tools/call` with `_meta.progressToken` gets the upstream server's
//! `notifications/progress`, re-addressed to the agent's token. When the merged catalog changes,
//! every session gets `notifications/tools/list_changed`, and `prompts/list_changed` /
//! `resources/list_changed` when those lists changed. `initialize` waits for the servers to
//! settle (at most `firstListTimeout`), so the declared capabilities cover them (`native.rs`).
//!
//! Each connection runs under the bounds of [`limits`] ([`Bounded`](bounded::Bounded)): a session that
//! has not finished its handshake within [`INITIALIZE_TIMEOUT`](limits::INITIALIZE_TIMEOUT) is closed, and when its agent
//! goes away every call it still has running is dropped, which cancels it upstream.
//!
//! Server requests: while an agent's `tools/call`, `prompts/get` or `resources/read` is in
//! flight, the upstream server's
//! `elicitation/create`, `sampling/createMessage` and `roots/list` are sent to that agent on
//! this session when it declared the capability ([`crate::upstream::ask`]); an agent of the
//! 2026-07-28 era gets them in an `InputRequiredResult` instead, its request parked until it
//! sends it again with the answers ([`park`]).
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | [`Endpoint`]: the MCP server handler of one agent session |
//! | `asking.rs` | `tools/call`, `prompts/get`, `resources/read`: the requests during which a server may ask the agent for input, per era |
//! | `accepted.rs` | one accepted connection: served itself, or the agent stdio a bridge handed over |
//! | [`client_names`] | tool names shortened per session for agents that prefix them (Claude Code) |
//! | [`first_list`] | which agents' first listing waits for the servers still starting (`firstListHold`) |
//! | [`era`] | which protocol versions are served and what each era gets |
//! | [`listen`](mod@listen) | `subscriptions/listen` streams of 2026-07-28 agents: list changes and resource updates |
//! | `session.rs` | [`serve`]: the accept loop's agents, each one session under its bounds ([`serve_session_with`]) |
//! | `profiles.rs` | one socket per profile beside the main one, following the config ([`serve_profiles`]) |
//! | [`park`] | calls of 2026-07-28 agents waiting for their input, and the signed `requestState` that names them |
//! | `native.rs` | the declared capabilities, list pages, and each session's subscriptions, log level and notifications |
//! | [`fast`] | the forwarding fast path for `tools/call` and cached `tools/list` pages, beside the rmcp session |
//! | [`line`](mod@line) | the newline-JSON wire of an agent connection, answering malformed lines |
//! | [`limits`] | what one agent connection may hold: in-flight requests, queued bytes, connections, deadlines |
//! | [`bounded`] | the agent connection's transport under those limits: backpressure, noticing a gone agent |
//!
//! The sockets, pipes and the accept loop underneath are [`crate::ipc`]'s; the call rules
//! (deadline, retry, error texts) are [`crate::hub::forward`]'s.

mod accepted;
mod asking;
pub mod bounded;
pub mod client_names;
pub mod era;
pub mod fast;
pub mod first_list;
pub mod limits;
pub mod line;
pub mod listen;
mod native;
pub mod park;
mod profiles;
mod session;

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use tokio_util::sync::CancellationToken;

use crate::hub::Hub;

pub use crate::catalog::PAGE_SIZE;
use crate::ipc::accept::Handshake;
pub use first_list::FirstListPolicy;
pub use profiles::{ProfileSockets, serve_profiles};
pub use session::{framed, serve, serve_session, serve_session_with};

/// The MCP server handler of one agent session.
#[derive(Clone, Debug)]
pub struct Endpoint {
    hub: Hub,
    shutdown: CancellationToken,
    /// How the session's first listing waits for the servers to settle.
    first_list_policy: FirstListPolicy,
    /// Done once the first `tools/list` has waited.
    first_list: Arc<tokio::sync::OnceCell<()>>,
    /// Fires when the agent of this session has gone; its calls are then dropped.
    agent_gone: CancellationToken,
    /// Marked done when `initialize` arrives: from then on the connection is never closed to
    /// make room for another ([`crate::ipc::accept`]).
    handshake: Handshake,
    /// The session's resource subscriptions and log level (`native.rs`).
    interest: Arc<native::AgentInterest>,
    /// The session's calls waiting for a 2026-07-28 agent's input ([`park`]).
    parks: Arc<park::Parks>,
    /// The tasks this session created, shared with the fast path's relay, which takes the
    /// `initialize` era's Tasks lines ([`crate::hub::Tasks`]).
    tasks: crate::hub::Tasks,
    /// What of the servers' notices was queued for the session and what was written: a call's
    /// answer waits for those its server sent before it ([`crate::upstream::notice`]).
    delivery: Arc<crate::upstream::notice::Delivery>,
}

impl Endpoint {
    /// A handler serving `hub`'s merged catalog.
    pub fn new(hub: Hub) -> Self {
        Self::with_shutdown(hub, CancellationToken::new(), FirstListPolicy::default())
    }

    /// Like [`Endpoint::new`]; calls cut short by `shutdown` say the companion is shutting
    /// down rather than that the agent cancelled them, and the first `tools/list` waits for
    /// every server to settle as `first_list` says for the agent ([`first_list`]).
    pub fn with_shutdown(
        hub: Hub,
        shutdown: CancellationToken,
        first_list: FirstListPolicy,
    ) -> Self {
        Endpoint {
            hub,
            shutdown,
            first_list_policy: first_list,
            first_list: Arc::default(),
            agent_gone: CancellationToken::new(),
            handshake: Handshake::default(),
            interest: Arc::default(),
            parks: Arc::default(),
            tasks: crate::hub::Tasks::default(),
            delivery: Arc::default(),
        }
    }

    /// The session's resource subscriptions and log level, shared with its serving loop.
    pub(crate) fn interest(&self) -> Arc<native::AgentInterest> {
        self.interest.clone()
    }

    /// The session's notice delivery count, shared with its notice forwarder and fast path.
    pub(crate) fn delivery(&self) -> Arc<crate::upstream::notice::Delivery> {
        self.delivery.clone()
    }

    /// Waits (once per session, at most the policy's wait) until every server has settled,
    /// so that what the agent is first told covers them.
    async fn settled(&self) {
        let wait = self.first_list_policy.wait;
        self.first_list
            .get_or_init(|| async {
                if !self.hub.wait_settled(wait).await {
                    tracing::info!(
                        "first tools/list answered after {} s with servers still starting",
                        wait.as_secs_f64()
                    );
                }
            })
            .await;
    }

    /// The session's first-listing latch: set once its first `tools/list` has waited for the
    /// servers to settle (shared with the fast path, which answers later listings).
    pub fn first_list(&self) -> Arc<tokio::sync::OnceCell<()>> {
        self.first_list.clone()
    }

    /// Calls still running when `gone` fires are dropped (which sends `notifications/cancelled`
    /// upstream): their agent has left and nobody would read their answers.
    #[must_use]
    pub fn with_agent_gone(mut self, gone: CancellationToken) -> Self {
        self.agent_gone = gone;
        self
    }

    /// Records this session's tasks in `tasks` (the table its relay uses too).
    #[must_use]
    pub fn with_tasks(mut self, tasks: crate::hub::Tasks) -> Self {
        self.tasks = tasks;
        self
    }

    /// Marks `handshake` done when the agent's `initialize` arrives.
    #[must_use]
    pub fn with_handshake(mut self, handshake: Handshake) -> Self {
        self.handshake = handshake;
        self
    }
}

/// A -32601 answer that says what happened: `method` is not served here, and what is.
fn not_supported(method: &str) -> McpError {
    McpError::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!(
            "method \"{method}\" is not supported by MCP Companion; it answers initialize, ping, tools/*, prompts/*, resources/*, completion/complete and logging/setLevel"
        ),
        Some(serde_json::json!({ "method": method })),
    )
}

impl ServerHandler for Endpoint {
    fn get_info(&self) -> ServerConfig {
        let catalog = self.hub.catalog();
        let mut capabilities = native::capabilities(catalog.native().declared());
        if crate::catalog::execution::any_task_tool(catalog.tools())
            || self.hub.any_modern_task_server()
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
    /// when some served tool takes tasks, and without the `initialize` era's `tasks`.
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
    /// declared cover them (`native.rs`); after at most [`first_list::AT_ONCE_GRACE`] for an
    /// agent [`first_list`] does not hold, whose first `tools/list` is then answered at once.
    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, McpError> {
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
        let answer = self
            .negotiate_initialize(&request)
            .map(era::without_extension_tasks);
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
        _cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, McpError> {
        Err(not_supported(&request.method))
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

/// A call's answer: `result`, or the JSON-RPC error it stands for when the server answered
/// with one the agent must see as an error ([`crate::hub::passed_error`]).
fn passed(result: rmcp::model::CallToolResult) -> Result<rmcp::model::CallToolResult, McpError> {
    match crate::hub::passed_error(&result) {
        Some(error) => Err(error),
        None => Ok(result),
    }
}
