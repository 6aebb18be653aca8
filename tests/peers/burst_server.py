#!/usr/bin/env python3
"""A stdio MCP server (stdlib only) that sends bursts of notifications back to back, then its
result, with no pause in between: what a busy server does when it reports quickly.

Tools:
  progress {n}  n `notifications/progress` for the call's progressToken (progress 1..n), then
                the result
  flood {n}     n `notifications/message` (level info, logger "flood", data "line <k> " and
                200 bytes of padding, k = 0..n-1), then the result
  echo {message}
"""
import json
import sys

TOOLS = [
    {"name": n, "description": n, "inputSchema": {"type": "object"}}
    for n in ("progress", "flood", "echo")
]
PAD = "x" * 200
out = sys.stdout


def send(message):
    out.write(json.dumps(message) + "\n")


for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if "id" not in msg:
        continue
    method, mid, params = msg.get("method"), msg["id"], msg.get("params") or {}
    if method == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}, "logging": {}},
                  "serverInfo": {"name": "burst", "version": "0"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "logging/setLevel":
        result = {}
    elif method == "tools/call":
        name, args = params.get("name"), params.get("arguments") or {}
        n = int(args.get("n", 0))
        if name == "progress":
            token = (params.get("_meta") or {}).get("progressToken")
            for k in range(n):
                if token is not None:
                    send({"jsonrpc": "2.0", "method": "notifications/progress",
                          "params": {"progressToken": token, "progress": k + 1, "total": n}})
        elif name == "flood":
            for k in range(n):
                send({"jsonrpc": "2.0", "method": "notifications/message",
                      "params": {"level": "info", "logger": "flood", "data": f"line {k} {PAD}"}})
        result = {"content": [{"type": "text", "text": f"{name}: {n or args.get('message', '')}"}]}
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": str(method)}})
        out.flush()
        continue
    send({"jsonrpc": "2.0", "id": mid, "result": result})
    out.flush()
