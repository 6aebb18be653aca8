#!/usr/bin/env bash
# Two companion builds compared in one session: the same bench executable (`cargo bench --no-run
# --bench proxy`) run against binary A, then B, then A, ... (MCP_COMPANION_BIN), so background
# load hits both alike. Tables go to $AB_DIR (default /tmp/ab) as LABEL-N.md; then
#   python3 benches/ab_compare.py LABEL_A LABEL_B   prints per row median [min–max] of each.
#   benches/ab.sh BENCH_EXE ROUNDS LABEL_A BIN_A LABEL_B BIN_B [bench args, e.g. --quick]
set -u
exe=$1 rounds=$2 la=$3 a=$4 lb=$5 b=$6; shift 6
AB_DIR=${AB_DIR:-/tmp/ab}
mkdir -p "$AB_DIR"
export MCP_PEERS_DIR=${MCP_PEERS_DIR:-$HOME/.cache/mcp-companion/peers}
for i in $(seq 1 "$rounds"); do
  for pair in "$la:$a" "$lb:$b"; do
    l=${pair%%:*} bin=${pair#*:}
    echo "== $l run $i $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    MCP_COMPANION_BIN=$bin "$exe" --bench "$@" > "$AB_DIR/$l-$i.md" 2>"$AB_DIR/$l-$i.err"
    echo "   rc=$? $(date -u +%T)" >&2
  done
done
