#!/usr/bin/env bash
# Builds in release mode and prints the benchmark table (docs/src/performance.md).
#   benches/run.sh [--quick] [--n CALLS_PER_ROUND] [--rounds R]
# Installs (idempotent, pinned) the third-party peers: server-everything and the Python venvs
# via tests/peers/setup.sh, and the peer aggregators compared in item 7 (mcp-proxy from PyPI,
# supergateway and mcp-hub from npm, all pinned, under $MCP_PEERS_DIR/bench-peers). A peer that cannot be
# installed is skipped by the bench with a printed reason. socat (Debian) is the byte-relay floor
# of item 1: the time any proxy on the same path pays for its two process hops.
set -euo pipefail
cd "$(dirname "$0")/.."
export MCP_PEERS_DIR=${MCP_PEERS_DIR:-$HOME/.cache/mcp-companion/peers}
PY=${PYTHON:-python3}
bash tests/peers/setup.sh "$MCP_PEERS_DIR" >&2 \
  || echo "peers setup failed: the server-everything rows will be skipped" >&2
B=$MCP_PEERS_DIR/bench-peers
mkdir -p "$B/node"
if [ ! -x "$B/venv-proxy/bin/mcp-proxy" ]; then
  { "$PY" -m venv "$B/venv-proxy" \
    && "$B/venv-proxy/bin/pip" install -q --disable-pip-version-check "mcp-proxy==0.13.0"; } >&2 \
    || echo "could not install mcp-proxy from PyPI" >&2
fi
if [ ! -f "$B/node/node_modules/@1mcp/agent/package.json" ]; then
  ( cd "$B/node" && { [ -f package.json ] || npm init -y >/dev/null; } \
    && npm install --no-audit --no-fund --loglevel=error @1mcp/agent ) >"$B/1mcp-install.log" 2>&1 \
    || echo "could not install @1mcp/agent from npm (see $B/1mcp-install.log)" >&2
fi
# supergateway and mcp-hub (npm), pinned; both run under node from this dir.
for pkg in supergateway@4.0.0 mcp-hub@4.2.1; do
  name=${pkg%@*}
  if ! grep -qs "\"version\": \"${pkg##*@}\"" "$B/node/node_modules/$name/package.json"; then
    ( cd "$B/node" && { [ -f package.json ] || npm init -y >/dev/null; } \
      && npm install --no-audit --no-fund --loglevel=error "$pkg" ) >"$B/$name-install.log" 2>&1 \
      || echo "could not install $pkg from npm (see $B/$name-install.log)" >&2
  fi
done
command -v socat >/dev/null \
  || { apt-get install -y -q socat >&2 || sudo apt-get install -y -q socat >&2; } \
  || echo "could not install socat: the byte-relay floor row will be skipped" >&2
cargo build --release --locked --bin mcp-companion
cargo bench --locked --bench proxy -- "$@"
