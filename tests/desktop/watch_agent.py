#!/usr/bin/env python3
"""An MCP agent (official Python SDK) that stays connected through `mcp-companion bridge`, for the
desktop e2e test: lists tools, writes READY_FILE, waits up to WAIT seconds for
notifications/tools/list_changed, lists again, prints one JSON object and exits.

Usage: watch_agent.py READY_FILE WAIT -- COMMAND [ARGS...]
"""
import asyncio
import json
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(ready_file, wait, command):
    seen = []

    async def on_message(message):
        msg = getattr(message, "root", message)
        method = getattr(msg, "method", None)
        if method:
            seen.append(method)

    out = {}
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as streams:
        async with ClientSession(streams[0], streams[1], message_handler=on_message) as session:
            await session.initialize()
            out["before"] = [t.name for t in (await session.list_tools()).tools]
            with open(ready_file, "w") as f:
                f.write("ready\n")
            deadline = time.monotonic() + wait
            while "notifications/tools/list_changed" not in seen and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            out["list_changed"] = seen.count("notifications/tools/list_changed")
            await asyncio.sleep(0.3)
            out["after"] = [t.name for t in (await session.list_tools()).tools]
    print(json.dumps(out))


if __name__ == "__main__":
    split = sys.argv.index("--")
    asyncio.run(main(sys.argv[1], float(sys.argv[2]), sys.argv[split + 1:]))
