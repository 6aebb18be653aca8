#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages the test command needs, only those that are missing:
# Node.js + npm (third-party MCP servers), a C toolchain, Python venv support, the MinGW
# compiler, NSIS and Wine for the Windows build, its installer and its end-to-end test,
# gnome-keyring (a real Secret Service), and the desktop shell's libraries and test tools
# (desktop-file-validate for the package test).
# Needs root (or sudo) only when something is missing.
set -euo pipefail
need_apt=()
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
command -v cc >/dev/null 2>&1 || need_apt+=(build-essential)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || need_apt+=(gcc-mingw-w64-x86-64)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need_apt+=(python3-venv)
# Debian keeps wine64 out of PATH, in /usr/lib/wine/.
command -v wine64 >/dev/null 2>&1 || [ -x /usr/lib/wine/wine64 ] || need_apt+=(wine64)
# The Windows installer (tests/package/nsis.sh): NSIS's makensis runs on Linux.
command -v makensis >/dev/null 2>&1 || need_apt+=(nsis)
# The conformance suites: a private network namespace (unshare, ip), the client suite's
# stand-in browser and the server suite's wait for its adapters (curl).
command -v unshare >/dev/null 2>&1 || need_apt+=(util-linux)
command -v ip >/dev/null 2>&1 || need_apt+=(iproute2)
command -v curl >/dev/null 2>&1 || need_apt+=(curl)
# A real Secret Service for the keychain tests (tests/keychain.sh): gnome-keyring on a private
# D-Bus session bus.
command -v gnome-keyring-daemon >/dev/null 2>&1 || need_apt+=(gnome-keyring)
command -v dbus-run-session >/dev/null 2>&1 || need_apt+=(dbus)
# The desktop shell (Tauri: WebKitGTK, GTK, the tray library) and its e2e test (Xvfb, a tray
# host, WebDriver, screenshots, and python3-gi for its stand-in notification server).
for p in libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev \
  libsoup-3.0-dev libxdo-dev xvfb xauth dbus-x11 imagemagick xdotool trayer webkit2gtk-driver \
  desktop-file-utils python3-gi; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need_apt+=("$p")
done
[ ${#need_apt[@]} -eq 0 ] && exit 0
echo "installing system packages: ${need_apt[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${need_apt[@]}"
