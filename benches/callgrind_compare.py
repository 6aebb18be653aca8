"""Per-row comparison of benches/callgrind.py output: instructions per request, median [min–max]
of each build's phases, and each build's median over the first build's.

  python3 benches/callgrind_compare.py LABEL_A=A.jsonl LABEL_B=B.jsonl [LABEL_C=C.jsonl ...]
"""
import json, statistics as st, sys

ROW = {("companion", "1"): "companion, socket, fast path",
       ("companion", "0"): "companion, socket, rmcp session path (fast path off)",
       ("companion-via-bridge", "1"): "companion, client via `bridge`",
       ("bridge", "1"): "`bridge` process"}
builds = []
for arg in sys.argv[1:]:
    label, path = arg.split("=", 1)
    rows = {}
    for line in open(path):
        r = json.loads(line)
        key = (r["measure"], r["fast"], r["kind"], r.get("extra_tools", 0))
        rows.setdefault(key, []).append(r["ir_per"])
    builds.append((label, rows))
keys = [k for k in builds[0][1] if all(k in b for _, b in builds)]
head = " | ".join(f"{l} Ir/request median [min–max] (phases)" for l, _ in builds)
ratios = " | ".join(f"{l}/{builds[0][0]}" for l, _ in builds[1:])
print(f"| row | request | {head} | {ratios} |")
print("|---|---|" + "---|" * (len(builds) * 2 - 1))
for k in keys:
    meas, fast, kind, extra = k
    req = kind + (f" (test server + {extra} generated tools; first page)" if extra else "")
    cells, base = [], st.median(builds[0][1][k])
    for _, rows in builds:
        v = rows[k]
        cells.append(f"{st.median(v):,.0f} [{min(v):,.0f}–{max(v):,.0f}] ({len(v)})")
    rs = [f"{st.median(rows[k]) / base:.3f}" for _, rows in builds[1:]]
    print(f"| {ROW.get((meas, fast), meas)} | {req} | " + " | ".join(cells + rs) + " |")
