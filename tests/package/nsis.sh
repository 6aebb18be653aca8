#!/usr/bin/env bash
# The Windows installer: builds the debug x86_64-pc-windows-gnu binaries it holds (one cargo
# build, a no-op when they are current), makes the installer with NSIS (Debian's makensis,
# offline) from src-tauri/windows/installer.nsi, then installs it silently in a private Wine
# prefix, runs the Wine end-to-end test on the INSTALLED CLI, checks the Start-menu entry and
# the desktop app's files, and uninstalls it (tests/wine/e2e.sh --desktop-installer).
#
# Usage: tests/package/nsis.sh             the full installer: mcp-companion.exe and the desktop
#                                          app (mcp-companion-desktop.exe, WebView2Loader.dll);
#                                          its window never opens under Wine (no WebView2
#                                          runtime). The test command's installer.
#        tests/package/nsis.sh --cli-only  mcp-companion.exe only (no desktop build)
# env: CARGO_TARGET_DIR; the rustc flags of tests/package/windows-flags.sh.
# Output: $CARGO_TARGET_DIR/x86_64-pc-windows-gnu/debug/bundle/nsis/.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/package/windows-flags.sh
TARGET=$(realpath -m "${CARGO_TARGET_DIR:-target}")
WIN="$TARGET/x86_64-pc-windows-gnu/debug"
command -v makensis >/dev/null || { echo "nsis: missing makensis (apt-get install nsis)" >&2; exit 2; }
version=$(sed -n 's/^version = "\(.*\)"/\1/p' src-tauri/Cargo.toml | head -1)
# zlib: lzma took minutes for the debug binaries on 2 busy cores (the release default is lzma).
defines=(-DVERSION="$version" -DCLI="$WIN/mcp-companion.exe" -DICON="$(pwd)/icons/icon.ico" -DCOMPRESSOR=zlib)
start=$(date +%s)
if [ "${1:-}" = --cli-only ]; then
  cargo build --target x86_64-pc-windows-gnu -p mcp-companion --bin mcp-companion --locked
  name="mcp-companion_${version}_x64-cli-setup.exe"
  check=--installer
else
  # Both programs in one build, so they share every unit (workspace-hack, tests/one_build.sh).
  cargo build --target x86_64-pc-windows-gnu -p mcp-companion -p mcp-companion-desktop --bins --locked
  loader=$(find "$WIN/build" -path '*webview2-com-sys*/out/x64/WebView2Loader.dll' | head -1)
  [ -n "$loader" ] || { echo "nsis: no WebView2Loader.dll under $WIN/build" >&2; exit 1; }
  defines+=(-DDESKTOP="$WIN/mcp-companion-desktop.exe" -DWEBVIEW2LOADER="$loader")
  name="mcp-companion_${version}_x64-setup.exe"
  check=--desktop-installer
fi
echo "nsis: the Windows build took $(($(date +%s) - start)) s"
out="$WIN/bundle/nsis"
mkdir -p "$out"
rm -f "$out/$name"
start=$(date +%s)
makensis -V2 -WX "${defines[@]}" -DOUTFILE="$out/$name" src-tauri/windows/installer.nsi
echo "nsis: made $name ($(du -h "$out/$name" | cut -f1)) in $(($(date +%s) - start)) s"
start=$(date +%s)
bash tests/wine/e2e.sh "$check" "$out/$name"
echo "nsis: install, the Wine end-to-end test and uninstall took $(($(date +%s) - start)) s"
