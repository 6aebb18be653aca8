#!/usr/bin/env bash
# Captures the real tools/list of twelve MCP servers (npm and PyPI, pinned below) into
# tests/fixtures/tool_search_catalog.json, the catalog of the retrieval evaluation
# (benches/tool_search/main.rs). Run once by hand when a pin changes; the JSON is checked in.
# Needs Node 18+ and Python 3; installs into DIR/node-catalog and DIR/venv-catalog
# (DIR: $MCP_PEERS_DIR, else ~/.cache/mcp-companion/peers) and reuses DIR/node's
# server-everything (tests/peers/setup.sh). About 1 minute warm, 2 cold.
set -euo pipefail
DIR=${MCP_PEERS_DIR:-$HOME/.cache/mcp-companion/peers}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=${PYTHON:-python3}
mkdir -p "$DIR/node-catalog"
cd "$DIR/node-catalog"
[ -f package.json ] || npm init -y >/dev/null
npm install --no-audit --no-fund --loglevel=error \
  @modelcontextprotocol/server-filesystem@2026.8.31 \
  @modelcontextprotocol/server-memory@2026.8.31 \
  @modelcontextprotocol/server-sequential-thinking@2026.8.31 \
  @modelcontextprotocol/server-github@2025.4.8 \
  @modelcontextprotocol/server-brave-search@0.6.2 \
  @modelcontextprotocol/server-slack@2025.4.25 \
  @modelcontextprotocol/server-google-maps@0.6.2 \
  @playwright/mcp@0.0.86
cd "$DIR"
[ -x venv-catalog/bin/python ] || "$PY" -m venv venv-catalog
venv-catalog/bin/pip install -q --disable-pip-version-check \
  "mcp==2.3.0" "mcp-server-time==2026.10.19" "mcp-server-git==2026.10.19" "mcp-server-fetch==2026.10.24"
EVERYTHING_DIR="$DIR/node/node_modules/@modelcontextprotocol/server-everything" \
  venv-catalog/bin/python "$HERE/capture.py" "$DIR/node-catalog" "$DIR/venv-catalog" \
  "$ROOT/tests/fixtures/tool_search_catalog.json"
