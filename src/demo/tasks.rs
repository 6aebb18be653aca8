//! `--stateless`: the `slow_task` tool, which runs only as a task of the Tasks extension of
//! MCP 2026-07-28 (`io.modelcontextprotocol/tasks`, SEP-2663), and the extension's
//! `tasks/get`, `tasks/update` and `tasks/cancel`, served by rmcp's [`TaskManager`].
//!
//! | the client's `tools/call` of `slow_task` | answer |
//! |---|---|
//! | declares the extension in its request `_meta` capabilities | `CreateTaskResult` (`resultType: "task"`, `pollIntervalMs` 50); the task waits `ms` milliseconds, then completes with `text` and a `resource_link` to `demo://static/hello` |
//! | does not | -32021 Missing Required Client Capability naming the extension, as the extension says a server that cannot answer otherwise must |
//!
//! `tasks/cancel` ends a waiting task `cancelled`.

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ContentBlock,
    CreateTaskResult, Tool,
};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use rmcp::{ErrorData as McpError, RoleServer};
use schemars::JsonSchema;
use serde::Deserialize;

use super::{resources, tool_args};

/// The tool's name.
pub const TOOL: &str = "slow_task";

/// Arguments of `slow_task`.
#[derive(Debug, Deserialize, JsonSchema)]
struct SlowTaskArgs {
    /// How long the task works before it completes, in milliseconds.
    ms: u64,
    /// The text of the result.
    text: String,
}

/// The demo server's tasks (one store per process; rmcp's manager is shared by its clones).
#[derive(Clone, Default)]
pub struct DemoTasks(TaskManager);

impl std::fmt::Debug for DemoTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DemoTasks")
    }
}

/// `slow_task` as `tools/list` shows it.
pub fn tool() -> Tool {
    Tool::new(
        TOOL,
        "Work for `ms` milliseconds as a task (Tasks extension), then answer `text`",
        rmcp::handler::server::common::schema_for_type::<SlowTaskArgs>(),
    )
}

impl DemoTasks {
    /// A `tools/call` of `slow_task` (module doc).
    ///
    /// # Errors
    /// -32021 when the request does not declare the extension; -32602 for bad arguments.
    pub fn call(
        &self,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if !context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks())
        {
            return Err(McpError::missing_required_client_capability(
                ClientCapabilities::builder().enable_tasks().build(),
            ));
        }
        let args: SlowTaskArgs = tool_args::parse(request.arguments)?;
        let options = TaskOptions::new()
            .with_poll_interval_ms(50)
            .with_status_message("working");
        let task = self.0.spawn(options, move |cx| {
            Box::pin(async move {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(args.ms)) => {}
                    () = cx.cancelled() => return Err(TaskExit::Cancelled),
                }
                let mut content = vec![ContentBlock::text(args.text)];
                if let Some(hello) = resources::list()
                    .into_iter()
                    .find(|r| r.uri == resources::HELLO_URI)
                {
                    content.push(ContentBlock::resource_link(hello));
                }
                Ok(CallToolResult::success(content))
            })
        });
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    /// `tasks/get`.
    ///
    /// # Errors
    /// -32602 for an unknown task.
    pub fn get(&self, id: &str) -> Result<rmcp::model::GetTaskResult, McpError> {
        self.0.get_task(id).map(rmcp::model::GetTaskResult::new)
    }

    /// `tasks/update`: `slow_task` asks nothing, so every answer is ignored.
    ///
    /// # Errors
    /// -32602 for an unknown task.
    pub fn update(&self, id: &str, responses: rmcp::model::InputResponses) -> Result<(), McpError> {
        self.0.update_task(id, responses)
    }

    /// `tasks/cancel`.
    ///
    /// # Errors
    /// -32602 for an unknown task.
    pub fn cancel(&self, id: &str) -> Result<(), McpError> {
        self.0.cancel_task(id)
    }
}
