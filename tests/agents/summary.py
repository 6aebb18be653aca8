#!/usr/bin/env python3
"""Summarises a tests/agents/run.sh run directory as a Markdown table.

Per agent × case: pass (the final answer carries the tool result `<marker>-demo`), the
companion's tools the model was offered (first request / any request), the longest tool name
sent to the model and whether every one is ≤ 64 characters, seconds from the agent's start to
its first model request that offers a companion tool, and for case c whether the slow
server's tools reached the model later (the agent re-read the list on list_changed).
"""

import json
import os
import sys

OURS = ("mcp_demo_", "mcp_longname", "mcp_slow_")  # Gemini cuts long names in the middle


def ours(name):
    return any(tag in name for tag in OURS)


def main(run):
    rows = []
    for case_dir in sorted(os.listdir(run)):
        d = os.path.join(run, case_dir)
        meta_path = os.path.join(d, "meta.json")
        if not os.path.exists(meta_path):
            continue
        meta = json.load(open(meta_path))
        reqs = []
        if os.path.exists(os.path.join(d, "model.jsonl")):
            reqs = [json.loads(l) for l in open(os.path.join(d, "model.jsonl")) if l.strip()]
        out = open(os.path.join(d, "agent.out"), errors="replace").read()
        marker = meta["marker"]
        passed = f"{marker}-demo" in out
        with_tools = [r for r in reqs if any(ours(t) for t in r["tools"])]
        all_names = sorted({t for r in reqs for t in r["tools"]})
        our_names = sorted({t for t in all_names if ours(t)})
        first = [t for t in with_tools[0]["tools"] if ours(t)] if with_tools else []
        # A Codex namespace and its function are separate names for the model API.
        parts = sorted({p for n in all_names for p in n.split("/")})
        longest = max(parts, key=len) if parts else ""
        over = [n for n in parts if len(n) > 64]
        ttl = f"{with_tools[0]['t'] - meta['start']:.1f}" if with_tools else "—"
        slow = ""
        if meta["case"] == "c":
            first_slow = any("mcp_slow_" in t for t in first)
            later_slow = any("mcp_slow_" in t for r in with_tools[1:] for t in r["tools"])
            called = f"{marker}-slow" in out
            slow = ("in first list" if first_slow else
                    "later (list_changed)" if later_slow else "never") + (", called" if called else "")
        rows.append((meta["agent"], meta["case"], "pass" if passed else "FAIL", meta["rc"],
                     f"{len(first)}/{len(our_names)}", len(all_names),
                     f"{len(longest)} `{longest}`" if longest else "—",
                     "yes" if not over else "NO: " + ", ".join(over), ttl, slow))
    print("| agent | case | result | exit | companion tools, first list / all | names sent | longest name | all ≤ 64 | s to first list | slow server (c) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
