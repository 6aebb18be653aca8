# The installer half of tests/wine/e2e.sh --installer / --desktop-installer (sourced; uses its
# win, ok, fail, $here, $work, $installer, $with_desktop and $WINEPREFIX). install_silently runs
# the installer with /S and checks what it wrote, the Start-menu entry's target included;
# desktop_starts starts the installed desktop app;
# uninstall_silently runs the uninstaller with /S and checks that every file and registry key
# the installer wrote is gone.
# shellcheck shell=bash

uninstall_key='HKCU\Software\Microsoft\Windows\CurrentVersion\Uninstall\MCP Companion'

# Every file of the prefix's drive C: outside Windows' own folders and the temp folder.
files_of_prefix() {
  (cd "$WINEPREFIX/drive_c" && find . -path ./windows -prune -o -path '*/Temp' -prune -o \
    -path ./mcpc -prune -o -type f -print | sort)
}

# Every registry key of the current user, from Wine's user.reg once the wineserver has saved it.
keys_of_user() {
  wineserver -w
  sed -n 's/^\[\(.*\)\] [0-9]*$/\1/p' "$WINEPREFIX/user.reg" | sort
}

install_silently() {
  files_of_prefix >"$work/files.before"
  keys_of_user >"$work/keys.before"
  local start
  start=$(date +%s)
  win "$installer" /S || fail "the installer exited with $?"
  wineserver -w
  echo "installed in $(($(date +%s) - start)) s"
  local localappdata
  localappdata=$(win cmd.exe /d /c echo %LOCALAPPDATA% | tr -d '\r')
  inst_win="$localappdata\\Programs\\MCP Companion"
  inst_dir=$(win winepath -u "$inst_win" | tr -d '\r')
  inst_dir=${inst_dir%/}
  files_of_prefix >"$work/files.installed"
  keys_of_user >"$work/keys.installed"
  comm -13 "$work/files.before" "$work/files.installed" >"$work/files.new"
  comm -13 "$work/keys.before" "$work/keys.installed" >"$work/keys.new"
  [ -x "$inst_dir/mcp-companion.exe" ] && [ -f "$inst_dir/uninstall.exe" ] ||
    fail "no mcp-companion.exe and uninstall.exe in $inst_win: $(cat "$work/files.new")"
  local lnk
  lnk=$(grep '/Start Menu/Programs/MCP Companion.lnk$' "$work/files.new") ||
    fail "no Start-menu entry among the installed files: $(cat "$work/files.new")"
  shortcut_checks "$WINEPREFIX/drive_c/$lnk"
  local entry
  entry=$(win reg query "$uninstall_key" | tr -d '\r') || fail "no uninstall entry $uninstall_key"
  grep -q 'QuietUninstallString.*uninstall.exe" /S' <<<"$entry" || fail "uninstall entry: $entry"
  # Per user: nothing under HKLM, nothing in Program Files.
  ! grep -qi 'Program Files' "$work/files.new" || fail "files in Program Files: $(cat "$work/files.new")"
  ok "the installer ($(basename "$installer"), /S, no administrator) puts $(wc -l <"$work/files.new") files under %LOCALAPPDATA%\\Programs\\MCP Companion and the Start menu ($desktop) and the uninstall entry under HKCU"
}

# What the Start-menu entry starts: with the desktop app the installed
# mcp-companion-desktop.exe, with WebView2Loader.dll beside it (the exe imports it); without,
# cmd.exe /k running the installed CLI's `status`. Sets $desktop to say which.
shortcut_checks() {
  local target args
  { read -r target && read -r args; } < <(python3 "$here/lnk_target.py" "$1" | tr -d '\r') ||
    fail "cannot read the Start-menu entry $1"
  local want_target="$inst_win\\mcp-companion-desktop.exe" want_args=""
  if [ -z "$with_desktop" ]; then
    want_target='C:\windows\system32\cmd.exe'
    want_args="/k \"$inst_win\\mcp-companion.exe\" status"
  fi
  [ "${target,,}" = "${want_target,,}" ] && [ "$args" = "$want_args" ] ||
    fail "the Start-menu entry starts '$target' '$args', not '$want_target' '$want_args'"
  desktop="without the desktop app: the Start-menu entry runs cmd.exe /k mcp-companion.exe status"
  [ -n "$with_desktop" ] || return 0
  desktop_exe=$(win winepath -u "$target" | tr -d '\r')
  [ -f "$desktop_exe" ] || fail "the Start-menu entry's target $target is not installed"
  [ -f "$(dirname "$desktop_exe")/WebView2Loader.dll" ] || fail "no WebView2Loader.dll beside $target"
  local imports
  imports=$(x86_64-w64-mingw32-objdump -p "$desktop_exe" | sed -n 's/^\s*DLL Name: //p')
  grep -qix 'WebView2Loader.dll' <<<"$imports" ||
    fail "mcp-companion-desktop.exe does not import WebView2Loader.dll: $imports"
  desktop="with the desktop app: the Start-menu entry starts the installed mcp-companion-desktop.exe, WebView2Loader.dll beside it"
}

