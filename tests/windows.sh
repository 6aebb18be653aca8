#!/usr/bin/env bash
# The Windows step of the test command: cross-checks every target for
# x86_64-pc-windows-gnu, builds the debug `mcp-companion.exe`, makes the installer holding it
# (NSIS, tests/package/nsis.sh), installs it silently under Wine, runs the INSTALLED CLI end to
# end (tests/wine/e2e.sh) and uninstalls it. The desktop app is not built for Windows here (cold,
# it costs more than the whole step; `tests/package/nsis.sh --desktop` does it). The Windows artifacts live in $CARGO_TARGET_DIR/x86_64-pc-windows-gnu/,
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
bash tests/package/nsis.sh
echo "windows: the installer, the Wine end-to-end test and the uninstall took $(($(date +%s) - start)) s"
