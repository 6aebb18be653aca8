//! The aggregated MCP server agents talk to (DESIGN §10): every connection on the local socket
//! is its own MCP session over newline-delimited JSON-RPC.
//!
//! | method | answer |
//! |---|---|
//! | `initialize` | negotiated down to the newest version with an `initialize` handshake (2025-11-25) |
//! | `server/discover` | the versions served (the `initialize` era and 2026-07-28), the capabilities and server info; a request naming another version gets -32022 listing them ([`era`]) |
//! | `subscriptions/listen` (2026-07-28) | acknowledged for `toolsListChanged`; that stream then carries `notifications/tools/list_changed` |
//! | `ping`, `logging/setLevel` | empty result |
//! | `tools/list` | the merged catalog, [`PAGE_SIZE`] tools per page, `nextCursor` as an offset; a session's first one waits (at most `firstListTimeout`) until every server has settled ([`Hub::wait_settled`]) |
//! | `tools/call` | routed by wrapped name; always exactly one result (`isError` on failure); plain calls to stdio servers are forwarded by the fast path ([`fast`]) |
//! | `notifications/cancelled` | cancels the call and is forwarded upstream |
//! | `notifications/roots/list_changed` | forwarded to every running server |
//! | anything else | -32601, with a message that says what this server does instead (resources and prompts are served as tools) and `data.method` |
//! | a line that is not JSON-RPC, or a request whose `params` do not fit | -32700 / -32600 / -32602 ([`LineTransport`](line::LineTransport)) |
//!
//! Progress: a `tools/call` with `_meta.progressToken` gets the upstream server's
//! `notifications/progress`, re-addressed to the agent's token. When the merged catalog changes,
//! every session gets `notifications/tools/list_changed`.
//!
//! Each connection runs under the bounds of [`limits`] ([`Bounded`](bounded::Bounded)): a session that
//! has not finished its handshake within [`INITIALIZE_TIMEOUT`](limits::INITIALIZE_TIMEOUT) is closed, and when its agent
//! goes away every call it still has running is dropped, which cancels it upstream.
//!
//! Server requests: while an agent's `tools/call` is in flight, the upstream server's
//! `elicitation/create`, `sampling/createMessage` and `roots/list` are sent to that agent on
//! this session when it declared the capability ([`crate::upstream::ask`]).
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | [`Endpoint`]: the MCP server handler of one agent session |
//! | [`era`] | which protocol versions are served and what each era gets; `subscriptions/listen` |
//! | `session.rs` | [`serve`]: the accept loop's agents, each one session under its bounds ([`serve_session_with`]) |
//! | [`fast`] | the forwarding fast path for `tools/call` and cached `tools/list` pages, beside the rmcp session |
//! | [`line`](mod@line) | the newline-JSON wire of an agent connection, answering malformed lines |
//! | [`limits`] | what one agent connection may hold: in-flight requests, queued bytes, connections, deadlines |
//! | [`bounded`] | the agent connection's transport under those limits: backpressure, noticing a gone agent |
//!
//! The sockets, pipes and the accept loop underneath are [`crate::ipc`]'s; the call rules
//! (deadline, retry, error texts) are [`crate::hub::forward`]'s.

pub mod bounded;
pub mod era;
pub mod fast;
pub mod limits;
pub mod line;
mod session;

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use tokio_util::sync::CancellationToken;

use crate::hub::Hub;
use crate::upstream::call::Downstream;

pub use crate::catalog::PAGE_SIZE;
pub use session::{framed, serve, serve_session, serve_session_with};

/// The MCP server handler of one agent session.
#[derive(Clone, Debug)]
pub struct Endpoint {
    hub: Hub,
    shutdown: CancellationToken,
    /// How long the session's first `tools/list` waits for the servers to settle.
    first_list_wait: Duration,
    /// Done once the first `tools/list` has waited.
    first_list: Arc<tokio::sync::OnceCell<()>>,
    /// Fires when the agent of this session has gone; its calls are then dropped.
    agent_gone: CancellationToken,
}

impl Endpoint {
    /// A handler serving `hub`'s merged catalog.
    pub fn new(hub: Hub) -> Self {
        Self::with_shutdown(hub, CancellationToken::new(), Duration::ZERO)
    }

