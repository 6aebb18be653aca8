//! MCP Companion core: install MCP servers once, share them with every local agent.
//!
//! Data flows one way (DESIGN §2):
//! config → supervisor → upstream session → catalog → hub → ipc → agent;
//! a tool call flows back ipc → hub → supervisor → upstream.
//!
//! | module | owns |
//! |---|---|
//! | [`config`] | the config schema, loading with `${VAR}` expansion, validation, atomic save |
//! | [`catalog`] | naming, `enabledTools`, schema normalisation, the wrapped capability table |
//! | [`launch`] | the exact program, arguments, environment and cwd of a stdio server, per OS |
//! | [`upstream`] | one MCP client session per server (stdio child processes, streamable HTTP, legacy SSE) |
//! | [`net`] | the SSRF guard for remote servers: guarded DNS resolver, HTTP client, URL and secret redaction |
//! | [`logging`] | the log writer that scrubs URLs and secrets from every line |
//! | [`secret`] | secrets in the OS keychain behind `${secret:NAME}` references |
//! | [`supervisor`] | one task per server: state, connect, stop, stderr capture |
//! | [`hub`] | the set of supervisors, the merged catalog, change events, call routing |
//! | [`ipc`] | the local endpoint, the aggregated MCP server on it, `bridge`, the control API |
//! | [`demo`] | the built-in demo/test MCP server (`mcp-companion demo-server`) |
//! | [`companion`] | one running companion: lock, hub, endpoint and control API started and stopped together |
//! | [`reaper`] | the guardian process that kills every server's process group if the companion dies |
//! | [`manage`] | the install side: presets, import, validated edits, probe (used by window and CLI) |
//! | [`io`] | shared by every room: the bounded line reader every input from outside the process goes through, the atomic file write |

pub mod auth;
pub mod catalog;
pub mod companion;
pub mod config;
pub mod demo;
pub mod hub;
pub mod io;
pub mod ipc;
pub mod launch;
pub mod logging;
pub mod manage;
pub mod net;
pub mod reaper;
pub mod secret;
pub mod supervisor;
pub mod upstream;
