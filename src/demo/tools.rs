//! The demo server's tools: the catalog for tools/list and the handlers for tools/call.
//!
//! Tools are listed and dispatched by hand rather than through `#[tool_router]`, because the
//! catalog is dynamic (`extra` comes and goes, `gen_*` is generated), one name (`odd name.v2`)
//! is not a Rust identifier, and tools/list is paginated.
//!
//! | group | when | tools |
//! |---|---|---|
//! | default | always | `echo`, `add`, `sleep`, `image` |
//! | test | `--test-tools` | `fail`, `protocol_error`, `crash`, `garbage`, `big`, `odd name.v2`, `get_env`, `pid`, `append`, `work`, `read_slowly`, `argv`, `confirm` (asks by `InputRequiredResult`, so only with `--stateless`), `touch` (only with `--stateless`), `toggle_extra` (+ `extra` while toggled on) |
//! | generated | `--extra-tools N` | `gen_0` … `gen_{N-1}` |

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use base64::Engine as _;
use rmcp::handler::server::common::schema_for_type;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode, JsonObject,
    ProgressNotificationParam, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};

use super::output::RawLines;
use super::png;
use super::tool_args::{
    AddArgs, AppendArgs, BigArgs, CrashArgs, EchoArgs, FailArgs, GetEnvArgs, ImageArgs,
    ProtocolErrorArgs, ReadSlowlyArgs, SleepArgs, TouchArgs, empty_schema, generated_schema, parse,
    sum_schema,
};

/// Name of the tool that `toggle_extra` adds and removes.
pub const EXTRA_TOOL: &str = "extra";
/// The test tool whose name is not a valid identifier (space and dot).
pub const ODD_TOOL: &str = "odd name.v2";
/// The line `garbage` writes to stdout before its reply.
pub const GARBAGE_LINE: &str = "this line is not json-rpc";

/// Interval between notifications/progress sent by `sleep`.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);
/// Longest `sleep` accepted, so a typo cannot park a request for days.
const MAX_SLEEP_SECONDS: f64 = 3600.0;
/// Largest `image` side, to keep the uncompressed PNG small.
const MAX_IMAGE_SIDE: u32 = 1024;
/// Largest `big` reply.
const MAX_BIG_BYTES: u64 = 256 * 1024 * 1024;

/// Tool catalog and per-session tool state.
#[derive(Debug)]
pub struct Tools {
    /// Every tool except `extra`, built once: a 2000-tool catalog is listed many times.
    catalog: Vec<Tool>,
    extra: Tool,
    test_tools: bool,
    extra_tools: usize,
    extra_enabled: AtomicBool,
    raw_lines: RawLines,
    /// Counts `sleep` calls stopped by notifications/cancelled; read by tests.
    pub(super) cancelled_sleeps: AtomicUsize,
    /// `--stateless`: the `subscriptions/listen` streams changes are told on (`listen.rs`).
    listeners: Option<super::listen::Listeners>,
}

