#!/usr/bin/env python3
"""A stdio MCP server on the official Python SDK v2 low-level `Server` that declares exactly one
capability: the SDK derives the `initialize` capabilities from the handlers given, so with
`--only prompts` it declares only `prompts` and answers `tools/list` with -32601.

Usage:
  python declared_server.py --only prompts      # prompt `greet(name)`
  python declared_server.py --only resources    # resource test://only/hello, template test://only/{name}
"""
from __future__ import annotations

import argparse

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


async def list_prompts(_ctx, _params) -> types.ListPromptsResult:
    arg = types.PromptArgument(name="name", required=True)
    return types.ListPromptsResult(prompts=[types.Prompt(name="greet", arguments=[arg])])


async def get_prompt(_ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult:
    name = (params.arguments or {}).get("name", "nobody")
    text = types.TextContent(type="text", text=f"Please greet {name}.")
    return types.GetPromptResult(messages=[types.PromptMessage(role="user", content=text)])


async def list_resources(_ctx, _params) -> types.ListResourcesResult:
    hello = types.Resource(uri="test://only/hello", name="hello", mime_type="text/plain")
    return types.ListResourcesResult(resources=[hello])


async def list_templates(_ctx, _params) -> types.ListResourceTemplatesResult:
    tpl = types.ResourceTemplate(uri_template="test://only/{name}", name="named")
    return types.ListResourceTemplatesResult(resource_templates=[tpl])


async def read_resource(_ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    uri = str(params.uri)
    body = types.TextResourceContents(uri=uri, mime_type="text/plain", text=f"contents of {uri}")
    return types.ReadResourceResult(contents=[body])


def build(only: str) -> Server:
    if only == "prompts":
        return Server("prompts-only", version="0", on_list_prompts=list_prompts, on_get_prompt=get_prompt)
    return Server(
        "resources-only",
        version="0",
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
    )


async def main(only: str) -> None:
    server = build(only)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", choices=["prompts", "resources"], required=True)
    anyio.run(main, p.parse_args().only)
