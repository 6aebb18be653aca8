#!/usr/bin/env python3
"""An MCP server that asks its client things in the middle of a tool call, on the official Python
SDK 2.x (`mcp.server.mcpserver.MCPServer`), for the companion's elicitation/sampling/roots tests.

Usage: asking_server.py stdio | asking_server.py http --port N   (always 127.0.0.1)

Every request is sent on the tool call's own request (`related_request_id`), so on streamable
HTTP it rides that call's response stream. Tools (each returns ONE text block holding JSON):
  ask(label)       elicitation/create, form {name: string}  -> {"action", "content", "message"}
  ask_url(label)   elicitation/create, url mode              -> {"action"}
  sample(prompt)   sampling/createMessage                    -> {"model", "text"} or {"error"}
  roots()          roots/list                                -> {"roots": [uri...]} or {"error"}
A request the client answers with a JSON-RPC error gives {"error": "<its message>"}; `ask` also
prints "ask LABEL: ACTION", "ask LABEL: error: MESSAGE" or "ask LABEL: call cancelled" on stderr (the result of a cancelled
call is never seen).
"""
from __future__ import annotations

import argparse
import json
import sys
import warnings

import mcp.types as types
from mcp.server.mcpserver import Context, MCPServer

# Sampling and roots are deprecated by SEP-2577; this server uses them on purpose.
warnings.simplefilter("ignore", DeprecationWarning)

NAME_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "title": "Name"}},
    "required": ["name"],
}


def build() -> MCPServer:
    server = MCPServer("asking", version="0.1.0")

    def related(ctx: Context):
        return ctx.request_context.request_id

    @server.tool()
    async def ask(label: str, ctx: Context) -> str:
        """Ask the client for a name (elicitation/create, form mode)."""
        message = f"{label}: what is your name?"
        try:
            r = await ctx.session.elicit_form(message, NAME_SCHEMA, related_request_id=related(ctx))
        except Exception as e:  # the client's JSON-RPC error
            print(f"ask {label}: error: {e}", file=sys.stderr, flush=True)
            return json.dumps({"error": str(e)})
        except BaseException:  # this call was cancelled (notifications/cancelled)
            print(f"ask {label}: call cancelled", file=sys.stderr, flush=True)
            raise
        print(f"ask {label}: {r.action}", file=sys.stderr, flush=True)
        return json.dumps({"action": r.action, "content": r.content, "message": message})

    @server.tool()
    async def ask_url(label: str, ctx: Context) -> str:
        """Ask the client to open a URL (elicitation/create, url mode)."""
        try:
            r = await ctx.session.elicit_url(
                f"{label}: sign in", "https://example.com/sign-in", f"el-{label}",
                related_request_id=related(ctx),
            )
        except Exception as e:
            return json.dumps({"error": str(e)})
        return json.dumps({"action": r.action})

    @server.tool()
    async def sample(prompt: str, ctx: Context) -> str:
        """Ask the client's model (sampling/createMessage)."""
        try:
            r = await ctx.session.create_message(
                [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))],
                max_tokens=50,
                related_request_id=related(ctx),
            )
        except Exception as e:
            return json.dumps({"error": str(e)})
        return json.dumps({"model": r.model, "text": getattr(r.content, "text", None)})

    @server.tool()
    async def roots(ctx: Context) -> str:
        """Ask the client for its roots (roots/list)."""
        try:
            r = await ctx.session.list_roots()
        except Exception as e:
            return json.dumps({"error": str(e)})
        return json.dumps({"roots": [str(root.uri) for root in r.roots]})

    return server


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("transport", choices=["stdio", "http"])
    p.add_argument("--port", type=int, default=8767)
    a = p.parse_args()
    server = build()
    if a.transport == "stdio":
        server.run("stdio")
    else:
        print(f"asking server on 127.0.0.1:{a.port}", file=sys.stderr, flush=True)
        server.run("streamable-http", host="127.0.0.1", port=a.port)


if __name__ == "__main__":
    main()
