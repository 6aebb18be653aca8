//! MCP Companion core: install MCP servers once, share them with every local agent.
//!
//! Data flows one way (DESIGN §2): config → supervisor → upstream session → catalog → hub →
//! endpoint → agent; a tool call flows back endpoint → hub → supervisor → upstream.
//!
//! The modules, lowest layer first: each uses only modules above it in this table (README.md's
//! "How it works" states the order; `tests/layering.rs` holds the code to it).
//!
//! | module | owns |
//! |---|---|
//! | [`io`] | shared by every room: the bounded line reader every input from outside the process goes through, the atomic file write, reading JSON text without keeping it |
//! | [`net`] | the SSRF guard for remote servers: guarded DNS resolver, HTTP client, URL and secret redaction |
//! | [`logging`] | the companion's log: every line scrubbed of URLs and secrets, outside text in it inert |
//! | [`secret`] | secrets in the OS keychain behind `${secret:NAME}` references |
//! | [`config`] | the config schema, loading with `${VAR}` expansion, validation, atomic save |
//! | [`activity`] | the activity log: every call, listing and server event in a local SQLite database, written off the call path |
//! | [`telemetry`] | OpenTelemetry export (opt-in): the activity log's calls and listings as spans and metrics over OTLP/HTTP, through the SSRF guard |
//! | [`catalog`] | naming, `enabledTools`, schema normalisation, the wrapped capability table |
//! | [`launch`] | the exact program, arguments, environment and cwd of a stdio server, per OS; what a child inherits |
//! | [`process`] | stdio servers' processes: spawn in a group / Job Object, stop, strays, the reaper |
//! | [`auth`] | OAuth sign-in for remote servers: discovery, PKCE, the redirect listener, tokens in the keychain |
//! | [`upstream`] | one MCP client session per server (stdio, streamable HTTP with sign-in, legacy SSE) and one call on it |
//! | [`demo`] | the built-in demo/test MCP server (`mcp-companion demo-server`) |
//! | [`supervisor`] | one task per server: state, connect, stop, restart with backoff, stderr capture |
//! | [`hub`] | the set of supervisors, the merged catalog, change events, call routing and the one call state machine ([`hub::forward`]) |
//! | [`manage`] | the install side: presets, import, validated edits, probe, registry (used by window and CLI) |
//! | [`ipc`] | local transport: the private sockets / named pipes, their paths and permissions, the accept loop, `bridge` |
//! | [`endpoint`] | the agents' MCP endpoint: one MCP session per connection, the fast path, the line wire, per-agent bounds |
//! | [`control`] | the control API the CLI and scripts drive a running companion with, `login` / `logout` included |
//! | [`companion`] | one running companion: lock, hub, endpoint and control API started and stopped together |
//!
//! The binary adds `cli` (the subcommands) on top; the desktop shell (`src-tauri/`) builds on
//! [`companion`] and [`hub`] in process.

pub mod activity;
pub mod auth;
pub mod catalog;
pub mod companion;
pub mod config;
pub mod control;
pub mod demo;
pub mod endpoint;
pub mod hub;
pub mod io;
pub mod ipc;
pub mod launch;
pub mod logging;
pub mod manage;
pub mod net;
pub mod process;
pub mod secret;
pub mod supervisor;
pub mod telemetry;
pub mod upstream;
