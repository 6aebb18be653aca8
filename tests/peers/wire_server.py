#!/usr/bin/env python3
"""A stdio MCP server (stdlib only) that tests the wire between the companion and a server.

Tools:
  strict          rejects (JSON-RPC -32602) a call whose `arguments` is missing or not an object,
                  as servers that validate their input schema do; else answers "ok"
  progress        {"seconds": s, "every": e}: reports progress every e seconds for s seconds
                  (when the call carries a progressToken), then answers "done";
                  {"forever": true} reports progress until cancelled and never answers
  same_id         before answering, sends the companion a `ping` request carrying the id of
                  this very call, and answers the call only once the ping's response came
                  ("ping answered")
  both            answers with both `result` and `error` (a malformed answer)
  elicit_big      asks the companion `elicitation/create` with a 200 KB message, then answers
                  with the action it got
  error_big       answers a JSON-RPC error with a 200 KB message

  --deep-tool     also list `deep`, whose inputSchema nests 300 levels deep (past serde_json's
                  recursion limit)
"""
import json
import sys
import time

OBJECT = {"type": "object", "properties": {}}
TOOLS = [
    {"name": "strict", "description": "arguments must be an object", "inputSchema": OBJECT},
    {"name": "progress", "description": "reports progress", "inputSchema": OBJECT},
    {"name": "same_id", "description": "asks with the call's own id", "inputSchema": OBJECT},
    {"name": "both", "description": "a malformed answer", "inputSchema": OBJECT},
    {"name": "elicit_big", "description": "asks with a long message", "inputSchema": OBJECT},
    {"name": "error_big", "description": "fails with a long message", "inputSchema": OBJECT},
]
BIG = "x" * 200_000
if "--deep-tool" in sys.argv[1:]:
    deep = {"type": "string"}
    for _ in range(300):
        deep = {"type": "array", "items": deep}
    TOOLS.append({"name": "deep", "description": "too deep", "inputSchema": {"type": "object", "properties": {"a": deep}}})


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text(mid, words):
    send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": words}]}})


# Calls waiting for the answer to the ping sent under their own id.
waiting_pings = set()
# Our elicitation request id → the call waiting for its answer.
waiting_elicits = {}

for line in sys.stdin:
    try:
        msg = json.loads(line)
    except (ValueError, RecursionError):
        continue
    if "id" not in msg:
        continue
    method, mid = msg.get("method"), msg["id"]
    if method is None:
        # A response to one of our requests.
        key = json.dumps(mid)
        if key in waiting_elicits:
            call = waiting_elicits.pop(key)
            text(call, "elicited: " + str(msg.get("result", {}).get("action")))
        elif key in waiting_pings:
            waiting_pings.discard(key)
            text(mid, "ping answered" if "result" in msg else "ping refused")
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": "2025-06-18",
              "capabilities": {"tools": {}}, "serverInfo": {"name": "wire", "version": "0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        params = msg.get("params", {})
        name, args = params.get("name"), params.get("arguments")
        if name == "strict":
            if not isinstance(args, dict):
                send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32602,
                      "message": "Invalid arguments: expected object, received " + ("undefined" if args is None else type(args).__name__)}})
            else:
                text(mid, "ok")
        elif name == "progress":
            token = params.get("_meta", {}).get("progressToken")
            forever = args.get("forever", False)
            seconds, every = args.get("seconds", 1), args.get("every", 0.2)
            start, n = time.monotonic(), 0
            while forever or time.monotonic() - start < seconds:
                time.sleep(every)
                n += 1
                if token is not None:
                    send({"jsonrpc": "2.0", "method": "notifications/progress",
                          "params": {"progressToken": token, "progress": n}})
            text(mid, "done")
        elif name == "same_id":
            waiting_pings.add(json.dumps(mid))
            send({"jsonrpc": "2.0", "id": mid, "method": "ping"})
        elif name == "elicit_big":
            asked = "elicit-" + json.dumps(mid)
            waiting_elicits[json.dumps(asked)] = mid
            send({"jsonrpc": "2.0", "id": asked, "method": "elicitation/create", "params": {
                "message": BIG, "requestedSchema": {"type": "object", "properties": {}}}})
        elif name == "error_big":
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32000, "message": BIG}})
        elif name == "both":
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "fine"}]},
                  "error": {"code": -32603, "message": "not fine"}})
        else:
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": "unknown tool"}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": method}})
