#!/usr/bin/env bash
# The test command (README "Run the tests"): installs the third-party MCP peers the integration
# tests use (npm + PyPI, pinned), then runs formatting, lints, unit and integration tests, and
# checks that the Windows and macOS builds compile (their launch rules are unit-tested here).
set -euo pipefail
cd "$(dirname "$0")/.."
export MCP_PEERS_DIR=${MCP_PEERS_DIR:-$HOME/.cache/mcp-companion/peers}
# Peers are installed below, so tests that need them must run, not skip.
export MCP_REQUIRE_PEERS=1
bash tests/peers/setup.sh "$MCP_PEERS_DIR"
cargo fmt --all -- --check
cargo clippy --all-targets --locked -- -D warnings
cargo test --all-targets --locked
rustup target add x86_64-pc-windows-gnu x86_64-apple-darwin
cargo check --target x86_64-pc-windows-gnu --all-targets --locked
cargo check --target x86_64-apple-darwin --all-targets --locked
