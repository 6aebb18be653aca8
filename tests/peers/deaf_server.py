#!/usr/bin/env python3
"""A stdio MCP server (stdlib only) that stops reading its input while a tool runs.

Usage: deaf_server.py MARKER_DIR SLEEP_SECONDS

Tools: `slow` sleeps SLEEP_SECONDS without reading stdin (it touches MARKER_DIR/asleep when it
starts and MARKER_DIR/awake when it is done, before it reads again), then answers; `echo`
answers its `message`. While `slow` sleeps the pipe to its stdin fills, and every write to it
blocks until the server wakes.
"""
import json
import os
import sys
import time

MARKERS, SLEEP = sys.argv[1], float(sys.argv[2])

TOOLS = [
    {"name": "slow", "description": "sleeps without reading its input", "inputSchema": {"type": "object"}},
    {"name": "echo", "description": "echo", "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}}},
]


def touch(name):
    with open(os.path.join(MARKERS, name), "w"):
        pass


def answer(mid, result):
    print(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}), flush=True)


while True:
    line = sys.stdin.buffer.readline()
    if not line:
        break
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if "id" not in msg:
        continue
    method, mid = msg.get("method"), msg["id"]
    if method == "initialize":
        answer(mid, {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "deaf", "version": "0"}})
    elif method == "tools/list":
        answer(mid, {"tools": TOOLS})
    elif method == "tools/call" and msg["params"]["name"] == "slow":
        touch("asleep")
        time.sleep(SLEEP)
        touch("awake")
        answer(mid, {"content": [{"type": "text", "text": "slept"}]})
    elif method == "tools/call":
        text = (msg["params"].get("arguments") or {}).get("message", "")
        answer(mid, {"content": [{"type": "text", "text": text[:20]}]})
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": method}}), flush=True)
