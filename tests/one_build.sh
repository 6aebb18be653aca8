#!/usr/bin/env bash
# One build for both binaries (issue #16 item 2): builds the desktop app, then the CLI alone, and
# checks that every unit the CLI build uses, besides its own `main.rs`, is one the desktop build
# used too (same artifact file, so same crate, features and profile), the core library
# included. Exit 1 otherwise, listing the units only the CLI build needs.
#
# The comparison is of artifact paths (cargo's hash of crate, features and profile), not of what
# was compiled, so a warm or shared target dir where both variants are cached cannot hide a
# difference. Today it fails (issue #16 item 2 is open): the desktop build resolves other
# features for shared crates (serde on bitflags, raw_value on serde_json, …).
#
# Opt-in (not part of tests/run.sh). Measured with a target dir warm for the core's tests only,
# at load 12-23 on 2 shared cores, with a trial feature-unification crate (not kept: some units
# still differed): the desktop debug build took 59 min 53 s, the CLI build after
# it 12 min 17 s. With both builds already done it costs two no-op cargo runs.
# Usage: tests/one_build.sh [--release]
# Needs the desktop packages (README "Desktop").
set -euo pipefail
cd "$(dirname "$0")/.."
profile=()
[ "${1:-}" = --release ] && profile=(--release)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cargo build --locked "${profile[@]}" -p mcp-companion-desktop --message-format=json-render-diagnostics >"$tmp/desktop.json"
cargo build --locked "${profile[@]}" -p mcp-companion --message-format=json-render-diagnostics >"$tmp/cli.json"
# Every unit of a build: its artifact files, or the output dir of a build script run.
python3 - "$tmp/desktop.json" "$tmp/cli.json" <<'PY'
import json, sys

def units(lines):
    for line in lines:
        m = json.loads(line)
        if m.get("reason") == "compiler-artifact":
            if m["target"]["kind"] == ["bin"] and m["target"]["name"] == "mcp-companion":
                continue  # the CLI binary itself: the desktop build does not link it
            yield m["target"]["name"], m["package_id"].rsplit("#", 1)[-1], tuple(sorted(m["filenames"])), m["fresh"]
        elif m.get("reason") == "build-script-executed":
            yield "build script run", m["package_id"].rsplit("#", 1)[-1], (m["out_dir"],), True

desktop = {files for _, _, files, _ in units(open(sys.argv[1]))}
cli = list(units(open(sys.argv[2])))
compiled = sum(1 for *_, fresh in cli if not fresh)
only = [(name, pkg) for name, pkg, files, _ in cli if files not in desktop]
print(f"CLI build after the desktop build: {len(cli)} units besides its main.rs, {compiled} compiled, "
      f"{len(only)} not shared with the desktop build")
for name, pkg in only[:40]:
    print(f"  {name} {pkg}")
sys.exit(1 if only else 0)
PY
