//! Integration tests of the core: a real `mcp-companion serve` process, real upstream server
//! processes (our demo server, and third-party servers from npm/PyPI when installed), real
//! sockets, real clients (rmcp, the CLI, and the official Python SDK through `bridge`).
//!
//! One test target (a folder of modules) keeps link time down. Unix only: the harness drives
//! Unix sockets, signals and /proc; the Windows build is checked with `cargo check` (tests/run.sh).
#![cfg(unix)]

mod activity;
// Reads the agents' processes from /proc.
#[cfg(target_os = "linux")]
mod agents;
mod approval;
mod approval_rules;
mod asks;
mod autostart;
mod bounds;
mod bridge;
mod bundle;
mod bursts;
mod caps;
mod client_names;
mod common;
mod config_file;
mod deaf;
mod declared;
mod elicitor;
mod endpoint;
mod era_memory;
mod eras;
mod exact;
mod failures;
mod fast_path;
mod fidelity;
mod first_hour;
mod first_list;
mod flood;
mod hub_commands;
mod hub_race;
mod initialize;
mod keychain;
mod launching;
mod lifecycle;
mod listen_upstream;
mod login_start;
mod malformed;
mod matrix;
mod matrix_ts;
mod naming;
mod nanobot;
mod native;
mod oauth;
mod oauth_fixture;
mod oauth_keychain;
mod oauth_refusals;
mod parked;
mod parked_native;
mod passthrough;
mod pinning;
mod probe;
mod profiles;
mod python_clients;
mod raw;
mod registry;
mod registry_cli;
mod registry_fixture;
mod registry_text;
mod remote;
mod remote_answers;
mod remote_errors;
mod remote_fixture;
mod remote_lane;
mod remote_modern;
mod remote_refusals;
mod remote_refused;
mod remote_restart;
mod remote_streams;
mod requests;
mod retry;
mod robustness;
mod secrets;
mod serve_log;
mod sessions;
mod shared_names;
mod shared_uris;
mod shown;
mod socket_dir;
mod ssrf;
mod stopped;
mod strays;
mod supervision;
mod tasks;
mod tasks_ended;
mod tasks_from_modern;
mod tasks_modern;
mod tasks_policy;
mod tasks_text;
mod tasks_text_modern;
mod tasks_uris;
mod telemetry;
mod third_party;
mod tokens;
mod tool_search;
mod wire;
