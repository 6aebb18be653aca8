"""Capability probes of one MCP server session, on the official Python SDK (2.x), for the
companion's capability-matrix test: run once against server-everything directly and once
through `mcp-companion bridge`, and compare the two outputs probe by probe.

Usage: capability_matrix.py [--tool-prefix P] [--prompt-prefix P] [--mode legacy|auto]
                            (--url URL | -- COMMAND [ARGS...])

`--url` speaks streamable HTTP to URL; otherwise COMMAND is spawned on stdio. `--mode legacy`
(the default) is a `ClientSession` and `initialize`; `--mode auto` is the SDK's `mcp.Client`,
which asks `server/discover` first and speaks 2026-07-28 with a server that answers it (else
it falls back to `initialize`); `protocol` in the output says which was spoken.

The prefixes are what the session puts before the server's own tool and prompt names (through
the companion: `mcp_everything_` and `everything_`); each probe strips them again so both runs
report the same names. Prints ONE JSON object: {"sdk", "probes": {NAME: {"ok": bool,
"detail": ...}}}; `detail` is what the two runs must agree on (names, kinds, counts), never
timing.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from importlib.metadata import version as pkg_version

from typing import Literal

import anyio
import mcp.types as types
from mcp.client.extension import ClientExtension, ResultClaim
from pydantic import ConfigDict
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

SDK = pkg_version("mcp")
WAIT = 20.0  # seconds a probe waits for a notification


def dump(obj):
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", by_alias=True, exclude_none=True)
    return obj


class Heard:
    """Notifications and server requests this client saw."""

    def __init__(self):
        self.updated: list[str] = []
        self.logs: list[str] = []
        self.asked: list[str] = []
        self.changed = anyio.Event()

    def poke(self):
        self.changed.set()
        self.changed = anyio.Event()

    async def wait_for(self, test, seconds=WAIT):
        with anyio.move_on_after(seconds):
            while not test():
                await self.changed.wait()
        return test()


def callbacks(heard: Heard):
    async def on_message(message):
        if isinstance(message, types.ServerNotification):
            root = getattr(message, "root", message)
            if isinstance(root, types.ResourceUpdatedNotification):
                heard.updated.append(root.params.uri)
                heard.poke()

    async def on_log(params):
        heard.logs.append(str(params.level))
        heard.poke()

    async def on_elicit(_context, params):
        heard.asked.append("elicitation")
        heard.poke()
        return types.ElicitResult(action="decline")

    async def on_sample(_context, params):
        heard.asked.append("sampling")
        heard.poke()
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="sampled"), model="probe-model"
        )

    async def on_roots(_context):
        heard.asked.append("roots")
        heard.poke()
        return types.ListRootsResult(roots=[types.Root(uri="file:///tmp/probe-root", name="probe-root")])

    return {
        "message_handler": on_message,
        "logging_callback": on_log,
        "elicitation_callback": on_elicit,
        "sampling_callback": on_sample,
        "list_roots_callback": on_roots,
    }


def modern(session) -> bool:
    """Whether the session speaks 2026-07-28 or later (an `mcp.Client` that discovered it)."""
    return str(getattr(session, "protocol_version", "")) >= "2026"


def strip(name: str, prefix: str) -> str:
    return name[len(prefix):] if prefix and name.startswith(prefix) else name


def kinds(result) -> list[str]:
    return sorted({c.get("type", "?") for c in dump(result).get("content", [])})


class TaskHandle(types.Result):
    """`CreateTaskResult` of the 2026-07-28 Tasks extension (`resultType: "task"`)."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"]
    task_id: str
    status: str


class DetailedTask(types.Result):
    """A `tasks/get` answer of the Tasks extension: the task, with `result` or `error`."""

    model_config = ConfigDict(extra="allow")
    task_id: str
    status: str
    result: dict | None = None
    error: dict | None = None


class Acked(types.Result):
    """The extension's empty acknowledgement (`tasks/cancel`, `tasks/update`)."""

    model_config = ConfigDict(extra="allow")


async def get_task(inner, task_id: str) -> DetailedTask:
    request = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id))
    return await inner.send_request(request, DetailedTask)


