//! Built-in demo/test MCP server (`mcp-companion demo-server`).
//!
//! A real rmcp server with deterministic tools, resources and prompts, so that the hub can be
//! tested and benchmarked without third-party servers. With `--test-tools` it also misbehaves
//! on request (error results, JSON-RPC errors, crashes, non-JSON output, huge replies).
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | [`DemoOptions`], [`DemoError`], [`run_stdio`], [`serve_on`] |
//! | `server.rs` | the `ServerHandler`: server info, capabilities, list/read/get routing |
//! | `tools/` | the tool catalog and every tool's behaviour |
//! | `confirm.rs` | the `confirm` test tool: a multi round-trip request (MCP 2026-07-28) |
//! | `listen.rs` | `--stateless`: the `subscriptions/listen` streams `toggle_extra` and `touch` tell of changes |
//! | `tasks.rs` | `--stateless`: `slow_task`, which runs only as a task (Tasks extension of 2026-07-28) |
//! | `asking.rs` | `--asking`: a prompt and a resource that ask the client for a name, in the server's era |
//! | `tool_args.rs` | tool argument types and their JSON schemas |
//! | `resources.rs`, `prompts.rs` | static resources, the greeting template, the prompts |
//! | `page.rs` | cursor pagination shared by every `*/list` method |
//! | `output.rs` | line-ordered output, so `garbage` cannot split a JSON-RPC message |
//! | `png.rs` | a tiny RGBA PNG encoder for `image` and the `pixel` resource |
//!
//! Diagnostics go to stderr only: stdout carries the protocol.

mod asking;
mod confirm;
mod listen;
mod output;
mod page;
mod png;
mod prompts;
mod resources;
mod server;
mod tasks;
mod tool_args;
mod tools;

#[cfg(test)]
mod tests;

use std::time::Duration;

use rmcp::ServiceExt as _;
use rmcp::service::ServerInitializeError;
use tokio::io::{AsyncRead, AsyncWrite};

pub use server::SERVER_NAME;

/// How long to wait for queued output to reach stdout after the session ends.
const OUTPUT_DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// Switches of `mcp-companion demo-server`.
#[derive(Clone, Debug, Default)]
pub struct DemoOptions {
    /// Also offer the misbehaving test tools (`--test-tools`).
    pub test_tools: bool,
    /// Wait this long before serving (`--start-delay-ms`), to benchmark concurrent connects.
    pub start_delay: std::time::Duration,
    /// Fail immediately instead of serving (`--fail-start`).
    pub fail_start: bool,
    /// Number of generated tools `gen_0..gen_{N-1}` (`--extra-tools`).
    pub extra_tools: usize,
    /// Items per page of every `*/list` result (`--page-size`); `None` means one page.
    pub page_size: Option<usize>,
    /// Append each `tools/call`'s tool name, one per line, to this file as the call arrives,
    /// and `<tool> cancelled` when it ends cancelled by the client (`--call-log`), so tests can
    /// count what reached the server.
    pub call_log: Option<std::path::PathBuf>,
    /// Speak only MCP 2026-07-28 (`--stateless`); otherwise only the `initialize` era.
    pub stateless: bool,
    /// A JSON file read once at start (`--tool-overrides`): `{"<tool>": {"description": "…",
    /// "name": "<new name>", "annotations": {…}}}` changes what `tools/list` says of a tool (a call by the new name
    /// runs the tool), and `{"prompt:<name>": {"description": "…"}}` a prompt's, so tests can make a server change its tools between runs, as an update
    /// of a package does. A missing or unreadable file changes nothing.
    pub tool_overrides: Option<std::path::PathBuf>,
    /// Read `tool_overrides` again at every listing (`--live-overrides`), so a test can change
    /// a tool mid-session (then send `list_changed` with `toggle_extra`).
    pub live_overrides: bool,
    /// Also offer the `ask_name` prompt and the `demo://asking/name` resource, which ask the
    /// client for input (`--asking`; `asking.rs`).
    pub asking: bool,
}

