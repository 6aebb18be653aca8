"""Captures the real `tools/list` of MCP servers from npm and PyPI into
tests/fixtures/tool_search_catalog.json, for the retrieval evaluation (benches/tool_search).

Run by capture.sh, which installs the pinned packages first. Each server is started over
stdio with placeholder credentials (none of them calls out while listing), asked for every
page of tools/list, and stopped. The tools are kept exactly as each server listed them.

Usage: python capture.py NODE_DIR VENV_DIR OUT.json
"""
import asyncio
import json
import os
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

NODE_DIR, VENV_DIR, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
NODE = os.environ.get("NODE", "node")
SCRATCH = tempfile.mkdtemp(prefix="mcp-capture-")

# Placeholders: these servers read a credential at start-up but do not use it to list tools.
FAKE = {
    "GITHUB_PERSONAL_ACCESS_TOKEN": "placeholder",
    "BRAVE_API_KEY": "placeholder",
    "SLACK_BOT_TOKEN": "xoxb-placeholder",
    "SLACK_TEAM_ID": "T00000000",
    "GOOGLE_MAPS_API_KEY": "placeholder",
    "MEMORY_FILE_PATH": os.path.join(SCRATCH, "memory.json"),
}


def npm(package, entry, *args):
    return (package, NODE, [os.path.join(NODE_DIR, "node_modules", package, entry), *args])


def py(package, command, *args):
    return (package, os.path.join(VENV_DIR, "bin", command), list(args))


# Server name (as in a config) → (package, command, args).
SERVERS = {
    "everything": ("@modelcontextprotocol/server-everything", NODE,
                   [os.path.join(os.environ["EVERYTHING_DIR"], "dist", "index.js"), "stdio"]),
    "filesystem": npm("@modelcontextprotocol/server-filesystem", "dist/index.js", SCRATCH),
    "memory": npm("@modelcontextprotocol/server-memory", "dist/index.js"),
    "sequential_thinking": npm("@modelcontextprotocol/server-sequential-thinking", "dist/index.js"),
    "github": npm("@modelcontextprotocol/server-github", "dist/index.js"),
    "brave_search": npm("@modelcontextprotocol/server-brave-search", "dist/index.js"),
    "slack": npm("@modelcontextprotocol/server-slack", "dist/index.js"),
    "google_maps": npm("@modelcontextprotocol/server-google-maps", "dist/index.js"),
    "playwright": npm("@playwright/mcp", "cli.js", "--headless"),
    "time": py("mcp-server-time", "mcp-server-time"),
    "git": py("mcp-server-git", "mcp-server-git"),
    "fetch": py("mcp-server-fetch", "mcp-server-fetch"),
}


def version_of(package):
    if package.startswith("@"):
        base = os.environ["EVERYTHING_DIR"] if package.endswith("server-everything") else \
            os.path.join(NODE_DIR, "node_modules", package)
        with open(os.path.join(base, "package.json")) as f:
            return json.load(f)["version"]
    from importlib.metadata import version
    return version(package)


async def capture(name, package, command, args):
    env = {**os.environ, **FAKE}
    params = StdioServerParameters(command=command, args=args, env=env, cwd=SCRATCH)
    async with stdio_client(params) as (rd, wr):
        async with ClientSession(rd, wr) as session:
            await session.initialize()
            tools, cursor = [], None
            while True:
                page = await session.list_tools(cursor=cursor) if cursor else await session.list_tools()
                tools.extend(t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
    return tools


async def main():
    out = {
        "about": "The tools/list of real MCP servers as each listed them (captured by "
                 "benches/tool_search/capture.sh; re-run it to refresh). Server names are the "
                 "config names the evaluation wraps them under (mcp_<server>_<tool>).",
        "servers": {},
    }
    for name, (package, command, args) in SERVERS.items():
        tools = await asyncio.wait_for(capture(name, package, command, args), 120)
        out["servers"][name] = {"package": package, "version": version_of(package), "tools": tools}
        print(f"{name}: {len(tools)} tools", file=sys.stderr)
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")


asyncio.run(main())
