#!/usr/bin/env bash
# The Windows installer: makes it with NSIS (Debian's makensis, offline) from
# src-tauri/windows/installer.nsi and the debug x86_64-pc-windows-gnu build, then installs it
# silently in a private Wine prefix, runs the Wine end-to-end test on the INSTALLED CLI, and
# uninstalls it (tests/wine/e2e.sh --installer).
#
# Usage: tests/package/nsis.sh            the installer with mcp-companion.exe only (the test
#                                         command; the CLI must be built already)
#        tests/package/nsis.sh --desktop  the full installer: builds the desktop app for
#                                         Windows too (cold: tens of minutes on 2 cores), adds it
#                                         and its WebView2Loader.dll; its window never opens under
#                                         Wine here (no WebView2 runtime)
# env: CARGO_TARGET_DIR. Output: $CARGO_TARGET_DIR/x86_64-pc-windows-gnu/debug/bundle/nsis/.
set -euo pipefail
cd "$(dirname "$0")/../.."
TARGET=$(realpath -m "${CARGO_TARGET_DIR:-target}")
WIN="$TARGET/x86_64-pc-windows-gnu/debug"
command -v makensis >/dev/null || { echo "nsis: missing makensis (apt-get install nsis)" >&2; exit 2; }
version=$(sed -n 's/^version = "\(.*\)"/\1/p' src-tauri/Cargo.toml | head -1)
# zlib: lzma took minutes for the debug binaries on 2 busy cores (the release default is lzma).
defines=(-DVERSION="$version" -DCLI="$WIN/mcp-companion.exe" -DICON="$(pwd)/icons/icon.ico" -DCOMPRESSOR=zlib)
name="mcp-companion_${version}_x64-cli-setup.exe"
if [ "${1:-}" = --desktop ]; then
  start=$(date +%s)
  cargo build --target x86_64-pc-windows-gnu -p mcp-companion-desktop --locked
  echo "nsis: the desktop app's Windows build took $(($(date +%s) - start)) s"
  loader=$(find "$WIN/build" -path '*webview2-com-sys*/out/x64/WebView2Loader.dll' | head -1)
  [ -n "$loader" ] || { echo "nsis: no WebView2Loader.dll under $WIN/build" >&2; exit 1; }
  defines+=(-DDESKTOP="$WIN/mcp-companion-desktop.exe" -DWEBVIEW2LOADER="$loader")
  name="mcp-companion_${version}_x64-setup.exe"
fi
[ -f "$WIN/mcp-companion.exe" ] || { echo "nsis: missing $WIN/mcp-companion.exe (build it first)" >&2; exit 2; }
out="$WIN/bundle/nsis"
mkdir -p "$out"
rm -f "$out/$name"
start=$(date +%s)
makensis -V2 -WX "${defines[@]}" -DOUTFILE="$out/$name" src-tauri/windows/installer.nsi
echo "nsis: made $name ($(du -h "$out/$name" | cut -f1)) in $(($(date +%s) - start)) s"
start=$(date +%s)
bash tests/wine/e2e.sh --installer "$out/$name"
echo "nsis: install, the Wine end-to-end test and uninstall took $(($(date +%s) - start)) s"
