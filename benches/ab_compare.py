"""Per-row comparison of benches/ab.sh runs: python3 benches/ab_compare.py LABEL_A LABEL_B."""
import glob, os, re, statistics as st, sys
la, lb = sys.argv[1], sys.argv[2]
D = os.environ.get("AB_DIR", "/tmp/ab")
def rows(path):
    out = {}
    for line in open(path):
        if not line.startswith('| ') or line.startswith('| #') : continue
        c = [x.strip() for x in line.strip().strip('|').split('|')]
        if len(c) < 6: continue
        key = (c[0], c[1])
        num = lambda s: (float(m.group().replace(' ', '')) if (m := re.search(r'-?\d[\d ]*\.?\d*', s)) else None)
        out[key] = dict(ours=num(c[3]), base=num(c[2]), ratio=num(c[4]))
    return out
runs = {l: [rows(p) for p in sorted(glob.glob(f'{D}/{l}-*.md'))] for l in (la, lb)}
keys = [k for k in runs[la][0] if all(k in r for l in runs for r in runs[l])]
print(f"| # | row | {la} companion median [min–max] | {lb} companion median [min–max] | {lb}/{la} | {la} ratio-to-baseline | {lb} ratio-to-baseline |")
print("|---|---|---|---|---|---|---|")
for k in keys:
    def s(l, f):
        v = [r[k][f] for r in runs[l] if r[k][f] is not None]
        return v
    a, b = s(la, 'ours'), s(lb, 'ours')
    if not a or not b: continue
    ra, rb = s(la, 'ratio'), s(lb, 'ratio')
    fmt = lambda v: f"{st.median(v):.4g} [{min(v):.4g}–{max(v):.4g}]"
    rr = f"{st.median(b)/st.median(a):.2f}" if st.median(a) else ""
    print(f"| {k[0]} | {k[1][:70]} | {fmt(a)} | {fmt(b)} | {rr} | {fmt(ra) if ra else ''} | {fmt(rb) if rb else ''} |")
