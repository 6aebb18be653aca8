//! `--stateless`: the `slow_task` tool, which runs only as a task of the Tasks extension of
//! MCP 2026-07-28 (`io.modelcontextprotocol/tasks`, SEP-2663), and the extension's
//! `tasks/get`, `tasks/update` and `tasks/cancel`, served by rmcp's [`TaskManager`].
//!
//! | the client's `tools/call` of `slow_task` | answer |
//! |---|---|
//! | declares the extension in its request `_meta` capabilities | `CreateTaskResult` (`resultType: "task"`, `pollIntervalMs` 50); the task (status message `task <id> is working`, naming its id as servers do) waits `ms` milliseconds, then completes with `text` and a `resource_link` to `demo://static/hello` |
//! | the same with `ask: true` | as above, but the task first goes `input_required`, asking an `elicitation/create` form under the key `name`; `text` then ends with ` <name>` (or ` declined`) |
//! | the same with `fail: true` | as above, but the task ends `failed` with -32603 `task <id> failed` (`data.taskId` its id) |
//! | does not | -32021 Missing Required Client Capability naming the extension, as the extension says a server that cannot answer otherwise must |
//!
//! `tasks/cancel` ends a waiting task `cancelled`.

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ContentBlock,
    CreateTaskResult, ElicitRequest, ElicitRequestParams, ElicitationSchema, InputRequest, Tool,
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
    /// Ask the client for a name first (`input_required`), and end the text with it.
    #[serde(default)]
    ask: bool,
    /// End the task `failed` instead of answering `text`.
    #[serde(default)]
    fail: bool,
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

/// The question of `ask: true`: a form with one required string, `name`.
fn ask_name() -> Result<InputRequest, TaskExit> {
    let schema = ElicitationSchema::builder().required_string("name").build();
    let requested_schema = schema
        .map_err(|e| TaskExit::Error(McpError::internal_error(format!("the form: {e}"), None)))?;
    let form = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: "Your name?".to_owned(),
        requested_schema,
    };
    Ok(InputRequest::Elicitation(ElicitRequest::new(form)))
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
                cx.set_status_message(format!("task {} is working", cx.task_id()));
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(args.ms)) => {}
                    () = cx.cancelled() => return Err(TaskExit::Cancelled),
                }
                if args.fail {
                    let id = cx.task_id();
                    let data = serde_json::json!({ "taskId": id });
                    let failed = McpError::internal_error(format!("task {id} failed"), Some(data));
                    return Err(TaskExit::Error(failed));
                }
                let mut text = args.text;
                if args.ask {
                    let answer = cx.request_input("name", ask_name()?).await?;
                    let name = answer["content"]["name"].as_str().unwrap_or("declined");
                    text = format!("{text} {name}");
                }
                let mut content = vec![ContentBlock::text(text)];
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
