//! The command line: the global options and every subcommand with its arguments, as clap
//! parses them (their doc comments are the `--help` text).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Install MCP servers once; share them with every local AI agent through one endpoint.
#[derive(Debug, Parser)]
#[command(name = "mcp-companion", version, about, long_about = None)]
pub struct Args {
    /// Config file (default: the per-user config dir, e.g. ~/.config/mcp-companion/config.json).
    #[arg(long, global = true, env = "MCP_COMPANION_CONFIG", value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// MCP socket path (Windows: pipe name); the control socket sits beside it.
    #[arg(long, global = true, env = "MCP_COMPANION_SOCKET", value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Log filter for stderr, e.g. `info`, `debug`, `mcp_companion=trace` (RUST_LOG also works).
    #[arg(long, global = true, value_name = "FILTER")]
    pub log_level: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the companion in the foreground: start every server, serve agents on the socket.
    ///
    /// Logs go to stderr. Ctrl-C or SIGTERM stops every server and removes the sockets.
    Serve {
        /// Reload the config whenever the file changes.
        #[arg(long)]
        watch: bool,
    },
    /// Copy stdio to the companion's socket, for MCP clients that spawn a command.
    ///
    /// Use as the command of an MCP server entry in Claude Desktop, Cursor, VS Code or nanobot:
    /// {"command": "/path/to/mcp-companion", "args": ["bridge"]}. When no companion is running
    /// it starts one (`serve`, detached, logging to ~/.local/state/mcp-companion/companion.log).
    Bridge {
        /// Serve this profile of the config (its socket beside the main one) instead of
        /// everything.
        #[arg(long, value_name = "NAME")]
        profile: Option<String>,
        /// Do not start a companion when none is running (also: `"bridgeAutostart": false` in
        /// the config file).
        #[arg(long, env = "MCP_COMPANION_NO_AUTOSTART", value_parser = clap::builder::BoolishValueParser::new())]
        no_autostart: bool,
    },
    /// List the wrapped tools a running companion serves, and its profiles.
    Tools {
        /// Print the full tools/list result as JSON.
        #[arg(long)]
        json: bool,
        /// List what this profile's agents see instead.
        #[arg(long, value_name = "NAME")]
        profile: Option<String>,
        /// Instead, what each view (everything, each profile) and each server's tools cost an
        /// agent: tools, bytes of the tools/list JSON, tokens (OpenAI o200k_base).
        #[arg(long, conflicts_with = "profile")]
        tokens: bool,
    },
    /// Call a wrapped tool on a running companion and print the result.
    ///
    /// Exits 1 when the result is an error (`isError: true`).
    Call {
        /// Wrapped tool name, e.g. mcp_demo_echo.
        name: String,
        /// Arguments as a JSON object, e.g. '{"message":"hi"}'.
        #[arg(default_value = "{}")]
        arguments: String,
        /// Call it as an agent of this profile does.
        #[arg(long, value_name = "NAME")]
        profile: Option<String>,
        /// Print the raw tools/call result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show every server's state, tool count and last error.
    Status {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show the activity log: calls, listings and server events, oldest first.
    ///
    /// Reads the log's database directly (read-only): works with or without a running
    /// companion. `--json` prints one JSON object per line (JSONL), for export.
    Activity {
        /// Only calls and listings of this agent (its clientInfo name, e.g. claude-code).
        #[arg(long)]
        agent: Option<String>,
        /// Only entries of this server.
        #[arg(long)]
        server: Option<String>,
        /// Only calls of this wrapped tool (e.g. mcp_demo_echo).
        #[arg(long)]
        tool: Option<String>,
        /// Only this outcome: ok, isError, error, timeout, cancelled, withheld (server
        /// entries: a state).
        #[arg(long)]
        outcome: Option<String>,
        /// Only calls and listings of agents on this profile's sessions.
        #[arg(long)]
        profile: Option<String>,
        /// Only entries since then: a duration back from now (90s, 15m, 2h, 7d) or a UTC date.
        #[arg(long)]
        since: Option<String>,
        /// The newest this many entries (0: all).
        #[arg(short = 'n', long, default_value_t = 100)]
        limit: u64,
        /// Keep printing new entries until interrupted.
        #[arg(short, long)]
        follow: bool,
        /// Print one JSON object per entry and line (JSONL).
        #[arg(long)]
        json: bool,
    },
    /// Print a server's captured stderr.
    Logs {
        /// Server name.
        server: String,
        /// How many of the last lines.
        #[arg(short = 'n', long, default_value_t = 100)]
        lines: usize,
        /// Keep printing new lines until interrupted.
        #[arg(short, long)]
        follow: bool,
    },
    /// Start a server of the running companion (also after it gave up and is `failed`).
    Start {
        /// Server name.
        server: String,
        /// Print the answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stop a server of the running companion (its tools disappear from tools/list).
    Stop {
        /// Server name.
        server: String,
        /// Print the answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stop and start a server of the running companion.
    Restart {
        /// Server name.
        server: String,
        /// Print the answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Sign in to a remote server that asks for OAuth (state `needs sign-in`).
    ///
    /// With a companion running, it opens the browser and restarts the server once signed in;
    /// this command prints the URL and waits. Tokens are kept in the OS keychain.
    Login {
        /// Server name.
        server: String,
    },
    /// Forget a server's OAuth tokens and client registration.
    Logout {
        /// Server name.
        server: String,
    },
    /// Start the headless companion (`serve`) when you log in: a systemd user unit on Linux,
    /// the Run key on Windows, a LaunchAgent on macOS. Without an argument, shows whether it
    /// does. (The desktop app has its own switch in Settings.)
    StartAtLogin {
        /// `on` or `off`.
        #[arg(value_enum)]
        switch: Option<super::start_at_login::Switch>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the agent sessions connected to a running companion: client, process (for a
    /// bridge, the agent that started it), profile and how it was chosen, calls, since when.
    /// With --set ID, move that session to --profile NAME (or to everything without it) until
    /// it disconnects; the agent is told its tool list changed.
    Agents {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// The session (its ID in the list) whose profile to change.
        #[arg(long, value_name = "ID")]
        set: Option<u64>,
        /// With --set: the profile to give it; without: everything.
        #[arg(long, value_name = "NAME", requires = "set")]
        profile: Option<String>,
    },
    /// Show the tool changes withheld from agents until you approve them (a server changed a
    /// tool's definition, or added or renamed one, since its tools were pinned); with a server
    /// name or --all, approve them.
    Trust {
        /// Approve this server's waiting changes.
        server: Option<String>,
        /// Approve every server's waiting changes.
        #[arg(long, conflicts_with = "server")]
        all: bool,
        /// Approve only if what waits is still what a listing showed under this code
        /// (`mcp-companion trust` prints it); refused when anything changed since.
        #[arg(long, value_name = "CODE")]
        shown: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show or set the call policy of a server's tools (toolPolicy in the config file): allow
    /// runs a call, ask waits for the person's approval, deny never runs it; default removes
    /// the key. Without a policy, lists what is set (or what decides TOOL).
    Policy {
        /// Server name.
        server: Option<String>,
        /// Tool name (as the server lists it, or wrapped) or glob, e.g. `delete_*`.
        tool: Option<String>,
        /// allow, ask, deny, or default.
        policy: Option<String>,
    },
    /// Show the calls waiting for your approval; with --watch, stay attached as an approver
    /// (calls that ask then wait for you instead of being refused) and answer `ID once`,
    /// `ID always` or `ID deny` typed on stdin.
    Approvals {
        /// Stay attached and print each ask as it comes.
        #[arg(long)]
        watch: bool,
        /// Print each call's whole arguments, not the 1 KiB preview (secrets still masked).
        #[arg(long)]
        full: bool,
        /// Print JSON, one object a line (`argumentsFull` holds the whole arguments when
        /// `arguments` was cut).
        #[arg(long)]
        json: bool,
    },
    /// Answer a call waiting for your approval: once, always (also writes toolPolicy allow),
    /// or deny.
    Approve {
        /// The ask's id (from `approvals`).
        id: u64,
        /// once, always or deny.
        answer: String,
    },
    /// Re-read the config file and apply the changes: added servers start, removed ones stop,
    /// changed ones restart, the rest keep running. A config that does not load changes nothing.
    Reload {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show how each server would be launched, and why it would not start.
    ///
    /// For stdio servers: the resolved program, the exact launch line, the PATH and where it came
    /// from (set MCP_COMPANION_GUI_PATH=1 to see what a desktop launch gets). For remote servers:
    /// the redacted URL, the transport and the SSRF verdict (nothing is connected to). Exits 1
    /// when any enabled server cannot start.
    Doctor {
        /// Only this server.
        server: Option<String>,
        /// Preview the launch line for another OS (for support answers).
        #[arg(long, value_parser = ["windows", "macos", "linux"])]
        os: Option<String>,
    },
    /// Search and inspect MCP registries (the official one and those in `registries`).
    Registry {
        #[command(subcommand)]
        command: super::registry::RegistryCommand,
    },
    /// Install a server from a registry into the config: `add io.github.user/weather[@1.2.0]`.
    Add(super::registry::AddArgs),
    /// Install an MCP bundle (.mcpb): check it, unpack it into the companion's data directory
    /// and add its server to the config. Nothing is written when any check fails.
    Install(super::bundle::InstallArgs),
    /// Remove a server from the config; one installed from a bundle loses its directory too.
    Remove {
        /// Server name.
        server: String,
    },
    /// Compare servers installed from a registry or a bundle with their latest versions.
    Outdated {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Update a server installed from a registry (or a bundle: from its file) to its latest
    /// version, keeping its inputs.
    Update(super::registry::UpdateArgs),
    /// Add the `bridge` entry to an MCP client's own config (Claude Desktop, Cursor, VS Code…).
    Connect(super::connect::ConnectArgs),
    /// Remove our `bridge` entry from an MCP client's config (and nothing else).
    Disconnect(super::connect::ConnectArgs),
    /// Secrets in the OS keychain, used in the config as ${secret:NAME}.
    #[command(subcommand)]
    Secret(super::secret::SecretCommand),
    /// Run the built-in demo MCP server on stdio (what the default config starts).
    DemoServer {
        /// Also expose the test tools (fail, crash, garbage, big, toggle_extra…).
        #[arg(long)]
        test_tools: bool,
        /// Wait this long before answering anything, in milliseconds.
        #[arg(long, default_value_t = 0)]
        start_delay_ms: u64,
        /// Exit with status 1 at once, writing a line to stderr.
        #[arg(long)]
        fail_start: bool,
        /// Add this many generated tools (gen_0, gen_1, …).
        #[arg(long, default_value_t = 0)]
        extra_tools: usize,
        /// Paginate lists with this many items per page.
        #[arg(long)]
        page_size: Option<usize>,
        /// Append the name of each called tool, one per line, to this file (for tests); a call
        /// cancelled by the client adds "<tool> cancelled".
        #[arg(long, value_name = "FILE")]
        call_log: Option<std::path::PathBuf>,
        /// Speak only MCP 2026-07-28 (`server/discover`, `_meta` on every request, no
        /// `initialize`); without it, only the `initialize` era (2024-11-05 … 2025-11-25).
        #[arg(long)]
        stateless: bool,
        /// Read tool renames and descriptions from this JSON file at start
        /// ({"<tool>": {"description": "…", "name": "<new name>"}}; for tests).
        #[arg(long, value_name = "FILE")]
        tool_overrides: Option<std::path::PathBuf>,
        /// Read --tool-overrides again at every listing (for tests that change a tool
        /// mid-session).
        #[arg(long)]
        live_overrides: bool,
        /// Also offer a prompt (ask_name) and a resource (demo://asking/name) that ask the
        /// client for a name before they answer (for tests).
        #[arg(long)]
        asking: bool,
        /// Further arguments: ignored, but the `argv` test tool reports them (launch-quoting tests).
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "ARG"
        )]
        extra_args: Vec<std::ffi::OsString>,
    },
}
