"""``gateway --loop``: the event loop the gateway runs on, chosen as
uvicorn's ``--loop`` chooses it (``auto``: uvloop where installed)."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys

import pytest

from mcp_schema.gateway.command import add_arguments
from mcp_schema.gateway.options import GatewayError, loop_runner


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(["--listen", "127.0.0.1:0", "--upstream", "http://x/mcp", *argv])


def test_auto_is_the_default_and_asyncio_runs_asyncio() -> None:
    assert parsed().loop == "auto"
    assert loop_runner(parsed("--loop", "asyncio").loop) is asyncio.run


def test_auto_takes_uvloop_where_installed_and_asyncio_where_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    try:
        uvloop = importlib.import_module("uvloop")  # no stubs where it is not installed
    except ImportError:
        assert loop_runner("auto") is asyncio.run
    else:
        assert loop_runner("auto") is uvloop.run
        assert loop_runner("uvloop") is uvloop.run
    monkeypatch.setitem(sys.modules, "uvloop", None)  # an import of it now fails
    assert loop_runner("auto") is asyncio.run
    with pytest.raises(GatewayError, match="--loop uvloop needs uvloop"):
        loop_runner("uvloop")


def test_a_loop_of_no_choice_is_refused() -> None:
    with pytest.raises(SystemExit):
        parsed("--loop", "trio")
    with pytest.raises(GatewayError, match="--loop must be one of auto, asyncio, uvloop"):
        loop_runner("trio")


def test_the_runner_runs_the_coroutine_to_its_end() -> None:
    ran: list[str] = []

    async def main() -> None:
        await asyncio.sleep(0)
        ran.append(type(asyncio.get_running_loop()).__module__.split(".")[0])

    loop_runner("auto")(main())
    assert len(ran) == 1 and ran[0] in ("asyncio", "uvloop")
