#!/usr/bin/env bash
# Runs MCP Companion: the desktop app (tray + window) when a display is available, else the
# headless `mcp-companion serve`. Extra arguments go to `serve` in headless mode.
# On Debian/Ubuntu, missing desktop packages are installed when running as root.
set -euo pipefail
cd "$(dirname "$0")"

DESKTOP_PACKAGES=(libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev
  libsoup-3.0-dev libxdo-dev)

target_dir=${CARGO_TARGET_DIR:-target}

headless() {
  echo "$1: running headless \`mcp-companion serve\`" >&2
  cargo build --release --locked --bin mcp-companion
  # exec the binary itself (not `cargo run`), so SIGTERM and Ctrl-C reach `serve` directly.
  exec "$target_dir/release/mcp-companion" serve "${@:2}"
}

missing_packages() {
  command -v dpkg-query >/dev/null 2>&1 || return 0
  for p in "${DESKTOP_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
  done
}

if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  headless "no display" "$@"
fi

if [ "$(uname -s)" = Linux ]; then
  missing=$(missing_packages)
  if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "installing desktop packages: $missing" >&2
      apt-get update
      # shellcheck disable=SC2086
      DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
    else
      echo "desktop packages missing: $missing (sudo apt-get install $missing)" >&2
      headless "desktop dependencies missing" "$@"
    fi
  fi
fi

# The CLI is built too, so the window's "Connect an agent" snippets point at it.
cargo build --release --locked -p mcp-companion -p mcp-companion-desktop
exec "$target_dir/release/mcp-companion-desktop"
