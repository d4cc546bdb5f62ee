"""``examples/server.py`` serves 2026-07-28 ``subscriptions/listen`` over
stdio: by raw lines (the exact frames: each acknowledgement with the filter
honored, notifications tagged with their listen and only for the listens that
asked, the client's cancel ending one) and driven by the official Python SDK
client (``mcp`` 2.3.0, ``Client.listen``), which must see every toggle it
makes. The server must write nothing to stderr."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.examples.test_sdk_client import SERVER, text
from tests.hostile import META

KEY = "io.modelcontextprotocol/subscriptionId"
ACK = "notifications/subscriptions/acknowledged"
CHANGED = "notifications/tools/list_changed"


def line(rid: object, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": {"_meta": META, **params}}


def test_the_example_serves_listens_on_stdio_frame_by_frame() -> None:
    toggle = {"name": "toggle", "arguments": {}}
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "t"}}
    sent = [
        line("t", "subscriptions/listen", notifications={"toolsListChanged": True, "promptsListChanged": True}),
        line(9, "subscriptions/listen", notifications={"resourceSubscriptions": ["config://app"]}),
        line(2, "tools/call", **toggle),
        cancel,
        line(3, "tools/call", **toggle),
    ]  # fmt: skip
    done = subprocess.run(
        [sys.executable, *SERVER],
        input="".join(json.dumps(m) + "\n" for m in sent),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, "")
    got = [json.loads(frame) for frame in done.stdout.splitlines()]
    seen = [
        (f.get("method") or f["result"]["content"][0]["text"], f.get("params", {})) for f in got
    ]
    assert [(what, params.get("_meta", {}).get(KEY)) for what, params in seen] == [
        (ACK, "t"),
        (ACK, 9),
        ("extra added", None),
        (CHANGED, "t"),  # to the listen that asked for it, and it alone
        ("extra removed", None),  # "t" is cancelled: nothing follows
    ]
    # What each listen was told the server honors: no prompts (not declared
    # listChanged), no resource updates (resources.subscribe not declared).
    assert [params["notifications"] for _, params in seen[:2]] == [{"toolsListChanged": True}, {}]


async def listening(errlog: Any) -> list[Any]:
    seen: list[Any] = []
    transport = stdio_client(StdioServerParameters(command=sys.executable, args=SERVER), errlog)
    async with Client(transport, mode="auto", read_timeout_seconds=20, cache=None) as c:
        async with c.listen(tools_list_changed=True, prompts_list_changed=True) as tools:
            async with c.listen(prompts_list_changed=True) as prompts:
                honored = (tools.honored, prompts.honored)
                seen.append([h.model_dump(by_alias=True, exclude_none=True) for h in honored])
                for _ in range(2):  # on, then off again
                    seen.append(text((await c.call_tool("toggle", {})).content[0]))
                    with anyio.fail_after(10):
                        seen.append(type(await tools.__anext__()).__name__)
                    listed = [t.name for t in (await c.list_tools()).tools]
                    seen.append(listed[5:])
                    if "extra" in listed:
                        seen.append(text((await c.call_tool("extra", {})).content[0]))
        # Both listens ended by the client (notifications/cancelled); the session goes on.
        seen.append(text((await c.call_tool("toggle", {})).content[0]))
    return seen


def test_the_official_client_listens_to_the_example_over_stdio() -> None:
    with tempfile.TemporaryFile("w+") as errlog:
        seen = anyio.run(listening, errlog)
        errlog.seek(0)
        assert errlog.read() == ""
    assert seen == [
        [{"toolsListChanged": True}, {}],
        "extra added",
        "ToolsListChanged",
        ["toggle", "extra"],
        "extra is here",
        "extra removed",
        "ToolsListChanged",
        ["toggle"],
        "extra added",
    ]
