#!/usr/bin/env bash
# The installable package. Bundles the .deb and .rpm with Tauri's own bundler (the
# pinned @tauri-apps/cli from npm) from the debug build the test command already made, installs
# the .deb system-wide, checks its files (binaries, Depends, desktop entry per
# desktop-file-validate, hicolor icons, the .mcpb file association), starts the INSTALLED app under Xvfb with a tray host,
# calls a tool through the installed `mcp-companion bridge`, checks the Connect page shows the
# installed CLI path, quits, purges, and checks nothing is left but the user's own config.
#
# Usage: tests/package/deb.sh   (env: CARGO_TARGET_DIR; PACKAGE_PROFILE=release to bundle a
# release build instead). Needs root or sudo for dpkg, and what tests/desktop/e2e.sh needs.
# The Connect page screenshot and the WebDriver log go to $CARGO_TARGET_DIR/package-e2e/.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
TARGET=$(realpath -m "${CARGO_TARGET_DIR:-target}")
PROFILE=${PACKAGE_PROFILE:-debug}
PEERS=${MCP_PEERS_DIR:-$HOME/.cache/mcp-companion/peers}
TAURI_CLI_VERSION=2.12.5
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
for f in "$TARGET/$PROFILE/mcp-companion" "$TARGET/$PROFILE/mcp-companion-desktop"; do
  [ -x "$f" ] || { echo "package: missing $f (build it first)" >&2; exit 2; }
done
for tool in Xvfb trayer dbus-run-session WebKitWebDriver desktop-file-validate dpkg-deb npm; do
  command -v "$tool" >/dev/null || { echo "package: missing $tool" >&2; exit 2; }
done
fail() { echo "package: FAILED: $*" >&2; exit 1; }
pass() { echo "package: ok - $*"; }

# --- bundle ----------------------------------------------------------------------------------
cli_dir="$HOME/.cache/mcp-companion/tauri-cli-$TAURI_CLI_VERSION"
if [ ! -x "$cli_dir/node_modules/.bin/tauri" ]; then
  npm install --no-audit --no-fund --loglevel=error --prefix "$cli_dir" "@tauri-apps/cli@$TAURI_CLI_VERSION"
