"""MCP server built on the official Python SDK (`mcp`, MCPServer), stdio transport.

Serves both protocol eras: the SDK's runner decides per connection from the first
request (initialize -> 2025-11-25 handshake era; a request carrying the
`io.modelcontextprotocol/protocolVersion` _meta envelope -> 2026-07-28 era).
"""

from __future__ import annotations

import base64
import warnings
from typing import Annotated, Literal

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from mcp.server.mcpserver.resolve import ListRoots, Sample
from pydantic import BaseModel, Field

warnings.simplefilter("ignore")

ICON = types.Icon(
    src="https://example.com/icons/weather.png", mime_type="image/png", sizes=["48x48"]
)

mcp = MCPServer(
    "py-peer-server",
    title="Python peer server",
    version="1.0.0",
    instructions="Test server for wire captures.",
    website_url="https://example.com/py-peer",
    icons=[ICON],
)


class WeatherReport(BaseModel):
    city: str
    temperature: float = Field(description="Temperature in the requested units")
    conditions: Literal["sunny", "cloudy", "rain", "snow"]
    humidity: int = Field(ge=0, le=100)


@mcp.tool(
    title="Get weather",
    description="Current weather for a city.",
    annotations=types.ToolAnnotations(
        title="Weather", read_only_hint=True, open_world_hint=True, idempotent_hint=True
    ),
    icons=[ICON],
)
def get_weather(city: str, units: Literal["metric", "imperial"] = "metric") -> WeatherReport:
    temp = 21.5 if units == "metric" else 70.7
    return WeatherReport(city=city, temperature=temp, conditions="sunny", humidity=40)


@mcp.tool(description="Echo text back.")
def echo(text: str) -> str:
    return text


@mcp.tool(
    description="Divide a by b; raises on b == 0.",
    annotations=types.ToolAnnotations(destructive_hint=False),
)
def divide(a: float, b: float) -> float:
    if b == 0:
        raise ValueError("division by zero")
    return a / b


@mcp.tool(description="Count to n, reporting progress and logging each step.")
async def slow_count(n: int, ctx: Context) -> str:
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, message=f"step {i}/{n}")
        try:
            await ctx.info(f"counted {i}")
        except Exception:
            pass
    return f"counted to {n}"


@mcp.tool(description="Sleeps for a long time (used to exercise cancellation).")
async def wait_forever(seconds: float = 30.0) -> str:
    await anyio.sleep(seconds)
    return "woke up"


class Confidence(BaseModel):
    confidence: float = Field(description="How confident are you (0..1)?", ge=0, le=1)
    note: str = Field(default="", description="Optional note")


def ask_confidence() -> Elicit[Confidence]:
    return Elicit("How confident are you in this forecast?", Confidence)


@mcp.tool(description="Asks the user for a confidence value via form elicitation.")
async def rate_forecast(
    conf: Annotated[Confidence, Resolve(ask_confidence)], city: str = "Paris"
) -> str:
    return f"{city}: confidence={conf.confidence} note={conf.note!r}"


def ask_model() -> Sample:
    return Sample(
        [
            types.SamplingMessage(
                role="user", content=types.TextContent(type="text", text="Summarize: sunny, 21C")
            )
        ],
        max_tokens=64,
        system_prompt="You are terse.",
        temperature=0.2,
    )


@mcp.tool(description="Summarize via the client's LLM (sampling).")
async def summarize(result: Annotated[types.CreateMessageResult, Resolve(ask_model)]) -> str:
    content = result.content
    text = getattr(content, "text", str(content))
    return f"model {result.model} said: {text}"


def ask_roots() -> ListRoots:
    return ListRoots()


@mcp.tool(description="List the client's roots.")
async def show_roots(roots: Annotated[types.ListRootsResult, Resolve(ask_roots)]) -> str:
    return ", ".join(str(r.uri) for r in roots.roots)


@mcp.tool(description="Ask the user to visit a URL (URL-mode elicitation, handshake era only).")
async def connect_account(ctx: Context) -> str:
    res = await ctx.elicit_url(
        "Please authorize access", "https://example.com/oauth/authorize?x=1", "elic-001"
    )
    return f"url elicitation action={res.action}"


@mcp.tool(description="Registers a new tool and announces list_changed.")
async def add_tool(ctx: Context) -> str:
    if "late_tool" not in {t.name for t in await mcp.list_tools()}:
        mcp.add_tool(lambda: "late", name="late_tool", description="Added at runtime")
    try:
        await ctx.session.send_tool_list_changed()
    except Exception:
        pass
    try:
        await ctx.notify_tools_changed()
    except Exception:
        pass
    return "added"


@mcp.resource(
    "config://app",
    name="app-config",
    title="App config",
    mime_type="application/json",
    description="Application configuration",
    annotations=types.Annotations(audience=["user"], priority=0.5),
)
def app_config() -> str:
    return '{"theme": "dark", "retries": 3}'


@mcp.resource("file:///logo.png", name="logo", mime_type="image/png", description="A tiny PNG")
def logo() -> bytes:
    return base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    )


@mcp.resource(
    "weather://{city}/current",
    name="city-weather",
    mime_type="text/plain",
    description="Weather by city",
)
def city_weather(city: str) -> str:
    return f"{city}: sunny, 21.5C"


@mcp.prompt(title="Code review", description="Review a code snippet")
def code_review(code: str, language: str = "python") -> str:
    return f"Please review this {language} code:\n\n{code}"


@mcp.completion()
async def complete(ref, argument, context):
    values = ["python", "pyright", "perl", "php"]
    if argument.name == "language":
        hits = [v for v in values if v.startswith(argument.value)]
        return types.Completion(values=hits, total=len(hits), has_more=False)
    if argument.name == "city":
        hits = [c for c in ["Paris", "Prague", "Porto"] if c.startswith(argument.value)]
        return types.Completion(values=hits, total=len(hits), has_more=False)
    return None


# Handshake-era extras on the low-level server: resources/subscribe, unsubscribe, logging/setLevel.
_low = mcp._lowlevel_server


async def _subscribe(ctx, params):
    try:
        await ctx.session.send_resource_updated(params.uri)
    except Exception:
        pass
    return types.EmptyResult()


async def _unsubscribe(ctx, params):
    return types.EmptyResult()


async def _set_level(ctx, params):
    try:
        await ctx.session.send_log_message(
            level="notice", data={"msg": f"level set to {params.level}"}, logger="py-peer"
        )
    except Exception:
        pass
    return types.EmptyResult()


_low.add_request_handler("resources/subscribe", types.SubscribeRequestParams, _subscribe)
_low.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, _unsubscribe)
_low.add_request_handler("logging/setLevel", types.SetLevelRequestParams, _set_level)


if __name__ == "__main__":
    import sys

    if (
        len(sys.argv) > 2 and sys.argv[1] == "http"
    ):  # python py_server.py http PORT  (127.0.0.1 only)
        mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        mcp.run("stdio")