async def resolve_task(handle: TaskHandle, ctx) -> types.CallToolResult:
    got = await get_task(ctx.session, handle.task_id)
    with anyio.fail_after(40):
        while got.status not in ("completed", "failed", "cancelled"):
            await anyio.sleep(0.2)
            got = await get_task(ctx.session, handle.task_id)
    if got.status != "completed":
        raise RuntimeError(f"task {handle.task_id} ended {got.status}: {got.error}")
    return types.CallToolResult.model_validate(got.result)


class TasksExtension(ClientExtension):
    """The requester side of `io.modelcontextprotocol/tasks` (SEP-2663), as the SDK's
    extension surface lets a client declare it: a claim on `resultType: "task"`."""

    identifier = "io.modelcontextprotocol/tasks"

    def claims(self):
        return (ResultClaim(result_type="task", model=TaskHandle, resolve=resolve_task),)


async def probes(session: ClientSession, heard: Heard, a) -> dict:
    tp, pp = a.tool_prefix, a.prompt_prefix
    out: dict = {}

    async def probe(name, body):
        try:
            with anyio.fail_after(60):
                ok, detail = await body()
            out[name] = {"ok": bool(ok), "detail": detail}
        except BaseException as e:  # noqa: BLE001 - a failed probe is a row, not a crash
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            out[name] = {"ok": False, "detail": f"{type(e).__name__}: {e}"}

    def tool(name):
        return tp + name

    async def call(name, args=None, **kw):
        return await session.call_tool(tool(name), args or {}, **kw)

    listed = {}

    async def tools():
        result = await session.list_tools()
        for t in result.tools:
            listed[strip(t.name, tp)] = dump(t)
        names = sorted(n for n in listed if n in ("echo", "get-sum", "get-tiny-image"))
        return len(names) == 3, names

    async def annotations():
        with_annotations = sorted(n for n, t in listed.items() if t.get("annotations"))
        return bool(with_annotations), with_annotations

    async def tool_execution():
        execution = sorted(f"{n}={t['execution'].get('taskSupport')}" for n, t in listed.items() if t.get("execution"))
        return bool(execution), execution

    async def output_schemas():
        with_schema = sorted(n for n, t in listed.items() if t.get("outputSchema"))
        return bool(with_schema), with_schema

    async def echo():
        r = dump(await call("echo", {"message": "probe"}))
        return r.get("content", [{}])[0].get("text", "").endswith("probe"), r.get("content")

    async def structured():
        r = dump(await call("get-structured-content", {"location": "New York"}))
        return "structuredContent" in r, sorted(r.get("structuredContent", {}))

    async def images():
        r = await call("get-tiny-image")
        return "image" in kinds(r), kinds(r)

    async def embedded():
        r = await call("get-resource-reference", {"resourceType": "Text", "resourceId": 1})
        return "resource" in kinds(r), kinds(r)

    async def links():
        r = dump(await call("get-resource-links", {"count": 2}))
        uris = [c["uri"] for c in r.get("content", []) if c.get("type") == "resource_link"]
        read = []
        for uri in uris:
            contents = (await session.read_resource(uri)).contents
            read.append(len(contents) > 0)
        return bool(uris) and all(read), {"links": len(uris), "read": read}

    async def prompts_list():
        names = sorted(strip(p.name, pp) for p in (await session.list_prompts()).prompts)
        return "simple-prompt" in names, names

    async def prompts_get():
        r = await session.get_prompt(pp + "args-prompt", {"city": "Paris"})
        text = json.dumps(dump(r)["messages"])
        return "Paris" in text, len(r.messages)

    async def resources_list():
        uris = sorted(r.uri for r in (await session.list_resources()).resources)
        return bool(uris), uris

    async def resources_read():
        uri = "demo://resource/static/document/architecture.md"
        contents = (await session.read_resource(uri)).contents
        return bool(contents) and contents[0].uri == uri, [c.uri for c in contents]

    async def templates():
        result = dump(await session.list_resource_templates())
        listed_templates = sorted(t["uriTemplate"] for t in result["resourceTemplates"])
        contents = (await session.read_resource("demo://resource/dynamic/text/1")).contents
        return bool(listed_templates) and bool(contents), listed_templates

    async def completions():
        ref = types.PromptReference(type="ref/prompt", name=pp + "completable-prompt")
        r = await session.complete(ref, {"name": "department", "value": "E"})
        return "Engineering" in r.completion.values, r.completion.values

    async def subscribe():
        uri = "demo://resource/dynamic/text/1"
        if modern(session):
            # 2026-07-28 has no resources/subscribe: a `subscriptions/listen` stream carries updates.
            async with session.listen(resource_subscriptions=[uri]) as sub:
                await call("toggle-subscriber-updates")
                got = False
                with anyio.move_on_after(WAIT):
                    async for event in sub:
                        if getattr(event, "uri", None) == uri:
                            got = True
                            break
                await call("toggle-subscriber-updates")
            return got, uri if got else "no update"
        await session.subscribe_resource(uri)
        await call("toggle-subscriber-updates")
        got = await heard.wait_for(lambda: uri in heard.updated)
        await call("toggle-subscriber-updates")
        await session.unsubscribe_resource(uri)
        return got, uri if got else heard.updated[:3]

    async def logs():
        if not modern(session):  # 2026-07-28 opts in per request (`log_level` of the Client)
            await session.set_logging_level("debug")
        await call("toggle-simulated-logging")
        got = await heard.wait_for(lambda: bool(heard.logs))
        await call("toggle-simulated-logging")
        return got, "messages" if got else "none"

    async def progress():
        seen = []

        async def on_progress(p, total, message):
            seen.append(p)

        r = await call("trigger-long-running-operation", {"duration": 1, "steps": 2}, progress_callback=on_progress)
        return bool(seen) and not dump(r).get("isError"), len(seen)

    async def cancellation():
        with anyio.move_on_after(1.0):
            await call("trigger-long-running-operation", {"duration": 30, "steps": 3})
        r = dump(await call("echo", {"message": "after"}))
        return r.get("content", [{}])[0].get("text", "").endswith("after"), "usable after cancel"

    async def elicitation():
        heard.asked.clear()
        await call("trigger-elicitation-request")
        return "elicitation" in heard.asked, heard.asked[:]

    async def sampling():
        heard.asked.clear()
        r = dump(await call("trigger-sampling-request", {"prompt": "hi"}))
        return "sampling" in heard.asked and "sampled" in json.dumps(r), heard.asked[:]

    async def roots():
        heard.asked.clear()
        r = dump(await call("get-roots-list"))
        return "probe-root" in json.dumps(r), "the client's roots"

    async def tasks():
        if modern(session):
            return await modern_tasks()
        # Tasks (MCP 2025-11-25 utilities/tasks): the SDK has no API for them, so raw requests.
        raw = getattr(session, "session", session)._dispatcher.send_raw_request
        research = tool("simulate-research-query")
        created = await raw("tools/call", {"name": research, "arguments": {"topic": "probe"}, "task": {"ttl": 60000}})
        first = created["task"]["taskId"]
        other = (await raw("tools/call", {"name": research, "arguments": {"topic": "other"}, "task": {"ttl": 60000}}))["task"]["taskId"]
        cancelled = await raw("tasks/cancel", {"taskId": other})
        status = created["task"]["status"]
        with anyio.fail_after(40):
            while status not in ("completed", "failed", "cancelled"):
                await anyio.sleep(0.2)
                status = (await raw("tasks/get", {"taskId": first}))["status"]
        result = await raw("tasks/result", {"taskId": first})
        related = result.get("_meta", {}).get("io.modelcontextprotocol/related-task", {}).get("taskId")
        listed = {t["taskId"]: t["status"] for t in (await raw("tasks/list", {}))["tasks"]}
        detail = {
            "created": created["task"]["status"],
            "final": status,
            "result": sorted({c.get("type", "?") for c in result.get("content", [])}),
            "related_is_the_task": related == first,
            "cancelled": cancelled.get("status"),
            "listed": sorted(listed.get(t, "missing") for t in (first, other)),
            "ids_differ": first != other,
        }
        return status == "completed" and "text" in detail["result"], detail

    async def modern_tasks():
        # The 2026-07-28 Tasks extension (SEP-2663) through the SDK's own surface: the
        # client declares it (`TasksExtension`), `call_tool(..., allow_claimed=True)` hands
        # back the task, `tasks/get` carries the result, `tasks/cancel` is acknowledged, and
        # there is no `tasks/list` (each task's status is read with `tasks/get`).
        inner = session.session
        research = tool("simulate-research-query")
        created = await inner.call_tool(research, {"topic": "probe"}, allow_claimed=True)
        other_task = await inner.call_tool(research, {"topic": "other"}, allow_claimed=True)
        if not isinstance(created, TaskHandle) or not isinstance(other_task, TaskHandle):
            return False, {"not_a_task": dump(created)}
        first, other = created.task_id, other_task.task_id
        await inner.send_request(types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=other)), Acked)
        cancelled = (await get_task(inner, other)).status
        got = await get_task(inner, first)
        with anyio.fail_after(40):
            while got.status not in ("completed", "failed", "cancelled"):
                await anyio.sleep(0.2)
                got = await get_task(inner, first)
        result = got.result or {}
        related = result.get("_meta", {}).get("io.modelcontextprotocol/related-task", {}).get("taskId")
        statuses = [got.status, (await get_task(inner, other)).status]
        # The SDK's transparent path: `call_tool` polls the task through the claim's resolver.
        resolved = kinds(await session.call_tool(research, {"topic": "resolved"}))
        detail = {
            "created": created.status,
            "final": got.status,
            "result": sorted({c.get("type", "?") for c in result.get("content", [])}),
            "related_is_the_task": related == first,
            "cancelled": cancelled,
            "listed": sorted(statuses),
            "ids_differ": first != other,
        }
        ok = got.status == "completed" and "text" in detail["result"] and resolved == detail["result"]
        return ok, detail

    for name, body in [
        ("tools", tools), ("annotations", annotations), ("output_schemas", output_schemas),
        ("tool_execution", tool_execution),
        ("text", echo), ("structured_content", structured), ("images", images),
        ("embedded_resources", embedded), ("resource_links", links),
        ("prompts_list", prompts_list), ("prompts_get", prompts_get),
        ("resources_list", resources_list), ("resources_read", resources_read),
        ("resource_templates", templates), ("completions", completions),
        ("subscribe_updated", subscribe), ("log_messages", logs), ("progress", progress),
        ("cancellation", cancellation), ("elicitation", elicitation), ("sampling", sampling),
        ("roots", roots), ("tasks", tasks),
    ]:
        await probe(name, body)
    return out


