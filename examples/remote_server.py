"""The server of ``docs/guide/remote-server.md``: three tools, ``lookup``,
``confirm_delete`` (which asks the user first) and ``report`` (a 5-second
job, a task where the client takes one), for both eras and any number of
replicas. ``python -m mcp_schema serve --app-dir examples remote_server:server``."""

import asyncio

from pydantic import BaseModel

from mcp_schema.server import Context, Server

server = Server("weather", version="1.0.0")


class Confirm(BaseModel):
    confirm: bool


@server.tool()
def lookup(city: str) -> str:
    """Today's weather in a city."""
    return f"Sunny in {city}, 21 °C"


@server.tool()
async def confirm_delete(name: str, ctx: Context) -> str:
    """Delete a saved city, once the user confirms."""
    answer = await ctx.ask(f"Delete {name}?", Confirm)
    return f"Deleted {name}" if answer.data and answer.data.confirm else "Kept it"


@server.tool(task=True)
async def report(days: int, ctx: Context) -> str:
    """The weather over the coming days (5 seconds of work)."""
    for day in range(5):
        await ctx.report_progress(day, 5, f"{day} of 5 seconds")
        await asyncio.sleep(1)
    return f"{days} days: mostly sunny"


app = server.asgi()
