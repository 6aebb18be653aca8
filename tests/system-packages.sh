#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages the test command needs, only those that are missing:
# Node.js + npm (third-party MCP servers), a C toolchain, Python venv support, and the MinGW
# compiler for the Windows cross-check. Needs root (or sudo) only when something is missing.
set -euo pipefail
need_apt=()
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
command -v cc >/dev/null 2>&1 || need_apt+=(build-essential)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || need_apt+=(gcc-mingw-w64-x86-64)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need_apt+=(python3-venv)
[ ${#need_apt[@]} -eq 0 ] && exit 0
echo "installing system packages: ${need_apt[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${need_apt[@]}"
