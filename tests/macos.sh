#!/usr/bin/env bash
# The macOS step of the test command: clippy with warnings as errors (a check, no link) of the
# core, the CLI and the desktop crate, tests included, for aarch64-apple-darwin and
# x86_64-apple-darwin. zig is the C compiler (through cargo-zigbuild), which is what lets
# aws-lc-sys and the other build scripts compile their C code without a macOS SDK. Nothing is
# linked: that needs the Security, CoreFoundation, AppKit… framework stubs of an SDK, which no
# registry package here provides. Installs what it needs when missing: the two rustup targets,
# and pinned ziglang + cargo-zigbuild from PyPI in a venv under $MCP_MACOS_TOOLS. The Apple
# artifacts live in $CARGO_TARGET_DIR/<target>/, so the CI cache keeps them warm.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGETS=(aarch64-apple-darwin x86_64-apple-darwin)
TOOLS=${MCP_MACOS_TOOLS:-$HOME/.cache/mcp-companion/macos-tools}
ZIGLANG=0.17.0
ZIGBUILD=0.24.0
PY=${PYTHON:-python3}
start=$(date +%s)
installed=$(rustup target list --installed)
for t in "${TARGETS[@]}"; do
  if ! grep -qx "$t" <<<"$installed" && ! rustup target add "$t"; then
    echo "SKIPPED the macOS check: rustup could not install $t here" >&2
    exit 0
  fi
done
venv=$TOOLS/venv
if ! "$venv/bin/python" -c "import ziglang" 2>/dev/null ||
  [ "$("$venv/bin/cargo-zigbuild" --version 2>/dev/null)" != "cargo-zigbuild $ZIGBUILD" ]; then
  "$PY" -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "ziglang==$ZIGLANG" "cargo-zigbuild==$ZIGBUILD"
fi
# cargo-zigbuild runs zig as `python -m ziglang` with the first python on PATH: the venv's.
export PATH=$venv/bin:$PATH
echo "macos: tools ready in $(($(date +%s) - start)) s"
for t in "${TARGETS[@]}"; do
  start=$(date +%s)
  cargo-zigbuild clippy --target "$t" -p mcp-companion -p mcp-companion-desktop --all-targets \
    --locked -- -D warnings
  echo "macos: clippy for $t took $(($(date +%s) - start)) s"
done