impl Tools {
    /// Builds the catalog for the given switches; `raw_lines` is where `garbage` writes.
    pub fn new(test_tools: bool, extra_tools: usize, raw_lines: RawLines) -> Self {
        let empty = Arc::new(empty_schema());
        // The default tools touch nothing outside the server, and say so: agents such as Codex
        // ask the person before a tool that declares no hints, which a headless run cannot do.
        let mut catalog = vec![
            Tool::new(
                "echo",
                "Return the message unchanged",
                schema_for_type::<EchoArgs>(),
            )
            .with_annotations(harmless()),
            Tool::new("add", "Add two numbers", schema_for_type::<AddArgs>())
                .with_raw_output_schema(Arc::new(sum_schema()))
                .with_annotations(harmless()),
            Tool::new(
                "sleep",
                "Sleep, reporting progress at the start, every 0.25 s and at the end; stops when cancelled",
                schema_for_type::<SleepArgs>(),
            )
            .with_annotations(harmless()),
            Tool::new(
                "image",
                "Return a PNG gradient",
                schema_for_type::<ImageArgs>(),
            )
            .with_annotations(harmless()),
        ];
        if test_tools {
            catalog.extend([
                Tool::new(
                    "fail",
                    "Return isError with the message",
                    schema_for_type::<FailArgs>(),
                ),
                Tool::new(
                    "protocol_error",
                    "Answer with a JSON-RPC error",
                    schema_for_type::<ProtocolErrorArgs>(),
                ),
                Tool::new(
                    "crash",
                    "Exit the process without replying",
                    schema_for_type::<CrashArgs>(),
                ),
                Tool::new(
                    "garbage",
                    "Write a non-JSON line to stdout, then reply",
                    empty.clone(),
                ),
                Tool::new(
                    "big",
                    "Return a text of exactly `bytes` bytes",
                    schema_for_type::<BigArgs>(),
                ),
                Tool::new(
                    ODD_TOOL,
                    "A tool whose name has a space and a dot",
                    empty.clone(),
                ),
                Tool::new(
                    "get_env",
                    "Return an environment variable",
                    schema_for_type::<GetEnvArgs>(),
                ),
                Tool::new("pid", "Return the server's process id", empty.clone()),
                Tool::new(
                    "append",
                    "Append a line to a file, then wait `seconds` before answering (a side effect that must not run twice)",
                    schema_for_type::<AppendArgs>(),
                ),
                Tool::new(
                    "work",
                    "Sleep like `sleep`, but declare no hints, as a tool with side effects does (a call that must not run twice)",
                    schema_for_type::<SleepArgs>(),
                ),
                Tool::new(
                    "read_slowly",
                    "Wait `seconds`, then answer; declares readOnlyHint",
                    schema_for_type::<ReadSlowlyArgs>(),
                )
                .with_annotations(ToolAnnotations::new().read_only(true)),
                Tool::new(
                    "argv",
                    "Return the server's command-line arguments (after the program) as a JSON array",
                    empty.clone(),
                ),
                Tool::new(
                    "confirm",
                    "Ask the client to confirm (an InputRequiredResult, MCP 2026-07-28) and say what it answered",
                    empty.clone(),
                ),
                Tool::new(
                    "toggle_extra",
                    "Add or remove the `extra` tool and send notifications/tools/list_changed",
                    empty.clone(),
                ),
            ]);
        }
        let generated = Arc::new(generated_schema());
        catalog.extend((0..extra_tools).map(|i| {
            Tool::new(
                format!("gen_{i}"),
                format!("Generated tool number {i}; returns \"gen_{i} ok\""),
                generated.clone(),
            )
        }));
        Self {
            catalog,
            extra: Tool::new(EXTRA_TOOL, "Present only while toggled on", empty),
            test_tools,
            extra_tools,
            extra_enabled: AtomicBool::new(false),
            raw_lines,
            cancelled_sleeps: AtomicUsize::new(0),
            listeners: None,
        }
    }

    /// These tools for a `--stateless` server: changes are told on `listeners`' streams, and
    /// with the test tools there is `touch` (`notifications/resources/updated` of its `uri`).
    #[must_use]
    pub fn with_listeners(mut self, listeners: super::listen::Listeners) -> Self {
        if self.test_tools {
            self.catalog.push(Tool::new(
                "touch",
                "Tell the subscriptions/listen streams subscribed to `uri` that it was updated",
                schema_for_type::<TouchArgs>(),
            ));
        }
        self.listeners = Some(listeners);
        self
    }

    /// The current tool list (tools/list), `extra` last while it is toggled on.
    pub fn list(&self) -> Vec<Tool> {
        let mut tools = self.catalog.clone();
        if self.extra_enabled.load(Ordering::SeqCst) {
            tools.push(self.extra.clone());
        }
        tools
    }

