#!/usr/bin/env bash
# Runs a command with a Secret Service on the current D-Bus session bus (run it inside
# dbus-run-session): gnome-keyring-daemon, unlocked, on a throwaway keyring under
# $XDG_DATA_HOME (as tests/keychain.sh does), stopped when the command ends.
# Usage: dbus-run-session -- tests/desktop/with_keyring.sh COMMAND [ARG…]
set -euo pipefail
: "${DBUS_SESSION_BUS_ADDRESS:?run inside dbus-run-session}"
log=${KEYRING_LOG:-/dev/null}
# --unlock reads the password from stdin: it creates the login keyring and leaves it unlocked.
printf 'desktop-e2e' | gnome-keyring-daemon --foreground --unlock --components=secrets >"$log" 2>&1 &
keyring_pid=$!
trap 'kill "$keyring_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  if dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null |
    grep -q 'boolean true'; then
    break
  fi
  sleep 0.1
done
set +e
"$@"
rc=$?
exit "$rc"
