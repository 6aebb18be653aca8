#!/usr/bin/env python3
"""A scripted MCP agent on the official Python SDK (PyPI `mcp`, 1.x or 2.x), for integration tests.

Usage: agent.py [ACTIONS] [--mode legacy|auto] [--timeout S] -- COMMAND [ARGS...]

Spawns COMMAND with the SDK's stdio client and NO explicit environment, so the SDK passes its
default minimal one (PATH, HOME, ...), as MCP clients do. Then runs the actions in this order:
  --list                       every tool name (follows nextCursor)
  --call NAME JSON_ARGS        tools/call (repeatable); each result as MCP JSON
  --toggle-and-wait NAME SECS  call NAME, then wait up to SECS for notifications/tools/list_changed
Modes: legacy (default) = ClientSession + initialize (SDK 1.x and 2.x); auto = SDK 2.x
`mcp.Client(..., mode="auto")`, which probes `server/discover` before falling back to initialize.

Prints ONE JSON object on stdout: sdk, mode, negotiated_via, protocolVersion, tools, calls,
list_changed_count, ... Exit 0; on any exception the object has an "error" field and exit is 2.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from datetime import timedelta
from importlib.metadata import version as pkg_version

import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

SDK = pkg_version("mcp")
SDK_MAJOR = int(SDK.split(".")[0])
LIST_CHANGED = "notifications/tools/list_changed"


def dump(obj):
    """A pydantic model as its wire JSON (camelCase aliases)."""
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", by_alias=True, exclude_none=True)
    return obj


def field(obj, camel):
    """`obj.camelCase` on SDK 1.x, `obj.snake_case` on SDK 2.x."""
    snake = "".join("_" + c.lower() if c.isupper() else c for c in camel)
    return getattr(obj, camel, None) if hasattr(obj, camel) else getattr(obj, snake, None)


class Notifications:
    """Message handler that counts tools/list_changed notifications (SDK 1.x and 2.x shapes)."""

    def __init__(self):
        self.list_changed = 0
        self.methods = []

    async def __call__(self, message):
        msg = getattr(message, "root", message)  # SDK 1.x wraps notifications in a RootModel
        method = getattr(msg, "method", None)
        if method is None:
            return
        self.methods.append(method)
        if method == LIST_CHANGED:
            self.list_changed += 1


async def all_tool_names(session):
    names, cursor = [], None
    while True:
        if cursor:
            res = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
        else:
            res = await session.list_tools()
        names.extend(t.name for t in res.tools)
        cursor = field(res, "nextCursor")
        if not cursor:
            return names


async def call(session, name, args, timeout):
    t = timeout if SDK_MAJOR >= 2 else timedelta(seconds=timeout)
    return dump(await session.call_tool(name, args, read_timeout_seconds=t))


async def run_actions(session, a, notes, out):
    if a.list:
        out["tools"] = await all_tool_names(session)
    if a.call:
        out["calls"] = []
        for name, args in a.call:
            out["calls"].append({"name": name, "result": await call(session, name, json.loads(args), a.timeout)})
    if a.toggle_and_wait:
        name, seconds = a.toggle_and_wait
        before = notes.list_changed
        out["toggle_result"] = await call(session, name, {}, a.timeout)
        deadline = time.monotonic() + float(seconds)
        while notes.list_changed == before and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        out["list_changed_count"] = notes.list_changed - before
    out["notifications"] = notes.methods


async def main_async(a) -> int:
    out: dict = {"sdk": SDK, "mode": a.mode}
    notes = Notifications()
    try:
        params = StdioServerParameters(command=a.command[0], args=a.command[1:])  # env=None: SDK default env
        async with stdio_client(params) as streams:
            read, write = streams[0], streams[1]
            if a.mode == "legacy":
                async with ClientSession(read, write, message_handler=notes) as session:
                    init = await session.initialize()
                    out["negotiated_via"] = "initialize"
                    out["protocolVersion"] = field(init, "protocolVersion")
                    out["serverInfo"] = dump(field(init, "serverInfo"))
                    await run_actions(session, a, notes, out)
            else:
                if SDK_MAJOR < 2:
                    raise RuntimeError("--mode auto needs mcp >= 2")
                from mcp import Client

                @contextlib.asynccontextmanager
                async def transport():
                    yield (read, write)

                async with Client(
                    transport(), mode=a.mode, read_timeout_seconds=a.timeout, message_handler=notes
                ) as client:
                    s = client.session
                    out["negotiated_via"] = "server/discover" if s.discover_result else "initialize"
                    out["protocolVersion"] = s.protocol_version
                    out["serverInfo"] = dump(s.server_info)
                    await run_actions(s, a, notes, out)
    except BaseException as e:  # noqa: BLE001 - every failure is reported as JSON
        inner = e
        while isinstance(inner, BaseExceptionGroup) and len(inner.exceptions) == 1:
            inner = inner.exceptions[0]
        err = {"type": type(inner).__name__, "message": str(inner)}
        if hasattr(inner, "error"):
            err["jsonrpc_error"] = dump(inner.error)
        out["error"] = err
        print(json.dumps(out))
        return 2
    print(json.dumps(out))
    return 0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--list", action="store_true")
    p.add_argument("--call", nargs=2, action="append", metavar=("NAME", "JSON_ARGS"))
    p.add_argument("--toggle-and-wait", nargs=2, metavar=("NAME", "SECONDS"))
    p.add_argument("--mode", choices=["legacy", "auto"], default="legacy")
    p.add_argument("--timeout", type=float, default=30.0, help="per-request read timeout")
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    if a.command and a.command[0] == "--":
        a.command = a.command[1:]
    if not a.command:
        p.error("give the command to spawn after --")
    sys.exit(asyncio.run(main_async(a)))


if __name__ == "__main__":
    main()