def transport(a):
    """The streams to the server: streamable HTTP to `--url`, else COMMAND on stdio."""
    if a.url:
        return streamable_http_client(a.url)
    return stdio_client(StdioServerParameters(command=a.command[0], args=a.command[1:]))


async def main_async(a) -> int:
    out: dict = {"sdk": SDK, "mode": a.mode}
    heard = Heard()
    try:
        async with transport(a) as streams:
            if a.mode == "legacy":
                async with ClientSession(streams[0], streams[1], **callbacks(heard)) as session:
                    init = await session.initialize()
                    out["protocol"] = init.protocol_version
                    out["probes"] = await probes(session, heard, a)
            else:
                from mcp import Client

                @contextlib.asynccontextmanager
                async def opened():
                    yield (streams[0], streams[1])

                async with Client(
                    opened(), mode=a.mode, log_level="debug", extensions=[TasksExtension()], **callbacks(heard)
                ) as client:
                    out["protocol"] = client.protocol_version
                    out["probes"] = await probes(client, heard, a)
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
    p.add_argument("--tool-prefix", default="")
    p.add_argument("--prompt-prefix", default="")
    p.add_argument("--mode", choices=["legacy", "auto"], default="legacy")
    p.add_argument("--url")
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    if a.command and a.command[0] == "--":
        a.command = a.command[1:]
    if not a.command and not a.url:
        p.error("give --url or the command to spawn after --")
    sys.exit(asyncio.run(main_async(a)))


if __name__ == "__main__":
    main()
