//! The [`ServerHandler`] that ties tools, resources and prompts together.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse,
    Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use super::listen::Listeners;
use super::output::RawLines;
use super::page::paginate;
use super::tools::Tools;
use super::{DemoOptions, asking, prompts, resources};

/// Server name reported in `initialize` (serverInfo.name).
pub const SERVER_NAME: &str = "mcp-companion-demo";

/// The demo MCP server for one session.
#[derive(Clone, Debug)]
pub struct DemoServer {
    page_size: Option<usize>,
    pub(super) tools: Arc<Tools>,
    /// `--call-log`: where each `tools/call` is recorded as it arrives (`<tool>`), and again
    /// when it ends cancelled by the client (`<tool> cancelled`).
    call_log: Option<Arc<std::path::PathBuf>>,
    /// `--stateless`: 2026-07-28 only.
    stateless: bool,
    /// `--asking`: also the prompt and resource that ask the client (`asking.rs`).
    asking: bool,
    /// `--stateless`: the open `subscriptions/listen` streams (`listen.rs`).
    listeners: Listeners,
    /// `--stateless`: the tasks `slow_task` started (`tasks.rs`).
    tasks: super::tasks::DemoTasks,
    /// `--tool-overrides`: by tool name, its listed name, description and annotations.
    overrides: Arc<serde_json::Map<String, serde_json::Value>>,
    /// `--live-overrides`: the overrides file, read again at every listing.
    live_overrides: Option<Arc<std::path::PathBuf>>,
}

impl DemoServer {
    /// Builds the server for `opts`; `raw_lines` is the output the `garbage` tool writes to.
    pub fn new(opts: &DemoOptions, raw_lines: RawLines) -> Self {
        let listeners = Listeners::default();
        Self {
            page_size: opts.page_size,
            tools: Arc::new({
                let tools = Tools::new(opts.test_tools, opts.extra_tools, raw_lines);
                if opts.stateless {
                    tools.with_listeners(listeners.clone())
                } else {
                    tools
                }
            }),
            listeners,
            tasks: super::tasks::DemoTasks::default(),
            call_log: opts.call_log.clone().map(Arc::new),
            stateless: opts.stateless,
            asking: opts.asking,
            overrides: Arc::new(read_overrides(opts.tool_overrides.as_deref())),
            live_overrides: opts
                .tool_overrides
                .clone()
                .filter(|_| opts.live_overrides)
                .map(Arc::new),
        }
    }

    /// The overrides in effect: as read at start, or as the file says now (`--live-overrides`).
    fn overrides(&self) -> Arc<serde_json::Map<String, serde_json::Value>> {
        match &self.live_overrides {
            Some(path) => Arc::new(read_overrides(Some(path))),
            None => self.overrides.clone(),
        }
    }

    /// The tool list with `--tool-overrides` applied.
    fn listed_tools(&self) -> Vec<rmcp::model::Tool> {
        let mut tools = self.tools.list();
        if self.stateless {
            tools.push(super::tasks::tool());
        }
        let overrides = self.overrides();
        for tool in &mut tools {
            let Some(o) = overrides.get(tool.name.as_ref()) else {
                continue;
            };
            if let Some(d) = o.get("description").and_then(|d| d.as_str()) {
                tool.description = Some(d.to_owned().into());
            }
            if let Some(n) = o.get("name").and_then(|n| n.as_str()) {
                tool.name = n.to_owned().into();
            }
            if let Some(a) = o.get("annotations") {
                tool.annotations = serde_json::from_value(a.clone()).ok();
            }
        }
        tools
    }

    /// The prompt list with `--tool-overrides` applied (keys `prompt:<name>`, description only).
    fn listed_prompts(&self) -> Vec<rmcp::model::Prompt> {
        let mut list = prompts::list();
        if self.asking {
            list.push(asking::prompt());
        }
        for prompt in &mut list {
            if let Some(d) = self
                .overrides()
                .get(&format!("prompt:{}", prompt.name))
                .and_then(|o| o.get("description"))
                .and_then(|d| d.as_str())
            {
                prompt.description = Some(d.to_owned());
            }
        }
        list
    }

    /// The tool a call by `name` runs: the original of a renamed tool, else `name`.
    fn original_name(&self, name: &str) -> Option<String> {
        self.overrides()
            .iter()
            .find(|(_, o)| o.get("name").and_then(|n| n.as_str()) == Some(name))
            .map(|(original, _)| original.clone())
    }
}