    /// Handles tools/call.
    ///
    /// Tool failures are `isError` results; only `protocol_error`, bad arguments and unknown
    /// names are JSON-RPC errors. `toggle_extra` emits notifications/tools/list_changed and
    /// `sleep` emits notifications/progress when the request carries a progressToken: at the
    /// start, every 0.25 s, and once more (progress = total) right before its result.
    ///
    /// # Errors
    ///
    /// `-32602` for an unknown tool or arguments that do not match its schema; the requested
    /// code for `protocol_error`.
    pub async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name: &str = &request.name;
        if self.test_tools && name == "confirm" {
            return Ok(super::confirm::call(
                request.input_responses.as_ref(),
                request.request_state.as_deref(),
            ));
        }
        let args = request.arguments;
        let result = match name {
            "echo" => text(parse::<EchoArgs>(args)?.message),
            "add" => add(parse(args)?),
            "sleep" => self.sleep(parse(args)?, &context).await,
            "image" => image(parse(args)?),
            _ if self.test_tools => self.call_test_tool(name, args, &context).await?,
            _ => self.call_generated(name)?,
        };
        Ok(CallToolResponse::Complete(result))
    }

    async fn call_test_tool(
        &self,
        name: &str,
        args: Option<JsonObject>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        Ok(match name {
            "fail" => error(parse::<FailArgs>(args)?.message),
            "protocol_error" => {
                let ProtocolErrorArgs { code, message } = parse(args)?;
                return Err(McpError::new(ErrorCode(code), message, None));
            }
            "crash" => {
                let CrashArgs { exit_code } = parse(args)?;
                eprintln!("demo-server: crashing with exit code {exit_code} as requested");
                std::process::exit(exit_code);
            }
            "garbage" => match self.raw_lines.write_line(GARBAGE_LINE).await {
                Ok(()) => text("ok after garbage"),
                Err(e) => error(format!("could not write the garbage line: {e}")),
            },
            "big" => big(parse(args)?),
            ODD_TOOL => text("odd ok"),
            "get_env" => get_env(parse(args)?),
            "pid" => text(std::process::id().to_string()),
            "append" => append(parse(args)?).await,
            "work" => self.sleep(parse(args)?, context).await,
            "read_slowly" => {
                let ReadSlowlyArgs { seconds } = parse(args)?;
                tokio::time::sleep(Duration::from_secs_f64(
                    seconds.clamp(0.0, MAX_SLEEP_SECONDS),
                ))
                .await;
                text(format!("read after {seconds} s"))
            }
            "argv" => argv(),
            "toggle_extra" => self.toggle_extra(context).await,
            "touch" if self.listeners.is_some() => {
                let TouchArgs { uri } = parse(args)?;
                let heard = match &self.listeners {
                    Some(listeners) => listeners.updated(&uri).await,
                    None => 0,
                };
                text(format!("{uri} updated on {heard} stream(s)"))
            }
            EXTRA_TOOL if self.extra_enabled.load(Ordering::SeqCst) => text("extra ok"),
            _ => self.call_generated(name)?,
        })
    }

    fn call_generated(&self, name: &str) -> Result<CallToolResult, McpError> {
        let index = name
            .strip_prefix("gen_")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|i| *i < self.extra_tools && name == format!("gen_{i}"));
        match index {
            Some(_) => Ok(text(format!("{name} ok"))),
            None => Err(McpError::invalid_params(
                format!("unknown tool {name:?}"),
                None,
            )),
        }
    }

    async fn sleep(&self, args: SleepArgs, context: &RequestContext<RoleServer>) -> CallToolResult {
        let seconds = args.seconds;
        if !(0.0..=MAX_SLEEP_SECONDS).contains(&seconds) {
            return error(format!("seconds must be between 0 and {MAX_SLEEP_SECONDS}"));
        }
        let start = tokio::time::Instant::now();
        let deadline = start + Duration::from_secs_f64(seconds);
        let token = context.meta.get_progress_token();
        let report = |progress: f64| {
            let token = token.clone();
            async move {
                let Some(token) = token else { return };
                let note = ProgressNotificationParam::new(token, progress)
                    .with_total(seconds)
                    .with_message("sleeping");
                if let Err(e) = context.peer.notify_progress(note).await {
                    tracing::debug!(error = %e, "could not send progress");
                }
            }
        };
        // A first and a last notification whatever the timing, so a client always sees some.
        report(0.0).await;
        let mut ticks = tokio::time::interval_at(start + PROGRESS_EVERY, PROGRESS_EVERY);
        loop {
            tokio::select! {
                () = context.ct.cancelled() => {
                    self.cancelled_sleeps.fetch_add(1, Ordering::SeqCst);
                    tracing::info!(seconds, "sleep cancelled by the client");
                    return error("sleep cancelled");
                }
                () = tokio::time::sleep_until(deadline) => break,
                _ = ticks.tick(), if token.is_some() => {
                    // Progress must increase: a late tick never repeats the final value.
                    let now = start.elapsed().as_secs_f64();
                    if now < seconds {
                        report(now).await;
                    }
                }
            }
        }
        if seconds > 0.0 {
            report(seconds).await;
        }
        text(format!("slept {seconds} s"))
    }

    async fn toggle_extra(&self, context: &RequestContext<RoleServer>) -> CallToolResult {
        let was_enabled = self.extra_enabled.fetch_xor(true, Ordering::SeqCst);
        if let Some(listeners) = &self.listeners {
            listeners.tools_changed().await;
        } else if let Err(e) = context.peer.notify_tool_list_changed().await {
            tracing::warn!(error = %e, "could not send notifications/tools/list_changed");
        }
        text(if was_enabled {
            "extra removed"
        } else {
            "extra added"
        })
    }
}

