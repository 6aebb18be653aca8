#!/usr/bin/env python3
"""A scripted model on 127.0.0.1 speaking four model APIs, for driving real agents.

APIs (chosen by the request path):
  POST …/v1/messages                 Anthropic Messages (Claude Code), streaming or not
  POST …/v1/messages/count_tokens    Anthropic token count
  POST …/responses                   OpenAI Responses (Codex), streaming
  POST …/chat/completions            OpenAI chat completions (opencode, nanobot), streaming or not
  POST …/models/M:generateContent, :streamGenerateContent, :countTokens   Gemini API (Gemini CLI)

The script, the same for every API: the marker is the first `MARK-…` word in the request.
  - no tool result yet, a tool named `…mcp_demo_echo` offered: call it with `<marker>-demo`
    (with --hold-first S, after waiting S seconds, so a slow server can arrive meanwhile);
  - one result, a tool named `…mcp_slow_echo` offered and not yet called: call it with
    `<marker>-slow`;
  - otherwise: the text `DONE <every tool result, in order>`, or `NO-ECHO-TOOL` when no
    tool was offered or called.

Every request is appended to --log as one JSON line: time, API, path, offered tool names.
The chosen port is written to --port-file. Binds 127.0.0.1 only.
"""

import argparse
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MARK = re.compile(r"MARK-[A-Za-z0-9]+")
LOCK = threading.Lock()
ARGS = None


def text_of(value):
    """The text inside a tool result, whatever shape the API gives it."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return " ".join(text_of(v) for v in value)
    if isinstance(value, dict):
        for key in ("text", "output", "content", "result"):
            if key in value:
                return text_of(value[key])
        return json.dumps(value)
    return json.dumps(value)


def names_in(tools):
    """Every tool name in an API's `tools` array (function, namespace and Gemini shapes)."""
    out = []
    for tool in tools or []:
        if not isinstance(tool, dict):
            continue
        for decl in tool.get("functionDeclarations") or tool.get("function_declarations") or []:
            out.append(decl.get("name"))
        if isinstance(tool.get("function"), dict):
            out.append(tool["function"].get("name"))
        elif tool.get("name") and not tool.get("tools"):
            out.append(tool["name"])
        if isinstance(tool.get("tools"), list):
            # Codex groups an MCP server's tools in a Responses API namespace: the model sees
            # the namespace and each function's own name; recorded as `namespace/function`.
            prefix = tool.get("name", "")
            for inner in names_in(tool["tools"]):
                out.append(f"{prefix}/{inner}" if prefix and tool.get("type") == "namespace" else inner)
    return [n for n in out if n]


def view(api, body):
    """(offered tool names, tool results in order, names already called) of a request."""
    results, called = [], []
    if api == "anthropic":
        tools = names_in(body.get("tools"))
        for msg in body.get("messages", []):
            content = msg.get("content")
            for part in content if isinstance(content, list) else []:
                if part.get("type") == "tool_result":
                    results.append(text_of(part.get("content", "")))
                if part.get("type") == "tool_use":
                    called.append(part.get("name"))
    elif api == "responses":
        tools = names_in(body.get("tools"))
        for item in body.get("input", []) if isinstance(body.get("input"), list) else []:
            if item.get("type") == "function_call_output":
                results.append(text_of(item.get("output", "")))
            if item.get("type") == "function_call":
                called.append("/".join(p for p in (item.get("namespace"), item.get("name")) if p))
    elif api == "gemini":
        tools = names_in(body.get("tools"))
        for content in body.get("contents", []):
            for part in content.get("parts", []):
                if "functionResponse" in part:
                    results.append(text_of(part["functionResponse"].get("response", {})))
                if "functionCall" in part:
                    called.append(part["functionCall"].get("name"))
    else:
        tools = names_in(body.get("tools"))
        for msg in body.get("messages", []):
            if msg.get("role") == "tool":
                results.append(text_of(msg.get("content", "")))
            for call in msg.get("tool_calls") or []:
                called.append(call.get("function", {}).get("name"))
    return tools, results, called


HELD = set()


def decide(api, body):
    """The script: ("call", name, args, call id unique in the conversation) or ("text", text)."""
    raw = json.dumps(body)
    found = MARK.search(raw)
    marker = found.group(0) if found else "MARK-none"
    tools, results, called = view(api, body)
    demo = next((t for t in tools if t.endswith("mcp_demo_echo")), None)
    slow = next((t for t in tools if t.endswith("mcp_slow_echo")), None)
    if not results and demo:
        if ARGS.hold_first and marker not in HELD:
            HELD.add(marker)
            time.sleep(ARGS.hold_first)
        return ("call", demo, {"message": f"{marker}-demo"}, "call_1")
    if len(results) == 1 and slow and slow not in called:
        return ("call", slow, {"message": f"{marker}-slow"}, "call_2")
    if results:
        return ("text", "DONE " + " | ".join(results))
    return ("text", "NO-ECHO-TOOL")