fi
bundle_dir="$TARGET/$PROFILE/bundle"
rm -rf "$bundle_dir/deb" "$bundle_dir/rpm"
cli_bin="$TARGET/$PROFILE/mcp-companion"
# The CLI goes to /usr/bin beside the app; tauri.conf.json names the release build, so the path
# of the build being bundled is merged in here.
override=$(printf '{"bundle":{"linux":{"deb":{"files":{"/usr/bin/mcp-companion":"%s"}},"rpm":{"files":{"/usr/bin/mcp-companion":"%s"}}}}}' "$cli_bin" "$cli_bin")
flags=()
[ "$PROFILE" = debug ] && flags+=(--debug)
start=$(date +%s)
(cd src-tauri && "$cli_dir/node_modules/.bin/tauri" bundle --ci "${flags[@]}" --bundles deb,rpm --config "$override")
echo "package: bundled in $(($(date +%s) - start)) s"
deb=$(ls "$bundle_dir"/deb/*.deb)
rpm=$(ls "$bundle_dir"/rpm/*.rpm)
pkg=$(dpkg-deb -f "$deb" Package)
version=$(sed -n 's/^version = "\(.*\)"/\1/p' src-tauri/Cargo.toml | head -1)
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "deb version $(dpkg-deb -f "$deb" Version) is not Cargo's $version"
depends=$(dpkg-deb -f "$deb" Depends)
for d in libwebkit2gtk-4.1-0 libgtk-3-0 libayatana-appindicator3-1; do
  grep -q "\b$d\b" <<<"$depends" || fail "Depends lacks $d: $depends"
done
pass "$(basename "$deb"): package $pkg $version, Depends: $depends"

# --- install ---------------------------------------------------------------------------------
installed=0
work=$(mktemp -d /tmp/mcp-package-e2e.XXXXXX)
cleanup() {
  [ "$installed" = 1 ] && $SUDO dpkg --purge "$pkg" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
  fail "$pkg is already installed on this machine; remove it first"
fi
$SUDO dpkg -i "$deb" >/dev/null
installed=1
files=$(dpkg -L "$pkg" | while read -r f; do if [ ! -d "$f" ]; then echo "$f"; fi; done)
count=$(wc -l <<<"$files")
[ -x /usr/bin/mcp-companion ] && [ -x /usr/bin/mcp-companion-desktop ] || fail "binaries: $files"
/usr/bin/mcp-companion --version | grep -qF "$version" || fail "installed CLI version"
desktop=$(grep '^/usr/share/applications/.*\.desktop$' <<<"$files") || fail "no desktop entry in $files"
desktop-file-validate "$desktop" || fail "desktop-file-validate $desktop"
grep -qx 'Exec=mcp-companion-desktop %F' "$desktop" || fail "Exec= in $desktop: $(grep ^Exec= "$desktop")"
# The .mcpb file association: the desktop entry handles the MIME type, the shared-mime-info XML
# defines it (*.mcpb), and the triggers of shared-mime-info and desktop-file-utils took them in.
grep -qx 'MimeType=application/x-mcpb;' "$desktop" || fail "MimeType= in $desktop: $(grep ^MimeType= "$desktop")"
mime_xml=/usr/share/mime/packages/mcp-companion.xml
grep -qF '<glob pattern="*.mcpb"/>' "$mime_xml" || fail "no *.mcpb glob in $mime_xml"
[ -f /usr/share/mime/application/x-mcpb.xml ] || fail "update-mime-database did not run: no /usr/share/mime/application/x-mcpb.xml"
grep -q '^\*\.mcpb$\|application/x-mcpb:\*\.mcpb' /usr/share/mime/globs2 /usr/share/mime/globs 2>/dev/null \
  || fail "*.mcpb is not in the MIME glob database"
grep -q "^application/x-mcpb=.*$(basename "$desktop")" /usr/share/applications/mimeinfo.cache \
  || fail "update-desktop-database did not list $(basename "$desktop") for application/x-mcpb"
icon=$(sed -n 's/^Icon=//p' "$desktop")
for size in 32x32 128x128 256x256; do
  [ -f "/usr/share/icons/hicolor/$size/apps/$icon.png" ] || fail "no $size hicolor icon named $icon"
done
pass "installed $count files: /usr/bin/mcp-companion{,-desktop}, $(basename "$desktop") (valid, opens application/x-mcpb), $mime_xml, hicolor icons $icon 32/128/256"

# --- run the installed app -------------------------------------------------------------------
home="$work/home"
out="$TARGET/package-e2e"
rm -rf "$out" && mkdir -p "$out"
mkdir -p "$home/.config/mcp-companion"
cat >"$home/.config/mcp-companion/config.json" <<'JSON'
{ "mcpServers": { "demo": { "command": "/usr/bin/mcp-companion", "args": ["demo-server"] } } }
JSON
display=:$((80 + RANDOM % 9))
(
  # A private user: the app and the bridge find the same socket by the default rules alone.
  export HOME="$home"
  unset XDG_CONFIG_HOME XDG_DATA_HOME XDG_RUNTIME_DIR MCP_COMPANION_SOCKET MCP_COMPANION_CONFIG
  pids=()
  trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
  Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >"$out/xvfb.log" 2>&1 &
  pids+=($!)
  export DISPLAY=$display
  for _ in $(seq 50); do [ -e "/tmp/.X11-unix/X${display#:}" ] && break; sleep 0.1; done
  trayer --edge top --align right --widthtype pixel --width 120 --height 32 >"$out/trayer.log" 2>&1 &
  pids+=($!)
  sleep 1
  export TAURI_WEBVIEW_AUTOMATION=true PEERS_PYTHON="$PEERS/venv/bin/python" OUT="$out" WORK="$work"
  timeout --kill-after=10 300 dbus-run-session -- python3 "$root/tests/package/installed_app.py"
) || fail "the installed app (log above)"

# --- purge -----------------------------------------------------------------------------------
$SUDO dpkg --purge "$pkg" >/dev/null
installed=0
left=$(while read -r f; do if [ -e "$f" ]; then echo "$f"; fi; done <<<"$files")
[ -z "$left" ] || fail "purge left: $left"
[ ! -e /usr/share/mime/application/x-mcpb.xml ] || fail "purge left the application/x-mcpb MIME type registered"
[ -f "$home/.config/mcp-companion/config.json" ] || fail "purge removed the user's config"
kept=$(cd "$home" && find . -type f | sort | tr '\n' ' ')
pass "purged: none of the $count files left; the user's own files stay: $kept"
mib() { echo "$(($(stat -c %s "$1") / 1048576)) MiB"; }
echo "package: $(basename "$deb") $(mib "$deb"), $(basename "$rpm") $(mib "$rpm") (rpm built, not installed here); $count files installed (profile $PROFILE)"