/// The hints of a tool that only computes its answer: read-only, idempotent, closed world.
fn harmless() -> ToolAnnotations {
    ToolAnnotations::new()
        .read_only(true)
        .destructive(false)
        .idempotent(true)
        .open_world(false)
}

fn text(s: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(s)])
}

fn error(s: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(s)])
}

fn add(AddArgs { a, b }: AddArgs) -> CallToolResult {
    let sum = a + b;
    let mut result = text(sum.to_string());
    result.structured_content = Some(serde_json::json!({ "sum": sum }));
    result
}

fn image(ImageArgs { width, height }: ImageArgs) -> CallToolResult {
    let valid = 1..=MAX_IMAGE_SIDE;
    if !valid.contains(&width) || !valid.contains(&height) {
        return error(format!(
            "width and height must be between 1 and {MAX_IMAGE_SIDE}"
        ));
    }
    let bytes = png::gradient_rgba(width, height);
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    CallToolResult::success(vec![
        ContentBlock::image(data, "image/png"),
        ContentBlock::text(format!(
            "PNG image, {width}x{height} pixels, RGBA gradient, {} bytes",
            bytes.len()
        )),
    ])
}

fn big(BigArgs { bytes }: BigArgs) -> CallToolResult {
    if bytes > MAX_BIG_BYTES {
        return error(format!("bytes must be at most {MAX_BIG_BYTES}"));
    }
    // bytes <= MAX_BIG_BYTES, which fits in usize on every supported target.
    let len = usize::try_from(bytes).unwrap_or(0);
    let body: String = (0..len)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    text(body)
}

/// The process's arguments after the program, exactly as the OS split them (a launch-quoting
/// test compares them byte for byte); an argument that is not Unicode is shown lossily.
async fn append(
    AppendArgs {
        path,
        line,
        seconds,
    }: AppendArgs,
) -> CallToolResult {
    use tokio::io::AsyncWriteExt as _;
    let written = async {
        let mut file = tokio::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .await?;
        file.write_all(format!("{line}\n").as_bytes()).await?;
        file.sync_all().await
    };
    if let Err(e) = written.await {
        return error(format!("cannot append to {path}: {e}"));
    }
    tokio::time::sleep(Duration::from_secs_f64(
        seconds.clamp(0.0, MAX_SLEEP_SECONDS),
    ))
    .await;
    text(format!("appended to {path}"))
}

fn argv() -> CallToolResult {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    text(serde_json::Value::from(args).to_string())
}

fn get_env(GetEnvArgs { name }: GetEnvArgs) -> CallToolResult {
    match std::env::var(&name) {
        Ok(value) => text(value),
        Err(std::env::VarError::NotPresent) => {
            error(format!("environment variable {name} is not set"))
        }
        Err(std::env::VarError::NotUnicode(_)) => {
            error(format!("environment variable {name} is not valid unicode"))
        }
    }
}
