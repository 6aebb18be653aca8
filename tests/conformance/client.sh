#!/usr/bin/env bash
# Client command for `conformance client --command …` (the suite appends the scenario server's
# URL and sets MCP_CONFORMANCE_SCENARIO / MCP_CONFORMANCE_CONTEXT). It drives the companion
# through its real code path: a config file naming the URL as a streamableHttp server, `serve`,
# `login` when the server enters `needs sign-in` (the browser step is browser.sh), then
# `tools` and `call` for every listed tool, all over the companion's sockets. A call refused for
# want of scope is followed by `login` (the person's action that grants it) and called again.
# Needs MCP_COMPANION_BIN (the binary under test).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${MCP_COMPANION_BIN:?set MCP_COMPANION_BIN to the mcp-companion binary}
for URL; do :; done
WORK=$(mktemp -d)
SERVE_PID=
cleanup() {
  [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
# Each scenario is a new server under the same name: its own data and state dirs, so the pins
# (and the activity log) of the last scenario, or of the person running the suite, play no part.
export XDG_DATA_HOME=$WORK/data XDG_STATE_HOME=$WORK/state
export MCP_COMPANION_CONFIG=$WORK/config.json
export MCP_COMPANION_SOCKET=$WORK/mcp.sock
# Tokens live for this one `serve` process (the OS keychain is tested elsewhere).
export MCP_COMPANION_TOKEN_VAULT=memory
export BROWSER=$HERE/browser.sh

# The entry: pre-registered credentials from the scenario context when it has them; the client
# ID metadata document URL the suite expects (used only when the server advertises support).
URL="$URL" python3 - "$MCP_COMPANION_CONFIG" <<'PY'
import json, os, sys
ctx = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
oauth = {"clientMetadataUrl": "https://conformance-test.local/client-metadata.json"}
if ctx.get("client_id"):
    oauth["clientId"] = ctx["client_id"]
if ctx.get("client_secret"):
    oauth["clientSecret"] = ctx["client_secret"]
doc = {"mcpServers": {"conf": {"type": "streamableHttp", "url": os.environ["URL"],
                               "connectTimeout": 20, "toolTimeout": 25, "oauth": oauth}},
       "ssrfWhitelist": ["127.0.0.0/8", "::1/128"]}
json.dump(doc, open(sys.argv[1], "w"), indent=2)
PY

"$BIN" --log-level "${CONFORMANCE_LOG:-info}" serve 2>"$WORK/serve.log" &
SERVE_PID=$!

state() { "$BIN" status --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["servers"][0]["state"])' 2>/dev/null; }
# Waits until the server leaves starting/backoff; prints the state.
settle() {
  local s
  for _ in $(seq 1 200); do
    s=$(state)
    case "$s" in ''|starting|backoff) sleep 0.1 ;; *) echo "$s"; return ;; esac
  done
  echo "timeout"
}
fail() { echo "conformance client: $*" >&2; echo "--- serve log" >&2; cat "$WORK/serve.log" >&2; exit 1; }

s=$(settle)
if [ "$s" = "needs sign-in" ]; then
  "$BIN" login conf || fail "login failed"
  sleep 0.2
  s=$(settle)
fi
[ "$s" = running ] || { "$BIN" status >&2; fail "server state is '$s', not running"; }

"$BIN" tools --json >"$WORK/tools.json" || fail "tools failed"
status=0
while IFS=$'\t' read -r name args; do
  [ -n "$name" ] || continue
  echo "call $name $args"
  rc=0
  "$BIN" call --json "$name" "$args" >"$WORK/call.out" 2>&1 || rc=$?
  cat "$WORK/call.out"
  if [ "$rc" != 0 ]; then
    # A server asking for more scope: the companion never opens a browser on an agent's call;
    # the person grants it with `login` (as the error says), then the agent calls again.
    if grep -q "mcp-companion login" "$WORK/call.out"; then
      "$BIN" login conf || fail "login for more scope failed"
      sleep 0.2
      [ "$(settle)" = running ] || fail "server not running after the login for more scope"
      "$BIN" call --json "$name" "$args" || status=1
    else
      status=1
    fi
  fi
done < <(python3 - "$WORK/tools.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
tools = doc["tools"] if isinstance(doc, dict) else doc
for t in tools:
    name = t["name"]
    if not name.startswith("mcp_conf_"):
        continue
    props = (t.get("inputSchema") or {}).get("properties") or {}
    args = {}
    for key, schema in props.items():
        kind = schema.get("type")
        args[key] = {"number": 2, "integer": 3, "boolean": True, "string": "x",
                     "array": [], "object": {}}.get(kind, "x")
    print(name + "\t" + json.dumps(args))
PY
)
[ "$status" = 0 ] || fail "a tool call failed"
exit 0
