; The Windows installer: a per-user install (no administrator) of the command-line tool
; mcp-companion.exe and, when built with it, the desktop app beside it, with a Start-menu entry
; and an uninstaller listed in "Installed apps". Built on any OS with NSIS 3 (makensis):
;
;   makensis -DVERSION=0.1.0 -DCLI=path/mcp-companion.exe -DICON=icons/icon.ico
;            [-DDESKTOP=path/mcp-companion-desktop.exe -DWEBVIEW2LOADER=path/WebView2Loader.dll]
;            -DOUTFILE=out/mcp-companion_0.1.0_x64-setup.exe installer.nsi
;
; Installs into %LOCALAPPDATA%\Programs\MCP Companion; the uninstall entry is under
; HKCU\Software\Microsoft\Windows\CurrentVersion\Uninstall\MCP Companion. /S installs or
; uninstalls silently. The uninstaller removes exactly what the installer wrote and leaves the
; person's config (%APPDATA%\mcp-companion) and keychain entries, as the .deb's purge does.

Unicode true
; A 64-bit installer for a 64-bit app (and Wine's wine64 runs no 32-bit program).
Target amd64-unicode
; The release default; the test passes -DCOMPRESSOR=zlib for its large debug binaries (lzma
; took minutes for them on 2 busy cores).
!ifndef COMPRESSOR
  !define COMPRESSOR "/SOLID lzma"
!endif
SetCompressor ${COMPRESSOR}

!ifndef VERSION | CLI | ICON | OUTFILE
  !error "define VERSION, CLI, ICON and OUTFILE (and DESKTOP for the full installer)"
!endif

!define PRODUCT "MCP Companion"
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\${PRODUCT}"

Name "${PRODUCT}"
OutFile "${OUTFILE}"
Icon "${ICON}"
UninstallIcon "${ICON}"
RequestExecutionLevel user
InstallDir "$LOCALAPPDATA\Programs\${PRODUCT}"
ShowInstDetails show
ShowUninstDetails show
VIProductVersion "${VERSION}.0"
VIAddVersionKey "ProductName" "${PRODUCT}"
VIAddVersionKey "ProductVersion" "${VERSION}"
VIAddVersionKey "FileVersion" "${VERSION}"
VIAddVersionKey "FileDescription" "${PRODUCT} installer"
VIAddVersionKey "LegalCopyright" "MCP Companion contributors, MIT OR Apache-2.0"

Page directory
Page instfiles
UninstPage uninstConfirm
UninstPage instfiles

Section "Install"
  SetShellVarContext current
  SetOutPath "$INSTDIR"
  File "/oname=mcp-companion.exe" "${CLI}"
  File "/oname=mcp-companion.ico" "${ICON}"
!ifdef DESKTOP
  File "/oname=mcp-companion-desktop.exe" "${DESKTOP}"
  ; The GNU build loads the WebView2 loader from its own folder.
  File "/oname=WebView2Loader.dll" "${WEBVIEW2LOADER}"
  CreateShortCut "$SMPROGRAMS\${PRODUCT}.lnk" "$INSTDIR\mcp-companion-desktop.exe" "" "$INSTDIR\mcp-companion.ico"
!else
  ; Without the desktop app the Start-menu entry opens a console with the CLI's status.
  CreateShortCut "$SMPROGRAMS\${PRODUCT}.lnk" "$SYSDIR\cmd.exe" '/k "$INSTDIR\mcp-companion.exe" status' "$INSTDIR\mcp-companion.ico"
!endif
  WriteUninstaller "$INSTDIR\uninstall.exe"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayName" "${PRODUCT}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "Publisher" "MCP Companion contributors"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayIcon" "$INSTDIR\mcp-companion.ico"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegStr HKCU "${UNINSTALL_KEY}" "QuietUninstallString" '"$INSTDIR\uninstall.exe" /S'
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoRepair" 1
SectionEnd

Section "Uninstall"
  SetShellVarContext current
  Delete "$SMPROGRAMS\${PRODUCT}.lnk"
  Delete "$INSTDIR\mcp-companion.exe"
  Delete "$INSTDIR\mcp-companion-desktop.exe"
  Delete "$INSTDIR\WebView2Loader.dll"
  Delete "$INSTDIR\mcp-companion.ico"
  Delete "$INSTDIR\uninstall.exe"
  ; Not /r: a file the installer did not write keeps the folder, and the person's file with it.
  RMDir "$INSTDIR"
  DeleteRegKey HKCU "${UNINSTALL_KEY}"
  ; What `mcp-companion start-at-login on` wrote.
  DeleteRegValue HKCU "Software\Microsoft\Windows\CurrentVersion\Run" "MCP Companion"
SectionEnd
