"""MCP client built on the official Python SDK (`mcp`), driving a stdio server through relay.py.

    python py_client.py --mode legacy|auto|2026-07-28 --out CAPTURE.jsonl -- SERVER_CMD [ARGS...]

The client launches `relay.py --out CAPTURE.jsonl -- SERVER_CMD...` as its stdio
server, so every JSON-RPC line on the wire is recorded. Steps that a given
server/era does not support are attempted anyway; failures are printed to
stderr and the script moves on (the error responses are part of the capture).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters

warnings.simplefilter("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))


async def sampling_cb(ctx, params):
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="Sunny and mild."),
        model="stub-model-1",
        stop_reason="endTurn",
    )


async def elicit_cb(ctx, params):
    if getattr(params, "mode", None) == "url":
        return types.ElicitResult(action="accept")
    return types.ElicitResult(action="accept", content={"confidence": 0.75, "note": "fairly sure"})


async def roots_cb(ctx):
    return types.ListRootsResult(
        roots=[
            types.Root(uri="file:///home/user/project", name="project"),
            types.Root(uri="file:///home/user/notes"),
        ]
    )


async def log_cb(params):
    print(f"[log] {params.level}: {params.data}", file=sys.stderr)


async def progress_cb(progress, total, message):
    print(f"[progress] {progress}/{total} {message}", file=sys.stderr)


async def step(name, coro_fn):
    try:
        res = await coro_fn()
        print(f"ok   {name}: {str(res)[:160]}", file=sys.stderr)
        return res
    except BaseException as e:
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        print(f"FAIL {name}: {type(e).__name__}: {e}", file=sys.stderr)
        return None


async def run(mode: str, out: str, server_cmd: list[str]) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=[os.path.join(HERE, "relay.py"), "--out", out, "--", *server_cmd],
        cwd=HERE,
    )
    modern = mode not in ("legacy",)
    client = Client(
        params,
        mode=mode,
        sampling_callback=sampling_cb,
        elicitation_callback=elicit_cb,
        list_roots_callback=roots_cb,
        logging_callback=log_cb,
        log_level="debug" if modern else None,
        client_info=types.Implementation(
            name="py-peer-client", version="1.0.0", title="Python peer client"
        ),
        read_timeout_seconds=20,
        cache=None,
    )
    async with client:
        print(f"negotiated {client.protocol_version}", file=sys.stderr)
        modern = client.protocol_version >= "2026"
        c = client
        if not modern:
            await step("ping", lambda: c.send_ping())
            await step("logging/setLevel", lambda: c.set_logging_level("debug"))
        await step("tools/list", lambda: c.list_tools())
        await step("call echo", lambda: c.call_tool("echo", {"text": "hello"}))
        await step(
            "call get_weather",
            lambda: c.call_tool("get_weather", {"city": "Paris", "units": "metric"}),
        )
        await step("call divide ok", lambda: c.call_tool("divide", {"a": 1, "b": 4}))
        await step("call divide raises", lambda: c.call_tool("divide", {"a": 1, "b": 0}))
        await step("call bad args", lambda: c.call_tool("divide", {"a": "x"}))
        await step("call unknown tool", lambda: c.call_tool("no_such_tool", {}))
        await step(
            "call slow_count",
            lambda: c.call_tool("slow_count", {"n": 3}, progress_callback=progress_cb),
        )
        await step("resources/list", lambda: c.list_resources())
        await step("resources/templates/list", lambda: c.list_resource_templates())
        await step("read text", lambda: c.read_resource("config://app"))
        await step("read blob", lambda: c.read_resource("file:///logo.png"))
        await step("read template", lambda: c.read_resource("weather://Paris/current"))
        await step("read missing", lambda: c.read_resource("config://missing"))
        if not modern:
            await step("subscribe", lambda: c.subscribe_resource("config://app"))
            await step("unsubscribe", lambda: c.unsubscribe_resource("config://app"))
        await step("prompts/list", lambda: c.list_prompts())
        await step(
            "prompts/get",
            lambda: c.get_prompt("code_review", {"code": "print(1)", "language": "python"}),
        )
        await step(
            "complete prompt arg",
            lambda: c.complete(
                types.PromptReference(type="ref/prompt", name="code_review"),
                {"name": "language", "value": "py"},
            ),
        )
        await step(
            "complete template arg",
            lambda: c.complete(
                types.ResourceTemplateReference(
                    type="ref/resource", uri="weather://{city}/current"
                ),
                {"name": "city", "value": "P"},
            ),
        )
        await step(
            "elicitation form (number 0.75)",
            lambda: c.call_tool("rate_forecast", {"city": "Paris"}),
        )
        await step("sampling", lambda: c.call_tool("summarize", {}))
        await step("roots", lambda: c.call_tool("show_roots", {}))
        if not modern:
            await step("elicitation url", lambda: c.call_tool("connect_account", {}))
            await step("roots list_changed", lambda: c.send_roots_list_changed())
        await step("add_tool (list_changed)", lambda: c.call_tool("add_tool", {}))
        await step("tools/list again", lambda: c.list_tools())
        if modern:

            async def listen_once():
                async with c.listen(
                    tools_list_changed=True, resource_subscriptions=["config://app"]
                ) as sub:
                    await c.call_tool("add_tool", {})
                    with anyio.move_on_after(1.0):
                        async for ev in sub:
                            print(f"[event] {ev}", file=sys.stderr)
                            break
                    return sub.honored

            await step("subscriptions/listen", listen_once)

        async def cancel_it():
            with anyio.move_on_after(0.5):
                await c.call_tool("wait_forever", {"seconds": 30})
            return "cancelled after 0.5s"

        await step("cancellation", cancel_it)
        await step("echo after cancel", lambda: c.call_tool("echo", {"text": "still alive"}))
        await step(
            "unknown method",
            lambda: c.session.send_request(
                types.Request(method="tools/frobnicate", params={"x": 1}), types.EmptyResult
            ),
        )
        await anyio.sleep(0.3)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="legacy")
    ap.add_argument("--out", required=True)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    anyio.run(run, a.mode, os.path.abspath(a.out), cmd)


if __name__ == "__main__":
    main()
