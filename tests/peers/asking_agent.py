#!/usr/bin/env python3
"""A scripted MCP agent on the official Python SDK (1.x or 2.x) that answers server requests, for
the companion's elicitation/sampling/roots tests.

Usage: asking_agent.py [OPTIONS] --call NAME JSON [--call ...] -- COMMAND [ARGS...]

Spawns COMMAND with the SDK's stdio client (default minimal environment), runs the calls in
order (or all at once with --together), then each --get-prompt NAME JSON and each --read URI
(their entries in "calls" are named "prompt:NAME" and "resource:URI"), and prints ONE JSON
object:
  {"sdk", "calls": [{"name", "result"}], "asked": [{"method", "message"?, "mode"?}], "error"?}

Callbacks (each one is installed only when its option is given, so the SDK declares only those
capabilities):
  --elicit JSON       answer elicitation/create with accept + this content (url mode: accept, no content)
  --elicit-action A   answer with action A (decline|cancel) instead
  --elicit-delay S    wait S seconds before answering
  --sample TEXT       answer sampling/createMessage with TEXT from model "test-model"
  --roots URI,...     answer roots/list with these URIs
  --notify-roots      send notifications/roots/list_changed after initialize
Modes: legacy (default) = ClientSession + initialize (SDK 1.x and 2.x), where the server's
requests arrive as requests; 2026-07-28 = SDK 2.x `mcp.Client(..., mode="2026-07-28")`, no
initialize, where they arrive in `InputRequiredResult`s that `Client.call_tool` answers with
the same callbacks and retries.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from datetime import timedelta
from importlib.metadata import version as pkg_version

import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

SDK = pkg_version("mcp")
SDK_MAJOR = int(SDK.split(".")[0])


def dump(obj):
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", by_alias=True, exclude_none=True)
    return obj


def callbacks(a, asked):
    kw = {}
    if a.elicit is not None or a.elicit_action:
        async def on_elicit(_context, params):
            d = dump(params)
            asked.append({"method": "elicitation/create", "message": d.get("message"), "mode": d.get("mode", "form")})
            if a.elicit_delay:
                await asyncio.sleep(a.elicit_delay)
            if a.elicit_action:
                return types.ElicitResult(action=a.elicit_action)
            if d.get("mode") == "url":
                return types.ElicitResult(action="accept")
            return types.ElicitResult(action="accept", content=json.loads(a.elicit))
        kw["elicitation_callback"] = on_elicit
    if a.sample is not None:
        async def on_sample(_context, params):
            asked.append({"method": "sampling/createMessage"})
            return types.CreateMessageResult(
                role="assistant", content=types.TextContent(type="text", text=a.sample), model="test-model"
            )
        kw["sampling_callback"] = on_sample
    if a.roots is not None:
        async def on_roots(_context):
            asked.append({"method": "roots/list"})
            uris = [u for u in a.roots.split(",") if u]
            return types.ListRootsResult(roots=[types.Root(uri=u, name=u.rstrip("/").rsplit("/", 1)[-1]) for u in uris])
        kw["list_roots_callback"] = on_roots
    return kw


async def call(session, name, args, timeout):
    t = timeout if SDK_MAJOR >= 2 else timedelta(seconds=timeout)
    return {"name": name, "result": dump(await session.call_tool(name, args, read_timeout_seconds=t))}


async def gets(session, a):
    """The --get-prompt and --read requests, in that order."""
    out = []
    for name, args in a.get_prompt or []:
        out.append({"name": f"prompt:{name}", "result": dump(await session.get_prompt(name, json.loads(args)))})
    for uri in a.read or []:
        out.append({"name": f"resource:{uri}", "result": dump(await session.read_resource(uri))})
    return out


async def main_async(a) -> int:
    out: dict = {"sdk": SDK, "asked": []}
    try:
        params = StdioServerParameters(command=a.command[0], args=a.command[1:])
        async with stdio_client(params) as streams:
            calls = [(n, json.loads(j)) for n, j in (a.call or [])]
            if a.mode == "2026-07-28":
                from mcp import Client

                @contextlib.asynccontextmanager
                async def transport():
                    yield (streams[0], streams[1])

                async with Client(
                    transport(), mode=a.mode, read_timeout_seconds=a.timeout, **callbacks(a, out["asked"])
                ) as client:
                    out["protocolVersion"] = client.session.protocol_version
                    out["calls"] = [await call(client, n, j, a.timeout) for n, j in calls]
                    out["calls"] += await gets(client, a)
            else:
                async with ClientSession(streams[0], streams[1], **callbacks(a, out["asked"])) as session:
                    await session.initialize()
                    if a.notify_roots:
                        await session.send_roots_list_changed()
                    if a.together:
                        out["calls"] = list(await asyncio.gather(*(call(session, n, j, a.timeout) for n, j in calls)))
                    else:
                        out["calls"] = [await call(session, n, j, a.timeout) for n, j in calls]
                    out["calls"] += await gets(session, a)
    except BaseException as e:  # noqa: BLE001 - every failure is reported as JSON
        inner = e
        while isinstance(inner, BaseExceptionGroup) and len(inner.exceptions) == 1:
            inner = inner.exceptions[0]
        out["error"] = {"type": type(inner).__name__, "message": str(inner)}
        print(json.dumps(out))
        return 2
    print(json.dumps(out))
    return 0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--call", nargs=2, action="append", metavar=("NAME", "JSON_ARGS"))
    p.add_argument("--together", action="store_true", help="run the calls concurrently")
    p.add_argument("--get-prompt", nargs=2, action="append", metavar=("NAME", "JSON_ARGS"))
    p.add_argument("--read", action="append", metavar="URI")
    p.add_argument("--elicit")
    p.add_argument("--elicit-action", choices=["decline", "cancel"])
    p.add_argument("--elicit-delay", type=float, default=0.0)
    p.add_argument("--sample")
    p.add_argument("--roots")
    p.add_argument("--notify-roots", action="store_true")
    p.add_argument("--timeout", type=float, default=30.0)
    p.add_argument("--mode", choices=["legacy", "2026-07-28"], default="legacy")
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    if a.command and a.command[0] == "--":
        a.command = a.command[1:]
    if not a.command:
        p.error("give the command to spawn after --")
    sys.exit(asyncio.run(main_async(a)))


if __name__ == "__main__":
    main()
