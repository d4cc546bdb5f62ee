"""The official Python SDK's server with the tools of ``examples/server.py`` that
need no client round (``echo``, ``divide``, ``count``), as an ASGI app in its
stateless Streamable HTTP mode with JSON answers: the reference of ``bench.http``
(``python -m uvicorn bench.http_reference:app``)."""

from __future__ import annotations

import warnings

from mcp.server.mcpserver import Context, MCPServer

warnings.simplefilter("ignore")

server = MCPServer("bench-reference", version="1.0.0")


@server.tool(description="Say it back")
def echo(text: str) -> str:
    return text


@server.tool(description="a / b")
def divide(a: float, b: float) -> float:
    return a / b


@server.tool(description="Count to 3 with progress")
async def count(ctx: Context) -> str:
    for done in range(1, 4):
        await ctx.report_progress(done, 3)
    return "3"


app = server.streamable_http_app(stateless_http=True, json_response=True)
