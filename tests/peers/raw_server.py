#!/usr/bin/env python3
"""A deliberately non-conformant stdio MCP server (stdlib only) for robustness tests.

Its tools/list contains one good tool (`echo`), one tool without `inputSchema` (`bare`), one whose
`inputSchema` has no `type` (`typeless`), one whose `inputSchema` is of type string (`stringy`)
and one entry that is not a tool at all. Spec-valid clients reject the whole list; the companion
must keep the usable tools and serve a list they accept.

  --refuse-initialize   answer `initialize` with JSON-RPC error -32602 (unsupported protocol
                        version, as servers pinned to one version do), then exit when stdin closes
  --declare-nothing     declare no capabilities at all, yet serve tools/list (a sloppy server)
"""
import json
import sys

REFUSE = "--refuse-initialize" in sys.argv[1:]
CAPABILITIES = {} if "--declare-nothing" in sys.argv[1:] else {"tools": {}}

TOOLS = [
    {"name": "echo", "description": "echo", "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}}},
    {"name": "bare", "description": "no inputSchema at all"},
    {"name": "typeless", "description": "inputSchema without type", "inputSchema": {"properties": {"message": {"type": "string"}}}},
    {"name": "stringy", "description": "inputSchema of type string", "inputSchema": {"type": "string"}},
    {"description": "no name"},
]

for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if "id" not in msg:
        continue
    method, mid = msg.get("method"), msg["id"]
    if method == "initialize" and REFUSE:
        asked = msg.get("params", {}).get("protocolVersion")
        error = {"code": -32602, "message": f"Unsupported protocol version: {asked}", "data": {"supported": ["2099-01-01"]}}
        print(json.dumps({"jsonrpc": "2.0", "id": mid, "error": error}), flush=True)
        continue
    if method == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": CAPABILITIES, "serverInfo": {"name": "raw", "version": "0"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        args = msg.get("params", {}).get("arguments") or {}
        result = {"content": [{"type": "text", "text": f"{msg['params']['name']}: {args.get('message', '')}"}]}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": method}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}), flush=True)
