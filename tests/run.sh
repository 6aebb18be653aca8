#!/usr/bin/env bash
# The test command (README "Run the tests"): installs the third-party MCP peers the integration
# tests use (npm + PyPI, pinned), then runs formatting, lints, unit and integration tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export MCP_PEERS_DIR=${MCP_PEERS_DIR:-$HOME/.cache/mcp-companion/peers}
bash tests/peers/setup.sh "$MCP_PEERS_DIR"
cargo fmt --all -- --check
cargo clippy --all-targets --locked -- -D warnings
cargo test --all-targets --locked
