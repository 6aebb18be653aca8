#!/usr/bin/env bash
# The Windows step of the test command: cross-checks every target of the core for
# x86_64-pc-windows-gnu (tests included, warnings as errors), builds the debug
# `mcp-companion.exe` and `mcp-companion-desktop.exe` in one cargo run, makes the full installer
# (NSIS, tests/package/nsis.sh), installs it silently under Wine, runs the INSTALLED CLI end to
# end, checks the desktop app's files and Start-menu entry (tests/wine/e2e.sh
# --desktop-installer) and uninstalls it. The desktop app's window never opens under Wine (no
# WebView2 runtime).
#
# Cost on 2 cores, measured 2026-12-05 with other builds running (load 11-21: wall times say
# little; CPU = user+sys of every rustc). Cold = empty Windows target
# dir, native build already done (as in tests/run.sh):
#   cross-check (tests included)   cold 204-244 s CPU, 610-901 s wall; after a core change 8 s CPU
#   CLI + desktop build            cold 324 s CPU, 1584 s wall; after a core change 27 s CPU, 93 s wall
#   (before the desktop joined, the CLI alone: cold 222 s CPU, 722 s wall; 17 s CPU warm. The
#   desktop on top, with debug info: 130 s CPU cold, 13 s warm)
#   makensis 66 s wall (58 MB), the Wine install, 22 checks and uninstall 84-258 s wall;
#   with nothing to rebuild the whole step took 153 s. In all, cold: 528 s CPU of builds (it was
#   466 s for the CLI-only step, 596 s with the desktop added without tests/package/windows-flags.sh).
# The Windows artifacts live in $CARGO_TARGET_DIR/x86_64-pc-windows-gnu/, so the CI cache of the
# target dir keeps them warm like the native ones.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/package/windows-flags.sh
if ! rustup target add x86_64-pc-windows-gnu; then
  echo "SKIPPED the Windows build and the Wine test: rustup could not install x86_64-pc-windows-gnu here" >&2
  exit 0
fi
start=$(date +%s)
cargo check --target x86_64-pc-windows-gnu --all-targets --locked
echo "windows: the cross-check took $(($(date +%s) - start)) s"
start=$(date +%s)
bash tests/package/nsis.sh
echo "windows: the build, the installer, the Wine end-to-end test and the uninstall took $(($(date +%s) - start)) s"