    /// Like [`Endpoint::new`]; calls cut short by `shutdown` say the companion is shutting
    /// down rather than that the agent cancelled them, and the first `tools/list` waits up to
    /// `first_list_wait` for every server to settle.
    pub fn with_shutdown(hub: Hub, shutdown: CancellationToken, first_list_wait: Duration) -> Self {
        Endpoint {
            hub,
            shutdown,
            first_list_wait,
            first_list: Arc::default(),
            agent_gone: CancellationToken::new(),
        }
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
}

/// A -32601 answer that says what happened: `method` is not served here, and what to use.
fn not_supported(method: &str) -> McpError {
    let instead = if method.starts_with("resources/") || method.starts_with("prompts/") {
        "every server's resources and prompts are served as tools named mcp_<server>_<name>: use tools/list and tools/call"
    } else {
        "it answers initialize, ping, tools/list and tools/call"
    };
    McpError::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!("method \"{method}\" is not supported by MCP Companion; {instead}"),
        Some(serde_json::json!({ "method": method })),
    )
}

impl ServerHandler for Endpoint {
    #[expect(
        deprecated,
        reason = "logging/setLevel is deprecated by SEP-2577; 2025-era clients still send it"
    )]
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_logging()
                .build(),
        )
        .with_server_info(Implementation::new("mcp-companion", env!("CARGO_PKG_VERSION")))
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
        .with_instructions(
            "MCP Companion: every tool, resource and prompt of the user's MCP servers, named mcp_<server>_<name>.",
        )
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(era::supported())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        era::accepted_filter(requested)
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), McpError> {
        era::listen(&self.hub, subscription).await;
        Ok(())
    }

    async fn list_resources(
        &self,
        _params: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, McpError> {
        Err(not_supported("resources/list"))
    }

    async fn list_resource_templates(
        &self,
        _params: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, McpError> {
        Err(not_supported("resources/templates/list"))
    }

    async fn read_resource(
        &self,
        _params: rmcp::model::ReadResourceRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, McpError> {
        Err(not_supported("resources/read"))
    }

    async fn list_prompts(
        &self,
        _params: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, McpError> {
        Err(not_supported("prompts/list"))
    }

    async fn get_prompt(
        &self,
        _params: rmcp::model::GetPromptRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, McpError> {
        Err(not_supported("prompts/get"))
    }

    async fn complete(
        &self,
        _params: rmcp::model::CompleteRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, McpError> {
        Err(not_supported("completion/complete"))
    }

    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        _cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, McpError> {
        Err(not_supported(&request.method))
    }

    /// `logging/setLevel`: accepted; the companion sends no log notifications to agents.
    #[expect(
        deprecated,
        reason = "logging/setLevel is deprecated by SEP-2577; 2025-era clients still send it"
    )]
    async fn set_level(
        &self,
        _params: rmcp::model::SetLevelRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Ok(())
    }

    async fn list_tools(
        &self,
        params: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        self.first_list
            .get_or_init(|| async {
                if !self.hub.wait_settled(self.first_list_wait).await {
                    tracing::info!(
                        "first tools/list answered after {} s with servers still starting",
                        self.first_list_wait.as_secs_f64()
                    );
                }
            })
            .await;
        let catalog = self.hub.catalog();
        let cursor = params.and_then(|p| p.cursor);
        let start = match &cursor {
            None => Some(0),
            Some(cursor) => cursor.parse::<usize>().ok(),
        };
        start.and_then(|start| catalog.page(start)).ok_or_else(|| {
            McpError::invalid_params(
                format!("invalid cursor \"{}\"", cursor.unwrap_or_default()),
                None,
            )
        })
    }

    /// `notifications/roots/list_changed` from the agent: passed on to every running server.
    async fn on_roots_list_changed(&self, _cx: rmcp::service::NotificationContext<RoleServer>) {
        self.hub.roots_changed().await;
    }

    async fn call_tool(
        &self,
        params: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let downstream = Downstream {
            progress_token: cx.meta.get_progress_token(),
            peer: cx.peer,
            cancelled: cx.ct,
            shutdown: self.shutdown.clone(),
        };
        let call = self
            .hub
            .call(&params.name, params.arguments, Some(&downstream));
        tokio::select! {
            biased;
            result = call => Ok(CallToolResponse::Complete(era::complete(result))),
            // Dropping the call cancels it upstream; the answer could not be delivered.
            () = self.agent_gone.cancelled() => Err(McpError::internal_error(
                "the agent connection closed before the call finished",
                None,
            )),
        }
    }
}