# The installed desktop app started as the Start-menu entry starts it, in this headless prefix
# (no display, no WebView2 runtime): Windows' loader must resolve every DLL and function it
# imports and its own code must run up to creating its window, which fails here (without
# WebView2Loader.dll beside it, Wine's loader refuses it: exit 53 in 2 s). Run before the
# test's config exists, so the app starts with none of its servers; then every Wine process is
# ended (tauri's failed setup leaves the process hanging).
desktop_starts() {
  local pid
  # From $work: Windows' loader also searches the current folder, which must not hold the DLLs.
  (cd "$work" && exec wine64 "$desktop_exe") >"$work/desktop.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 240); do
    grep -q 'Failed to setup app' "$work/desktop.log" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  wineserver -k 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  grep -q 'Failed to setup app: runtime error: failed to create window' "$work/desktop.log" ||
    fail "the installed desktop app did not run up to its window: $(tail -c 2000 "$work/desktop.log")"
  ok "the installed mcp-companion-desktop.exe starts under Wine: its DLLs load (WebView2Loader.dll from beside it) and it runs up to creating its window, which this headless prefix cannot (no display; Wine has no WebView2 runtime either)"
}

uninstall_silently() {
  # The test-only ProcessPrng stand-in is not the installer's to remove.
  rm -f "$inst_dir/bcryptprimitives.dll"
  local start
  start=$(date +%s)
  win "$inst_win\\uninstall.exe" /S || fail "the uninstaller exited with $?"
  # The uninstaller runs on from a copy in %TEMP%; wait for every Wine process to end.
  wineserver -w
  echo "uninstalled in $(($(date +%s) - start)) s"
  local left
  left=$(while read -r f; do if [ -e "$WINEPREFIX/drive_c/$f" ]; then echo "$f"; fi; done <"$work/files.new")
  [ -z "$left" ] || fail "the uninstall left files: $left"
  local named=(mcp-companion.exe uninstall.exe "MCP Companion.lnk") f
  [ -z "$with_desktop" ] || named+=(mcp-companion-desktop.exe WebView2Loader.dll)
  for f in "${named[@]}"; do
    grep -qF "/$f" "$work/files.new" || fail "$f is not among the files the installer wrote"
  done
  [ ! -e "$inst_dir" ] || fail "the uninstall left the folder $inst_win: $(ls -A "$inst_dir")"
  win reg query "$uninstall_key" >/dev/null 2>&1 && fail "the uninstall left the key $uninstall_key"
  win reg query 'HKCU\Software\Microsoft\Windows\CurrentVersion\Run' /v 'MCP Companion' >/dev/null 2>&1 &&
    fail "the uninstall left the start-at-login Run value"
  keys_of_user >"$work/keys.after"
  left=$(comm -12 "$work/keys.new" "$work/keys.after" | grep -vi 'Credential Manager' || true)
  [ -z "$left" ] || fail "the uninstall left registry keys the installer wrote: $left"
  left=$(comm -13 "$work/keys.before" "$work/keys.after" | grep -i 'mcp' || true)
  [ -z "$left" ] || fail "registry keys naming MCP are left: $left"
  ok "the uninstaller (/S) removes all $(wc -l <"$work/files.new") installed files (${named[*]} among them), the folder and the uninstall key; no key naming MCP is left in HKCU"
}
