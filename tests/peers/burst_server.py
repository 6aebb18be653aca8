#!/usr/bin/env python3
"""A stdio MCP server (stdlib only) that sends bursts of notifications back to back, then its
result, with no pause in between: what a busy server does when it reports quickly.

Tools:
  progress {n}  n `notifications/progress` for the call's progressToken (progress 1..n), then
                the result
  flood {n}     n `notifications/message` (level info, logger "flood", data "line <k> " and
                200 bytes of padding, k = 0..n-1), then the result
  echo {message}

Its prompt `flood` {n} and its resource `burst://flood` (n = 2000) send the same flood before
their answer.
"""
import json
import sys

TOOLS = [
    {"name": n, "description": n, "inputSchema": {"type": "object"}}
    for n in ("progress", "flood", "echo")
]
PAD = "x" * 200
out = sys.stdout
READ_FLOOD = 2000


def flood(n):
    for k in range(n):
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "info", "logger": "flood", "data": f"line {k} {PAD}"}})


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
        result = {"protocolVersion": "2025-06-18",
                  "capabilities": {"tools": {}, "logging": {}, "prompts": {}, "resources": {}},
                  "serverInfo": {"name": "burst", "version": "0"}}
    elif method == "prompts/list":
        result = {"prompts": [{"name": "flood", "arguments": [{"name": "n"}]}]}
    elif method == "resources/list":
        result = {"resources": [{"uri": "burst://flood", "name": "flood"}]}
    elif method == "resources/templates/list":
        result = {"resourceTemplates": []}
    elif method == "prompts/get":
        n = int((params.get("arguments") or {}).get("n", 0))
        flood(n)
        result = {"messages": [{"role": "user", "content": {"type": "text", "text": f"flood: {n}"}}]}
    elif method == "resources/read":
        flood(READ_FLOOD)
        result = {"contents": [{"uri": params.get("uri"), "text": f"flood: {READ_FLOOD}"}]}
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
            flood(n)
        result = {"content": [{"type": "text", "text": f"{name}: {n or args.get('message', '')}"}]}
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": str(method)}})
        out.flush()
        continue
    send({"jsonrpc": "2.0", "id": mid, "result": result})
    out.flush()
