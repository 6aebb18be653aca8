#!/usr/bin/env bash
# The Windows step of the test command: cross-checks every target for
# x86_64-pc-windows-gnu, builds the debug `mcp-companion.exe`, and runs it end to end under Wine
# (tests/wine/e2e.sh). The Windows artifacts live in $CARGO_TARGET_DIR/x86_64-pc-windows-gnu/,
# so the CI cache of the target dir keeps them warm like the native ones.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${CARGO_TARGET_DIR:-target}
if ! rustup target add x86_64-pc-windows-gnu; then
  echo "SKIPPED the Windows build and the Wine test: rustup could not install x86_64-pc-windows-gnu here" >&2
  exit 0
fi
start=$(date +%s)
cargo check --target x86_64-pc-windows-gnu --all-targets --locked
cargo build --target x86_64-pc-windows-gnu --bin mcp-companion --locked
echo "windows: cross-check and debug build took $(($(date +%s) - start)) s"
start=$(date +%s)
bash tests/wine/e2e.sh "$TARGET/x86_64-pc-windows-gnu/debug/mcp-companion.exe"
echo "windows: the Wine end-to-end test took $(($(date +%s) - start)) s"
