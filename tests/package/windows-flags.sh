# The rustc flags of every x86_64-pc-windows-gnu unit the tests build (sourced by
# tests/windows.sh and tests/package/nsis.sh, so their builds share one set of artifacts):
# - no debug info (`-C debuginfo=0 -C strip=debuginfo`): the Wine checks need no line numbers,
#   and without it the debug binaries are several times smaller, so they link, pack (makensis)
#   and install faster;
# - warnings as errors (`-D warnings`) in the workspace's own crates (cargo caps the lints of
#   dependencies), as the native and macOS steps have them through clippy.
# Cargo applies target flags to target units only: build scripts and proc macros stay the ones
# the native build made. An outer RUSTFLAGS replaces them (cargo's precedence).
# shellcheck shell=bash
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUSTFLAGS=${CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUSTFLAGS:--C debuginfo=0 -C strip=debuginfo -D warnings}
