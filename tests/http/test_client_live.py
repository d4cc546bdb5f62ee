"""`mcp_schema.http.client.HttpClient` (httpx) against real servers under
uvicorn on 127.0.0.1: examples/http_server.py (both eras) and a
handshake-era-only endpoint serving the same handlers; the auto mode, both
eras, asks with and without a callback, and a listen."""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_schema.errors import InvalidParamsError
from mcp_schema.http import Endpoint
from mcp_schema.http.asgi import App
from mcp_schema.http.client import HttpClient
from mcp_schema.session import InputRequested, NotificationReceived
from tests.http.test_asgi import serving

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
INFO = {"name": "live-client", "version": "1"}


def loaded(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


http_server = loaded("http_server")
pytestmark = pytest.mark.filterwarnings("ignore:The logging capability is deprecated")


@pytest.fixture(scope="module")
def both_eras() -> Iterator[str]:
    with serving(http_server.server.asgi(env={})) as (host, port):
        yield f"http://{host}:{port}/mcp"


@pytest.fixture(scope="module")
def handshake_only() -> Iterator[str]:
    endpoint = Endpoint(
        http_server.server.handler,
        info={"name": "handshake-only", "version": "1"},
        capabilities={"tools": {}},
        versions=["2025-11-25", "2025-06-18"],
        handler_version="2026-07-28",
    )
    with serving(App(endpoint)) as (host, port):
        yield f"http://{host}:{port}/mcp"


async def word(event: InputRequested) -> dict[str, Any]:
    return {key: {"action": "accept", "content": {"text": "yes"}} for key in event.requests}


def said(result: Any) -> str:
    return str(result.content[0].text)


async def asked(url: str, *, callback: bool, **options: Any) -> tuple[str | None, str]:
    """The version negotiated and what the tool ``ask`` answered."""
    capabilities: dict[str, Any] = {"elicitation": {}} if callback else {}
    on_input = word if callback else None
    client = HttpClient(url, info=INFO, capabilities=capabilities, on_input=on_input, **options)
    async with client:
        echoed = await client.call_tool("echo", {"text": "hi"})
        assert said(echoed) == "hi"
        return client.session.version, said(await client.call_tool("ask"))


@pytest.mark.parametrize("callback", [True, False])
def test_auto_mode_against_a_server_of_both_eras(both_eras: str, callback: bool) -> None:
    version, answer = asyncio.run(asked(both_eras, callback=callback))
    assert version == "2026-07-28"
    assert answer == ("you said yes" if callback else "this client cannot be asked")


@pytest.mark.parametrize("callback", [True, False])
def test_auto_mode_falls_back_to_a_handshake_era_server(
    handshake_only: str, callback: bool
) -> None:
    version, answer = asyncio.run(asked(handshake_only, callback=callback))
    assert version == "2025-11-25"
    assert answer == ("you said yes" if callback else "this client cannot be asked")


def test_handshake_mode_against_a_server_of_both_eras(both_eras: str) -> None:
    version, answer = asyncio.run(asked(both_eras, callback=True, mode="handshake"))
    assert (version, answer) == ("2025-11-25", "you said yes")


def test_the_servers_error_is_raised_typed(both_eras: str) -> None:
    async def failing() -> None:
        async with HttpClient(both_eras, info=INFO) as client:
            await client.call_tool("nonesuch")

    with pytest.raises(InvalidParamsError, match="Unknown tool"):
        asyncio.run(failing())


def test_a_listen_brings_the_change_a_call_makes(both_eras: str) -> None:
    async def listened() -> list[str]:
        seen: list[str] = []
        async with HttpClient(both_eras, info=INFO) as client:
            stream = client.listen({"notifications": {"toolsListChanged": True}})
            async for notification in stream:
                assert isinstance(notification, NotificationReceived)
                seen.append(notification.method)
                if len(seen) == 1:
                    await client.call_tool("toggle")
                else:
                    break
            await stream.aclose()
            await client.call_tool("toggle")  # back as it was
        return seen

    seen = asyncio.run(asyncio.wait_for(listened(), 20))
    assert seen == ["notifications/subscriptions/acknowledged", "notifications/tools/list_changed"]