/// The overrides file at `path` (see [`super::DemoOptions::tool_overrides`]); empty when
/// there is none or it cannot be read.
fn read_overrides(path: Option<&std::path::Path>) -> serde_json::Map<String, serde_json::Value> {
    path.and_then(|p| std::fs::read(p).ok())
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

impl ServerHandler for DemoServer {
    /// The `initialize` era (a 2025-era server, which answers `server/discover` with -32022),
    /// or with `--stateless` 2026-07-28 alone (which refuses `initialize`).
    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        if self.stateless {
            std::borrow::Cow::Owned(vec![ProtocolVersion::V_2026_07_28])
        } else {
            std::borrow::Cow::Borrowed(ProtocolVersion::known_up_to(
                &ProtocolVersion::LATEST_WITH_INITIALIZE,
            ))
        }
    }

    /// With `--stateless`: every stream is accepted as asked (`listen.rs`); otherwise none
    /// (an `initialize`-era server has no streams).
    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        self.stateless.then(|| Listeners::accepted(requested))
    }

    async fn listen(
        &self,
        subscription: rmcp::service::SubscriptionContext,
    ) -> Result<(), McpError> {
        self.listeners.listen(subscription).await;
        Ok(())
    }

    fn get_info(&self) -> ServerConfig {
        #[expect(
            deprecated,
            reason = "the demo server advertises logging to exercise clients"
        )]
        let mut capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_prompts()
            .enable_resources()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        if self.stateless
            && let Some(resources) = &mut capabilities.resources
        {
            // Updates come on `subscriptions/listen` streams (`listen.rs`).
            resources.subscribe = Some(true);
        }
        if self.stateless {
            // `slow_task` runs as a task of the Tasks extension (`tasks.rs`).
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(
                    rmcp::model::TASKS_EXTENSION_ID.to_owned(),
                    rmcp::model::JsonObject::new(),
                );
        }
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
            .with_instructions("Demo and test server built into MCP Companion.")
    }

    /// logging/setLevel: accepted and ignored; the demo server sends no log notifications.
    #[expect(
        deprecated,
        reason = "logging is advertised, so logging/setLevel must succeed"
    )]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        tracing::debug!(level = ?request.level, "client set the log level");
        Ok(())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let page = paginate(&self.listed_tools(), request.as_ref(), self.page_size)?;
        let mut result = ListToolsResult::with_all_items(page.items);
        result.next_cursor = page.next_cursor;
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let mut request = request;
        if let Some(original) = self.original_name(&request.name) {
            request.name = original.into();
        }
        if self.stateless && request.name == super::tasks::TOOL {
            return self.tasks.call(request, &context);
        }
        let Some(path) = &self.call_log else {
            return self.tools.call(request, context).await;
        };
        let name = request.name.to_string();
        record_call(path, &name);
        let cancelled = context.ct.clone();
        let result = self.tools.call(request, context).await;
        if cancelled.is_cancelled() {
            record_call(path, &format!("{name} cancelled"));
        }
        result
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, McpError> {
        self.tasks.get(&request.task_id)
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks.update(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks.cancel(&request.task_id)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let mut list = resources::list();
        if self.asking {
            list.push(asking::resource());
        }
        let page = paginate(&list, request.as_ref(), self.page_size)?;
        let mut result = ListResourcesResult::with_all_items(page.items);
        result.next_cursor = page.next_cursor;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let page = paginate(&resources::templates(), request.as_ref(), self.page_size)?;
        let mut result = ListResourceTemplatesResult::with_all_items(page.items);
        result.next_cursor = page.next_cursor;
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if self.asking && request.uri == asking::URI {
            return asking::read(request, self.stateless, &context).await;
        }
        resources::read(&request.uri).map(ReadResourceResponse::Complete)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let page = paginate(&self.listed_prompts(), request.as_ref(), self.page_size)?;
        let mut result = ListPromptsResult::with_all_items(page.items);
        result.next_cursor = page.next_cursor;
        Ok(result)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if self.asking && request.name == asking::PROMPT {
            return asking::get_prompt(request, self.stateless, &context).await;
        }
        prompts::get(&request).map(GetPromptResponse::Complete)
    }
}

/// Appends `name` and a newline to `path` (one `write` of a whole line, so concurrent calls
/// never interleave); a failure is reported on stderr.
fn record_call(path: &std::path::Path, name: &str) {
    use std::io::Write as _;
    let line = format!("{name}\n");
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        eprintln!(
            "demo-server: could not record the call in {}: {e}",
            path.display()
        );
    }
}
