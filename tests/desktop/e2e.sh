#!/usr/bin/env bash
# Desktop end-to-end test (see drive.py for what it checks). Needs the desktop apt packages,
# Xvfb, trayer, xdotool, imagemagick, webkit2gtk-driver, python3-gi (the stand-in notification
# server, tests/desktop/notification_daemon.py), the built binaries and the Python peers.
# Usage: tests/desktop/e2e.sh   (env: CARGO_TARGET_DIR, MCP_PEERS_DIR, DESKTOP_E2E_OUT)
# Screenshots and logs go to $DESKTOP_E2E_OUT (default: $CARGO_TARGET_DIR/desktop-e2e).
set -euo pipefail
cd "$(dirname "$0")/../.."
TARGET=${CARGO_TARGET_DIR:-target}
PEERS=${MCP_PEERS_DIR:-$HOME/.cache/mcp-companion/peers}
export APP=$(realpath -m "$TARGET/debug/mcp-companion-desktop")
export CLI=$(realpath -m "$TARGET/debug/mcp-companion")
export PEERS_PYTHON="$PEERS/venv/bin/python"
export EVERYTHING_JS="$PEERS/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
export OUT=$(realpath -m "${DESKTOP_E2E_OUT:-$TARGET/desktop-e2e}")
for f in "$APP" "$CLI" "$PEERS_PYTHON" "$PEERS/venv/bin/mcp-server-time"; do
  [ -x "$f" ] || { echo "e2e: missing $f" >&2; exit 2; }
done
[ -f "$EVERYTHING_JS" ] || { echo "e2e: missing $EVERYTHING_JS (tests/peers/setup.sh)" >&2; exit 2; }
for tool in node Xvfb trayer xdotool import dbus-run-session WebKitWebDriver gnome-keyring-daemon curl gdbus; do
  command -v "$tool" >/dev/null || { echo "e2e: missing $tool" >&2; exit 2; }
done
/usr/bin/python3 -c 'import gi' 2>/dev/null || { echo "e2e: missing python3-gi (system Python)" >&2; exit 2; }
rm -rf "$OUT" && mkdir -p "$OUT"