def sse(events):
    return "".join(
        (f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n" for name, data in events
    )


def anthropic(body, act):
    if act[0] == "call":
        block = {"type": "tool_use", "id": "toolu_" + act[3], "name": act[1], "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(act[2])}
        stop = "tool_use"
        full = dict(block, input=act[2])
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": act[1]}
        stop = "end_turn"
        full = {"type": "text", "text": act[1]}
    usage = {"input_tokens": 1, "output_tokens": 1}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": body.get("model", "fake"),
               "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
    if not body.get("stream"):
        return "application/json", json.dumps(dict(message, content=[full], stop_reason=stop))
    return "text/event-stream", sse([
        ("message_start", {"type": "message_start", "message": message}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 1}}),
        ("message_stop", {"type": "message_stop"}),
    ])


def responses(body, act):
    if act[0] == "call":
        namespace, _, name = act[1].rpartition("/")
        item = {"type": "function_call", "id": "fc_" + act[3], "call_id": act[3], "name": name,
                "arguments": json.dumps(act[2]), "status": "completed"}
        if namespace:
            item["namespace"] = namespace
        events = []
    else:
        item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": act[1], "annotations": []}]}
        events = [("response.output_text.delta", {"type": "response.output_text.delta", "item_id": "msg_1",
                                                  "output_index": 0, "content_index": 0, "delta": act[1]})]
    usage = {"input_tokens": 1, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 2}
    resp = {"id": "resp_1", "object": "response", "status": "in_progress", "model": body.get("model"), "output": []}
    return "text/event-stream", sse(
        [("response.created", {"type": "response.created", "response": resp}),
         ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item})]
        + events
        + [("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
           ("response.completed", {"type": "response.completed",
                                   "response": dict(resp, status="completed", output=[item], usage=usage)})])


def gemini(body, act, stream):
    if act[0] == "call":
        part = {"functionCall": {"name": act[1], "args": act[2]}}
    else:
        part = {"text": act[1]}
    chunk = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
             "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
             "modelVersion": "fake"}
    if stream:
        return "text/event-stream", f"data: {json.dumps(chunk)}\r\n\r\n"
    return "application/json", json.dumps(chunk)


def chat(body, act):
    if act[0] == "call":
        message = {"role": "assistant", "content": None, "tool_calls": [{
            "index": 0, "id": act[3], "type": "function",
            "function": {"name": act[1], "arguments": json.dumps(act[2])}}]}
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": act[1]}
        finish = "stop"
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    if body.get("stream"):
        def chunk(delta, fin, extra=None):
            c = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "fake-model",
                 "choices": [{"index": 0, "delta": delta, "finish_reason": fin}]}
            return dict(c, **(extra or {}))
        return "text/event-stream", sse([(None, chunk(message, None)), (None, chunk({}, finish, {"usage": usage}))]) \
            + "data: [DONE]\n\n"
    return "application/json", json.dumps({
        "id": "c1", "object": "chat.completion", "created": 0, "model": "fake-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage})


def json_answer(body):
    """A JSON-mode side request (Gemini CLI's router or next-speaker check): a neutral object."""
    return {"next_speaker": "user", "reasoning": "scripted", "model_choice": "flash", "complexity": "simple"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.reply(200, "application/json", json.dumps({"data": [{"id": "fake-model", "object": "model"}]}))

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        if path.endswith("/messages/count_tokens"):
            api = "anthropic-count"
        elif path.endswith("/messages"):
            api = "anthropic"
        elif path.endswith("/responses"):
            api = "responses"
        elif ":countTokens" in path or ":streamGenerateContent" in path or ":generateContent" in path:
            api = "gemini"
        elif path.endswith("/chat/completions"):
            api = "chat"
        else:
            api = "unknown"
        tools, _, _ = view(api, body) if api not in ("unknown", "anthropic-count") else ([], [], [])
        with LOCK, open(ARGS.log, "a") as log:
            log.write(json.dumps({"t": time.time(), "api": api, "path": self.path, "tools": tools}) + "\n")
        if api == "anthropic-count":
            return self.reply(200, "application/json", json.dumps({"input_tokens": 1}))
        if api == "gemini" and ":countTokens" in path:
            return self.reply(200, "application/json", json.dumps({"totalTokens": 1}))
        if api == "unknown":
            return self.reply(404, "application/json", json.dumps({"error": {"message": f"no {self.path}"}}))
        if api == "gemini" and (body.get("generationConfig") or {}).get("responseMimeType") == "application/json":
            act = ("text", json.dumps(json_answer(body)))
        else:
            act = decide(api, body)
        if api == "anthropic":
            ctype, out = anthropic(body, act)
        elif api == "responses":
            ctype, out = responses(body, act)
        elif api == "gemini":
            ctype, out = gemini(body, act, ":streamGenerateContent" in path)
        else:
            ctype, out = chat(body, act)
        self.reply(200, ctype, out)

    def reply(self, status, ctype, text):
        data = text.encode()
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--hold-first", type=float, default=0.0)
    ARGS = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(ARGS.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.replace(ARGS.port_file + ".tmp", ARGS.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
