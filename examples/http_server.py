"""An MCP server over Streamable HTTP on ``mcp_schema.server``, both eras on
one endpoint: ``python -m mcp_schema serve --app-dir examples http_server:server``,
or any ASGI server on its ``app``
(``python -m uvicorn --app-dir examples http_server:app --port 3001`` serves
``http://127.0.0.1:3001/mcp``, and ``/healthz``, ``/readyz``).

The tools of ``examples/server.py`` (which writes the same by hand, on the
session): structured output, an error result, progress and logging, a tool
that asks the user and one that asks the client's model (in 2026-07-28 an
input-required result whose ``requestState`` is sealed under
``MCP_STATE_KEY``, so the retry completes on any replica), a resource and a
prompt. ``toggle`` adds the tool ``extra``, or removes it, on every replica
(a compare-and-set in the broker's store, then ``tools/list_changed`` through
the relay to every listen); ``long_count`` is a task where the client
declared the Tasks extension (its progress in the status message, one
question on the way), else answered at once. Its sync functions never block,
so they are declared ``inline``: each runs in the event loop and its call is
answered at once, with no worker thread (``docs/guide/remote-server.md``).

Configured from the environment (``docs/guide/remote-server.md``):
``MCP_REDIS_URL`` makes it one replica of many (sessions, tasks and the tool
set in Redis, any replica serves any request), ``MCP_STATE_KEY`` (every
replica's), ``MCP_TASKS_DB`` (tasks in SQLite without Redis),
``MCP_TASK_LEASE_SECONDS``, ``MCP_VERSIONS`` (comma-separated; unset: every
version the package knows), ``MCP_ALLOWED_HOSTS``. ``MCP_AUTH_ISSUER`` (the
authorization server's issuer URL) with ``MCP_AUTH_RESOURCE`` (this server's
canonical resource URI, ``https://mcp.example.com/mcp``) turn authorization
on: every request needs a JWT access token of that issuer for that resource
(``docs/guide/authorization.md``); ``MCP_TRUSTED_PROXIES`` names the proxies
whose ``X-Forwarded-For`` gives the client's address. Without them it runs
with no token asked. One setting that cannot work stops it with one line."""

import asyncio

from pydantic import BaseModel
from typing_extensions import TypedDict  # pydantic reads typing's from Python 3.12 on

from mcp_schema.server import Context, Server, ToolError, ToolResult

server = Server("example-http-server", version="1.0.0", logging=True, inline=True)


class Text(TypedDict):
    text: str


class Word(BaseModel):
    text: str


@server.tool()
def echo(text: str) -> ToolResult[Text]:
    """Say it back"""
    return ToolResult(text, {"text": text})


@server.tool()
def divide(a: float = 0, b: float = 0) -> float:
    """a / b"""
    if not b:  # a failed call is a result with isError, not a protocol error
        raise ToolError("division by zero")
    return a / b


@server.tool()
async def count(ctx: Context) -> str:
    """Count to 3 with progress"""
    for step in (1, 2, 3):  # sent only if the call asked for progress
        await ctx.report_progress(step, 3)
    await ctx.log("info", "counted to 3")  # only if the client asked for logs
    return "1 2 3"


@server.tool()
async def ask(ctx: Context) -> str:
    """Ask the user for a word"""
    answer = await ctx.ask("A word?", Word, key="word")  # the function runs again with it
    return f"you said {answer.data.text}" if answer.data else "nothing was said"


@server.tool()
async def think(ctx: Context) -> str:
    """Ask the client's model"""
    reply = await ctx.sample("A word?", max_tokens=9, key="word")
    word = getattr(reply.content, "text", None)
    return f"you said {word}" if word else "nothing was said"


@server.tool()
async def toggle() -> str:
    """Add or remove extra"""
    return "extra added" if await server.toggle("extra") else "extra removed"


@server.tool(task=True)
async def long_count(ctx: Context) -> str:
    """Count to 3, slowly"""
    for step in range(1, 4) if ctx.task else ():  # a second a step, in a task only
        await ctx.report_progress(step, 3, f"counted {step} of 3")
        await asyncio.sleep(1)
        if step == 2 and ctx.can_ask("elicitation/create"):
            await ctx.ask("Count on?", {"type": "object", "properties": {}}, key="go_on")
    return "counted to 3"


@server.tool(enabled=False)
def extra() -> str:
    """Here until toggled"""
    return "extra is here"


@server.resource("config://app", name="config", mime_type="application/json")
def config() -> str:
    return '{"debug": false}'


@server.prompt()
def review(code: str) -> str:
    return "Hi"


app = server.asgi()
