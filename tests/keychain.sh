#!/usr/bin/env bash
# Runs the keychain-dependent tests against a real Secret Service: a private D-Bus session bus
# (dbus-run-session) with gnome-keyring-daemon started unlocked on a throwaway keyring in a temp
# dir, so the user's own keychain is never touched. MCP_REQUIRE_KEYCHAIN=1 makes those tests
# fail, not skip, when no keychain answers. Extra arguments go to `cargo test` (after the filter).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${MCP_KEYCHAIN_BUS:-}" ]; then
  exec dbus-run-session -- env MCP_KEYCHAIN_BUS=1 bash "$0" "$@"
fi
tmp=$(mktemp -d)
keyring_pid=""
cleanup() {
  if [ -n "$keyring_pid" ]; then kill "$keyring_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
export XDG_DATA_HOME="$tmp/data" XDG_RUNTIME_DIR="$tmp/run"
mkdir -p "$XDG_DATA_HOME"
mkdir -m 700 "$XDG_RUNTIME_DIR"
# --unlock reads the password from stdin: it creates the login keyring and leaves it unlocked.
owned() {
  dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null |
    grep -q 'boolean true'
}
start_keyring() {
  printf 'keychain-test' | gnome-keyring-daemon --foreground --unlock --components=secrets \
    >>"$tmp/keyring.log" 2>&1 &
  keyring_pid=$!
  for _ in $(seq 1 100); do
    if owned; then return; fi
    sleep 0.1
  done
}
# Once (CI, 2026-12-03) the daemon was gone after the integration tests and D-Bus activated a
# locked default one for the library tests, which then failed: say so and start ours again.
ensure_keyring() {
  if ! kill -0 "$keyring_pid" 2>/dev/null || ! owned; then
    echo "keychain.sh: gnome-keyring-daemon (pid $keyring_pid) is gone from the bus; its log:" >&2
    kill "$keyring_pid" 2>/dev/null || true
    cat "$tmp/keyring.log" >&2 || true
    start_keyring
  fi
}
# Runs one cargo test command against the keyring. gnome-keyring-daemon itself has crashed
# under these tests once (CI, 2026-12-05: SIGTRAP, "result not returned from SS API"): when a
# run fails and the daemon is gone, its log is shown, ours is started again and the run is
# repeated once. A failure with the daemon alive is the tests' and fails at once.
against_keyring() {
  if "$@"; then return 0; fi
  if kill -0 "$keyring_pid" 2>/dev/null && owned; then return 1; fi
  echo "keychain.sh: the tests failed and gnome-keyring-daemon (pid $keyring_pid) is gone; its log:" >&2
  cat "$tmp/keyring.log" >&2 || true
  kill "$keyring_pid" 2>/dev/null || true
  start_keyring
  echo "keychain.sh: running them once more against a new daemon" >&2
  "$@"
}
start_keyring
export MCP_REQUIRE_KEYCHAIN=1
against_keyring cargo test --locked --test integration keychain:: "$@"
ensure_keyring
against_keyring cargo test --locked --lib secret:: "$@"
