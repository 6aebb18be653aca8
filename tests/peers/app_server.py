#!/usr/bin/env python3
"""A stdio MCP server on the official Python SDK v2 low-level `Server` shaped like an MCP Apps
server: tool `show` names its UI in `_meta.ui.resourceUri` (`ui://widget/app.html`) and returns
a `resource_link` to it and the same resource embedded; the UI is a listed resource.

Usage: python app_server.py --label TEXT [--ui URI]
  --label  goes into the UI's HTML, to tell instances apart
  --ui     the UI's URI (default ui://widget/app.html)
"""
from __future__ import annotations

import argparse

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

UI = "ui://widget/app.html"
LABEL = "app"


async def list_tools(_ctx, _params) -> types.ListToolsResult:
    show = types.Tool(
        name="show",
        input_schema={"type": "object", "properties": {}},
        _meta={"ui": {"resourceUri": UI}},
    )
    return types.ListToolsResult(tools=[show])


def html() -> types.TextResourceContents:
    return types.TextResourceContents(uri=UI, mime_type="text/html;profile=mcp-app", text=f"<p>{LABEL}</p>")


async def call_tool(_ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    link = types.ResourceLink(type="resource_link", uri=UI, name="app")
    embedded = types.EmbeddedResource(type="resource", resource=html())
    return types.CallToolResult(content=[link, embedded])


async def list_resources(_ctx, _params) -> types.ListResourcesResult:
    app = types.Resource(uri=UI, name="app", mime_type="text/html;profile=mcp-app")
    return types.ListResourcesResult(resources=[app])


async def read_resource(_ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    if str(params.uri) != UI:
        raise ValueError(f"no resource {params.uri}")
    return types.ReadResourceResult(contents=[html()])


async def main() -> None:
    server = Server(
        "app-server",
        version="0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--label", default="app")
    p.add_argument("--ui", default=UI)
    args = p.parse_args()
    LABEL, UI = args.label, args.ui
    anyio.run(main)
