#!/usr/bin/env bash
# The soak: 10 demo servers, 8 agents calling continuously, random crashes,
# kills, restarts and reloads for SOAK_SECONDS (default 300; `tests/soak.sh --long` = 1800).
# Fails unless every request got exactly one response, no fd/process leaked and RSS grew < 10 %.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${SOAK_SECONDS:-300}
[ "${1:-}" = "--long" ] && seconds=1800
bin=${CARGO_TARGET_DIR:-target}/debug/mcp-companion
cargo build --locked --bin mcp-companion
exec python3 tests/soak/soak.py --binary "$bin" --duration "$seconds" --servers 10 --agents 8