/// Why the demo server stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// `fail_start` was set; the CLI exits with code 1.
    #[error("demo server failing at start as requested")]
    FailStartRequested,
    /// The client did not complete the MCP initialisation.
    #[error("mcp initialisation with the client failed")]
    Initialize(#[source] Box<ServerInitializeError>),
    /// Writing to the output stream failed.
    #[error("writing demo server output failed")]
    Output(#[source] std::io::Error),
    /// The output task panicked or was cancelled.
    #[error("demo server output task stopped abnormally")]
    OutputTask(#[source] tokio::task::JoinError),
}

/// Serves MCP over stdin/stdout until stdin closes.
///
/// Writes `demo-server: ready (pid N)` to stderr once the start delay is over, then serves.
/// Installs a stderr `tracing` subscriber (filtered by `RUST_LOG`) unless one is already set.
/// Note that a pending stdin read cannot be cancelled, so return only happens on EOF.
///
/// # Errors
///
/// [`DemoError::FailStartRequested`] at once (after writing
/// `demo-server: failing at start as requested` to stderr) when `fail_start` is set; otherwise
/// see [`serve_on`].
pub async fn run_stdio(opts: DemoOptions) -> Result<(), DemoError> {
    init_stderr_tracing();
    if opts.fail_start {
        eprintln!("demo-server: failing at start as requested");
        return Err(DemoError::FailStartRequested);
    }
    if !opts.start_delay.is_zero() {
        tokio::time::sleep(opts.start_delay).await;
    }
    eprintln!("demo-server: ready (pid {})", std::process::id());
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    serve_split(opts, stdin, stdout).await
}

/// Serves MCP on any byte stream until the peer closes it.
///
/// Ignores `fail_start` and `start_delay` (they are process-level behaviour of
/// [`run_stdio`]).
///
/// # Errors
///
/// [`DemoError::Initialize`] when the peer does not complete `initialize`;
/// [`DemoError::Output`] when writing to `transport` fails.
pub async fn serve_on<T>(opts: DemoOptions, transport: T) -> Result<(), DemoError>
where
    T: AsyncRead + AsyncWrite + Send + 'static,
{
    let (read, write) = tokio::io::split(transport);
    serve_split(opts, read, write).await
}

async fn serve_split<R, W>(opts: DemoOptions, read: R, write: W) -> Result<(), DemoError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (writer, raw_lines, output_task) = output::spawn_line_output(write);
    let handler = server::DemoServer::new(&opts, raw_lines);
    let served = async {
        // The same message-size limit as the companion (rmcp's default is 16 MiB).
        let transport = rmcp::transport::async_rw::AsyncRwTransport::new(read, writer)
            .with_max_line_length(crate::upstream::MAX_MESSAGE_BYTES);
        let running = handler
            .serve(transport)
            .await
            .map_err(|e| DemoError::Initialize(Box::new(e)))?;
        let reason = running.waiting().await;
        tracing::info!(?reason, "demo server session ended");
        Ok(())
    };
    let result = served.await;
    // The handler and transport are dropped by now, so the output task sees its channel close.
    let drained = match tokio::time::timeout(OUTPUT_DRAIN_TIMEOUT, output_task).await {
        Ok(Ok(Ok(()))) => Ok(()),
        Ok(Ok(Err(e))) => Err(DemoError::Output(e)),
        Ok(Err(e)) => Err(DemoError::OutputTask(e)),
        Err(_elapsed) => {
            tracing::warn!("output did not drain in time");
            Ok(())
        }
    };
    result.and(drained)
}

/// Sends `tracing` output to stderr, unless the process already has a subscriber.
fn init_stderr_tracing() {
    use std::io::IsTerminal as _;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // An error means a subscriber exists; its owner decided where logs go.
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(filter)
        .try_init();
}
