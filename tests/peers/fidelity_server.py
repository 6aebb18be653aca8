#!/usr/bin/env python3
"""A stdio MCP server (stdlib only) whose answers carry what a relay may lose on the way.

Its tools:

  urlerror   answers JSON-RPC error -32042 (URL Elicitation Required, MCP 2025-11-25) with
             data.elicitations[{mode: url, url, elicitationId}]
  meta       answers with the request's `_meta` as it arrived, as JSON text
  ask        sends sampling/createMessage (temperature 0.7, `_meta` {"srv/key": "v"}) and then
             elicitation/create (a schema with maximum 1000, `_meta` also with the
             progressToken "srv-tok"), and answers with the two
             requests' answers as they arrived, as JSON text
  future     answers with a content block of a type no revision has ("future_kind") and a
             top-level key no revision has ("extraTopLevel")
  secret     logs a notifications/message quoting $MY_API_TOKEN, then answers isError quoting it
  nums       answers with structuredContent holding numbers a typed relay changes: an integer
             of 30 digits, 0.1, 1.0, -0.0, 1e-7; and a top-level key no revision has
  prog       sends notifications/progress {progress 1, total 2} and {progress 1.5, total 2.0}
             for the call's progressToken, then answers
  args       answers with the call's `arguments` as they arrived, as JSON text
  subscribed answers with the params of the last resources/subscribe as they arrived, as JSON
             text

It declares `resources` with `subscribe` (no resources listed) and accepts any URI.

Its `initialize` result carries `instructions`.
"""
import json
import os
import sys

INSTRUCTIONS = "Fidelity server: call urlerror to see a URL elicitation."
TOOLS = [
    {"name": n, "description": n, "inputSchema": {"type": "object"}}
    for n in ("urlerror", "meta", "ask", "future", "secret", "subscribed", "nums", "args", "prog")
]
subscribed = [None]  # the params of the last resources/subscribe
pending = []  # messages read while waiting for an answer to our own request
next_id = [100]


def send(msg):
    print(json.dumps(msg), flush=True)


def read():
    if pending:
        return pending.pop(0)
    for line in sys.stdin:
        try:
            return json.loads(line)
        except ValueError:
            continue
    sys.exit(0)


def ask(method, params):
    """Sends a request to the client and returns its whole answer (result or error)."""
    next_id[0] += 1
    rid = f"srv-{next_id[0]}"
    send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    held = []
    while True:
        msg = read()
        if msg.get("id") == rid and "method" not in msg:
            pending.extend(held)
            return msg
        held.append(msg)


def call(name, params):
    if name == "urlerror":
        data = {"elicitations": [{"mode": "url", "elicitationId": "e-1",
                                  "url": "https://auth.example/authorize?state=abc",
                                  "message": "Sign in to continue"}]}
        return None, {"code": -32042, "message": "This request requires browser-based authorization.", "data": data}
    if name == "meta":
        return {"content": [{"type": "text", "text": json.dumps(params.get("_meta"))}]}, None
    if name == "ask":
        sampled = ask("sampling/createMessage", {
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": 10, "temperature": 0.7,
            "modelPreferences": {"costPriority": 0.3},
            "_meta": {"srv/key": "v"}})
        elicited = ask("elicitation/create", {
            "mode": "form", "message": "how many?",
            "requestedSchema": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 1000}}},
            "_meta": {"srv/key": "v", "progressToken": "srv-tok"}})
        text = json.dumps({"sampling": sampled, "elicitation": elicited})
        return {"content": [{"type": "text", "text": text}]}, None
    if name == "future":
        return {"content": [{"type": "future_kind", "payload": {"x": 1}},
                            {"type": "text", "text": "known"}],
                "extraTopLevel": {"kept": True}}, None
    if name == "prog":
        token = (params.get("_meta") or {}).get("progressToken")
        for progress, total in ((1, 2), (1.5, 2.0)):
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": progress, "total": total}})
        return {"content": [{"type": "text", "text": "done"}]}, None
    if name == "args":
        return {"content": [{"type": "text", "text": json.dumps(params.get("arguments"))}]}, None
    if name == "nums":
        return {"content": [{"type": "text", "text": "n"}],
                "structuredContent": {"big": 123456789012345678901234567890, "f": 0.1,
                                      "one": 1.0, "neg0": -0.0, "e": 1e-7},
                "extraTopLevel": {"kept": True}}, None
    if name == "subscribed":
        return {"content": [{"type": "text", "text": json.dumps(subscribed[0])}]}, None
    if name == "secret":
        token = os.environ.get("MY_API_TOKEN", "")
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "error", "logger": "fidelity", "data": f"log token {token}"}})
        return {"content": [{"type": "text", "text": f"bad token {token}"}], "isError": True}, None
    return None, {"code": -32602, "message": f"unknown tool {name}"}


while True:
    msg = read()
    if "id" not in msg or "method" not in msg:
        continue
    method, mid = msg["method"], msg["id"]
    result, error = None, None
    if method == "initialize":
        result = {"protocolVersion": "2025-11-25",
                  "capabilities": {"tools": {}, "logging": {},
                                   "resources": {"subscribe": True}},
                  "serverInfo": {"name": "fidelity", "version": "0"},
                  "instructions": INSTRUCTIONS}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        params = msg.get("params") or {}
        result, error = call(params.get("name"), params)
    elif method == "resources/list":
        result = {"resources": []}
    elif method == "resources/templates/list":
        result = {"resourceTemplates": []}
    elif method == "resources/subscribe":
        subscribed[0] = msg.get("params")
        result = {}
    elif method in ("ping", "logging/setLevel", "resources/unsubscribe"):
        result = {}
    else:
        error = {"code": -32601, "message": method}
    if error is not None:
        send({"jsonrpc": "2.0", "id": mid, "error": error})
    else:
        send({"jsonrpc": "2.0", "id": mid, "result": result})
