//! The aggregated MCP server agents talk to (DESIGN §10): every connection on the local socket
//! is its own MCP session over newline-delimited JSON-RPC.
//!
//! | method | answer |
//! |---|---|
//! | `initialize` | negotiated down to the newest version with an `initialize` handshake (2025-11-25) |
//! | `server/discover` | -32022 "unsupported protocol version" listing only `initialize`-era versions, so 2026-07-28-era clients fall back to `initialize` |
//! | `ping`, `logging/setLevel` | empty result |
//! | `tools/list` | the merged catalog, [`PAGE_SIZE`] tools per page, `nextCursor` as an offset; a session's first one waits (at most `firstListTimeout`) until every server has settled ([`Hub::wait_settled`]) |
//! | `tools/call` | routed by wrapped name; always exactly one result (`isError` on failure); plain calls to stdio servers are forwarded by the fast path ([`super::fast`]) |
//! | `notifications/cancelled` | cancels the call and is forwarded upstream |
//! | anything else | -32601, with a message that says what this server does instead (resources and prompts are served as tools) and `data.method` |
//! | a line that is not JSON-RPC, or a request whose `params` do not fit | -32700 / -32600 / -32602 ([`LineTransport`]) |
//!
//! Progress: a `tools/call` with `_meta.progressToken` gets the upstream server's
//! `notifications/progress`, re-addressed to the agent's token. When the merged catalog changes,
//! every session gets `notifications/tools/list_changed`.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::ConstString;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, DiscoverRequestMethod, DiscoverResult, Implementation,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, serve_server};
use tokio::io::{AsyncRead, AsyncWrite, ReadHalf, WriteHalf};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::accept::accept_loop;
use super::fast::Relay;
use super::line::LineTransport;
use super::socket::LocalListener;
use crate::hub::{Hub, HubEvent};
use crate::upstream::MAX_MESSAGE_BYTES;
use crate::upstream::call::Downstream;

/// Tools per `tools/list` page. Large enough that typical setups fit one page (many clients
/// never follow `nextCursor`), small enough to bound one message.
pub const PAGE_SIZE: usize = 1000;

/// The MCP server handler of one agent session.
#[derive(Clone, Debug)]
pub struct Endpoint {
    hub: Hub,
    shutdown: CancellationToken,
    /// How long the session's first `tools/list` waits for the servers to settle.
    first_list_wait: Duration,
    /// Done once the first `tools/list` has waited.
    first_list: Arc<tokio::sync::OnceCell<()>>,
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
        }
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
        Cow::Borrowed(ProtocolVersion::known_up_to(
            &ProtocolVersion::LATEST_WITH_INITIALIZE,
        ))
    }

    /// Reached only by a probe without the modern `_meta` envelope (rmcp answers the others
    /// with -32022 from [`Self::supported_protocol_versions`]): -32601.
    async fn discover(&self, _cx: RequestContext<RoleServer>) -> Result<DiscoverResult, McpError> {
        Err(not_supported(DiscoverRequestMethod::VALUE))
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
        let tools = catalog.tools();
        let start = match params.and_then(|p| p.cursor) {
            None => 0,
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|n| *n <= tools.len())
                .ok_or_else(|| {
                    McpError::invalid_params(format!("invalid cursor \"{cursor}\""), None)
                })?,
        };
        let end = (start + PAGE_SIZE).min(tools.len());
        let mut page = ListToolsResult::with_all_items(tools[start..end].to_vec());
        if end < tools.len() {
            page.next_cursor = Some(end.to_string());
        }
        Ok(page)
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
        let result = self
            .hub
            .call(&params.name, params.arguments, Some(&downstream))
            .await;
        Ok(CallToolResponse::Complete(result))
    }
}

/// Accepts agents on `listener` until `shutdown` fires; each connection becomes its own session
/// task on `sessions`. Sessions end when their agent hangs up or at shutdown.
///
/// `first_list_wait` is the config's `firstListTimeout`.
pub async fn serve(
    listener: LocalListener,
    hub: Hub,
    sessions: TaskTracker,
    shutdown: CancellationToken,
    first_list_wait: Duration,
) {
    let stop = shutdown.clone();
    accept_loop(listener, "agent", sessions, shutdown, move |stream, _| {
        serve_session(stream, hub.clone(), stop.clone(), first_list_wait)
    })
    .await;
}

/// The newline-JSON transport of one agent connection, accepting messages up to
/// [`MAX_MESSAGE_BYTES`] (the same limit as for upstream servers); malformed lines get their
/// JSON-RPC error answers ([`LineTransport`]).
pub fn framed<S>(stream: S) -> LineTransport<ReadHalf<S>, WriteHalf<S>>
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let (rd, wr) = tokio::io::split(stream);
    LineTransport::new(rd, wr, MAX_MESSAGE_BYTES)
}

/// Runs one MCP session on `stream`: handshake, requests, and `tools/list_changed` pushes.
pub async fn serve_session<S>(
    stream: S,
    hub: Hub,
    shutdown: CancellationToken,
    first_list_wait: Duration,
) where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let mut events = hub.subscribe();
    let mut transport = framed(stream);
    let mut agent_cell = None;
    if crate::upstream::lane::enabled() {
        let (relay, cell) = Relay::new(hub.clone(), shutdown.clone());
        transport = transport.with_relay(relay);
        agent_cell = Some(cell);
    }
    let running = tokio::select! {
        r = serve_server(Endpoint::with_shutdown(hub, shutdown.clone(), first_list_wait), transport) => match r {
            Ok(running) => running,
            Err(e) => {
                tracing::debug!(error = %e, "agent left before initializing");
                return;
            }
        },
        () = shutdown.cancelled() => return,
    };
    tracing::debug!("agent connected");
    let peer = running.peer().clone();
    if let Some(cell) = agent_cell {
        cell.set(peer.clone());
    }
    let stop = running.cancellation_token();
    let mut done = tokio::spawn(running.waiting());
    loop {
        tokio::select! {
            _ = &mut done => break,
            () = shutdown.cancelled() => {
                stop.cancel();
                let _ = done.await;
                break;
            }
            event = events.recv() => match event {
                Some(HubEvent::ToolsChanged) => {
                    if let Err(e) = peer.notify_tool_list_changed().await {
                        tracing::debug!(error = %e, "could not send tools/list_changed");
                    }
                }
                Some(HubEvent::ServersChanged) => {}
                None => {
                    let _ = (&mut done).await;
                    break;
                }
            },
        }
    }
    tracing::debug!("agent disconnected");
}