export WORK=$(mktemp -d /tmp/mcp-desktop-e2e.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 0.5
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# A private user: HOME, XDG dirs, runtime dir, socket and config.
export HOME="$WORK/home" XDG_CONFIG_HOME="$WORK/home/.config" XDG_DATA_HOME="$WORK/home/.local/share"
export XDG_RUNTIME_DIR="$WORK/run" MCP_COMPANION_CONFIG="$WORK/config.json"
export MCP_COMPANION_SOCKET="$WORK/run/mcp-companion/mcp.sock"
mkdir -p "$HOME" "$XDG_CONFIG_HOME/Claude" "$XDG_CONFIG_HOME/Code/User" "$XDG_RUNTIME_DIR" "$WORK/bin"
chmod 700 "$XDG_RUNTIME_DIR"
# The `time` preset runs `uvx mcp-server-time`; uv is not installed here, so a shim runs the
# pinned PyPI package from the peers venv.
# `uvx NAME==VERSION ARGS…` (a registry install) runs the same binary with ARGS.
cat > "$WORK/bin/uvx" <<SH
#!/bin/sh
p=\$1; shift
exec "$PEERS/venv/bin/\${p%%==*}" "\$@"
SH
chmod +x "$WORK/bin/uvx"
export PATH="$WORK/bin:$PATH"

# The fixture registry (tests/fixtures/registry) on 127.0.0.1, whitelisted.
python3 tests/desktop/registry_fixture.py "$WORK/registry.port" &
pids+=($!)
for _ in $(seq 50); do [ -f "$WORK/registry.port" ] && break; sleep 0.1; done
export REGISTRY_URL="http://127.0.0.1:$(cat "$WORK/registry.port")"

# Planted secrets: the access and refresh tokens the OAuth fixture hands out, the
# pre-registered client's secret (plain text in the config) and a keychain value the `remote`
# entry names as ${secret:e2e_key}. drive.py checks the window never shows any of them.
tag=$RANDOM$RANDOM
export PLANT_ACCESS="planted-access-$tag" PLANT_REFRESH="planted-refresh-$tag"
export PLANT_CLIENT_SECRET="planted-client-secret-$tag" PLANT_KEYCHAIN="planted-keychain-$tag"
# The OAuth-protected MCP server (tests/desktop/oauth_fixture.py) on 127.0.0.1.
python3 tests/desktop/oauth_fixture.py "$WORK/oauth.port" e2e-client "$PLANT_CLIENT_SECRET" \
  "$PLANT_KEYCHAIN" "$PLANT_ACCESS" "$PLANT_REFRESH" &
pids+=($!)
for _ in $(seq 50); do [ -f "$WORK/oauth.port" ] && break; sleep 0.1; done
export OAUTH_URL="http://127.0.0.1:$(cat "$WORK/oauth.port")"
# The system browser: a stand-in that follows the authorization redirect to the companion's
# loopback listener, as a person clicking "Allow" would.
export BROWSER=$(realpath tests/conformance/browser.sh)

# `notes` reads its tools' names and descriptions from this file at each start: drive.py
# changes one later, and the change waits for approval in the window (pinned tools).
echo '{}' > "$WORK/notes-overrides.json"
cat > "$MCP_COMPANION_CONFIG" <<JSON
{ "registries": [ { "name": "fixture", "url": "$REGISTRY_URL" } ],
  "ssrfWhitelist": ["127.0.0.1/32"],
  "mcpServers": {
    "demo":  { "type": "stdio", "command": "$CLI", "args": ["demo-server", "--test-tools"] },
    "notes": { "type": "stdio", "command": "$CLI", "args": ["demo-server", "--tool-overrides", "$WORK/notes-overrides.json"] },
    "remote": { "type": "http", "url": "$OAUTH_URL/mcp",
                "headers": { "X-Fixture-Key": "\${secret:e2e_key}" },
                "oauth": { "clientId": "e2e-client", "clientSecret": "$PLANT_CLIENT_SECRET" } } } }
JSON
# Import sources at their standard paths: Claude Desktop with two stdio servers (one named like
# an existing server but different: renamed), VS Code with one http server.
cat > "$XDG_CONFIG_HOME/Claude/claude_desktop_config.json" <<JSON
{ "mcpServers": {
    "demo":  { "command": "$CLI", "args": ["demo-server", "--extra-tools", "1"] },
    "files": { "command": "$CLI", "args": ["demo-server", "--extra-tools", "2"], "env": { "NOTE": "imported" } } } }
JSON
cat > "$XDG_CONFIG_HOME/Code/User/mcp.json" <<'JSON'
{ // VS Code user MCP config
  "servers": { "docs": { "type": "http", "url": "http://127.0.0.1:9/mcp" } } }
JSON

# An MCP bundle made and signed (self-signed) by the reference CLI, and a copy with one byte
# changed after signing: drive.py opens the first through a second launch (as the file
# association does) and installs it; the second is refused.
MCPB="$PEERS/node-mcpb/node_modules/.bin/mcpb"
[ -x "$MCPB" ] || { echo "e2e: missing $MCPB (tests/peers/setup.sh)" >&2; exit 2; }
mkdir -p "$WORK/hello-bundle/server"
cat > "$WORK/hello-bundle/server/index.js" <<'JS'
const rl = require('readline').createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
rl.on('line', (line) => {
  let m; try { m = JSON.parse(line); } catch { return; }
  if (m.id === undefined) return;
  const ok = (result) => send({ jsonrpc: '2.0', id: m.id, result });
  if (m.method === 'initialize') ok({ protocolVersion: m.params.protocolVersion,
    capabilities: { tools: {} }, serverInfo: { name: 'hello-bundle', version: '1.0.0' } });
  else if (m.method === 'tools/list') ok({ tools: [{ name: 'greet', description: 'Greets',
    inputSchema: { type: 'object', properties: { name: { type: 'string' } } } }] });
  else if (m.method === 'tools/call') ok({ content: [{ type: 'text',
    text: `${process.env.GREETING}, ${m.params.arguments.name} (key ${process.env.API_KEY})` }] });
  else if (m.method === 'ping') ok({});
  else send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'unknown method' } });
});
JS
cat > "$WORK/hello-bundle/manifest.json" <<'JSON'
{ "manifest_version": "0.3", "name": "hello-bundle", "display_name": "Hello bundle", "version": "1.0.0",
  "description": "A bundle packed by mcpb in the desktop e2e", "author": { "name": "e2e" },
  "server": { "type": "node", "entry_point": "server/index.js",
              "mcp_config": { "command": "node", "args": ["${__dirname}/server/index.js"],
                              "env": { "GREETING": "${user_config.greeting}", "API_KEY": "${user_config.api_key}" } } },
  "user_config": {
    "greeting": { "type": "string", "title": "Greeting", "description": "How to greet", "default": "Hello" },
    "api_key": { "type": "string", "title": "API key", "description": "A secret", "sensitive": true, "required": true } } }
JSON
"$MCPB" pack "$WORK/hello-bundle" "$WORK/hello.mcpb" >"$OUT/mcpb.log" 2>&1
"$MCPB" sign "$WORK/hello.mcpb" --self-signed >>"$OUT/mcpb.log" 2>&1
python3 - "$WORK/hello.mcpb" "$WORK/tampered.mcpb" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[len(b) // 4] ^= 0x20
open(sys.argv[2], "wb").write(b)
PY
export BUNDLE="$WORK/hello.mcpb" BUNDLE_TAMPERED="$WORK/tampered.mcpb"

display=:$((90 + RANDOM % 9))
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >"$OUT/xvfb.log" 2>&1 &
pids+=($!)
export DISPLAY=$display
for _ in $(seq 50); do xdotool getdisplaygeometry >/dev/null 2>&1 && break; sleep 0.1; done
trayer --edge top --align right --widthtype pixel --width 120 --height 32 >"$OUT/trayer.log" 2>&1 &
pids+=($!)
sleep 1

export TAURI_WEBVIEW_AUTOMATION=true RUST_LOG=${RUST_LOG:-info}
set +e
# The D-Bus session has a Secret Service (gnome-keyring) for the keychain.
KEYRING_LOG="$OUT/keyring.log" timeout --kill-after=10 600 dbus-run-session -- \
  bash tests/desktop/with_keyring.sh python3 tests/desktop/drive.py 2>&1 | tee "$OUT/e2e.log"
rc=${PIPESTATUS[0]}
set -e
echo "e2e: screenshots and logs in $OUT"
exit "$rc"
