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
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | [`Tools`]: the catalog for each set of switches, and tools/list |
//! | `call.rs` | tools/call: dispatch by name, and the tools that use the session (`sleep`, `toggle_extra`, `touch`) |
//! | `answers.rs` | the tools that answer from their arguments alone, and the result shapes |

mod answers;
mod call;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::handler::server::common::schema_for_type;
use rmcp::model::{Tool, ToolAnnotations};

use super::output::RawLines;
use super::tool_args::{
    AddArgs, AppendArgs, BigArgs, CrashArgs, EchoArgs, FailArgs, GetEnvArgs, ImageArgs,
    ProtocolErrorArgs, ReadSlowlyArgs, SleepArgs, TouchArgs, empty_schema, generated_schema,
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
}

/// The hints of a tool that only computes its answer: read-only, idempotent, closed world.
fn harmless() -> ToolAnnotations {
    ToolAnnotations::new()
        .read_only(true)
        .destructive(false)
        .idempotent(true)
        .open_world(false)
}
