"""The gateway's ``--share-sessions`` and ``--share-upstreams`` options: read
once at parse (``PER:TOTAL``, two positive counts, the caller's at most the
table's; anything else is exit status 2 and says why), and given to the
tables they bound, where a configured share refuses at its bound with 429
and the request's id. No upstream is reached."""

from __future__ import annotations

import argparse
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_schema.cli import main
from mcp_schema.gateway.command import add_arguments, app_of
from mcp_schema.gateway.monitor.asgi import GatewayApp
from mcp_schema.gateway.monitor.stdio import StdioGatewayApp
from mcp_schema.gateway.options import (
    MOST_SHARED,
    SessionBounds,
    ShareBound,
    UpstreamBounds,
    share_bound,
)
from mcp_schema.gateway.probe import Served
from mcp_schema.proxy import ReportLog
from tests.gateway.test_gateway_shares import UNREACHED, assert_refused, opened

UP = ["--listen", "127.0.0.1:0", "--upstream", "http://127.0.0.1:1/mcp"]
STDIO = ["--listen", "127.0.0.1:0", "--", "never-started"]


def parsed(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(argv)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, MOST_SHARED), st.integers(1, MOST_SHARED))
def test_a_share_is_two_counts_the_callers_at_most_the_tables(per: int, total: int) -> None:
    value = f"{per}:{total}"
    if per <= total:
        assert share_bound(value) == ShareBound(per, total)
    else:
        with pytest.raises(argparse.ArgumentTypeError, match="must not exceed"):
            share_bound(value)


NOT_PAIRS = ["", "4", "4:", ":32", "0:32", "4:0", "-1:32", "4:32:1", "a:b", "4.0:32", "٤:32"]


@pytest.mark.parametrize("value", [*NOT_PAIRS, f"1:{MOST_SHARED + 1}", "1:" + "9" * 400])
def test_a_share_that_is_no_pair_of_counts_is_status_2(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for option in ("--share-sessions", "--share-upstreams"):
        with pytest.raises(SystemExit) as stopped:
            main(["gateway", *UP, "--bridge", f"{option}={value}"])
        assert stopped.value.code == 2
        err = capsys.readouterr().err
        assert f"argument {option}: give PER:TOTAL" in err and len(err) < 2000


def test_upstream_shares_without_a_bridge_are_status_2(capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["gateway", *STDIO[:2], "--share-upstreams", "2:8", *STDIO[2:]]) == 2
    assert capfd.readouterr().err == "error: --share-upstreams bounds the bridge's: give --bridge\n"


def test_the_shares_reach_the_stdio_gateways_children_and_its_bridge() -> None:
    argv = [*STDIO[:2], "--bridge", "--share-sessions", "2:5", "--share-upstreams", "1:3"]
    app = app_of(parsed([*argv, *STDIO[2:]]), ReportLog())
    assert isinstance(app, StdioGatewayApp)
    assert (app.share.per_key, app.share.total) == (2, 5)
    assert app._bridge_factory is not None
    bridge = app._bridge_factory(app)  # as its start builds it
    assert (bridge.share.per_key, bridge.share.total) == (1, 3)
    plain = app_of(parsed(STDIO), ReportLog())
    assert isinstance(plain, StdioGatewayApp)
    assert (plain.share.per_key, plain.share.total) == (4, 32)  # the defaults, unchanged


def test_a_configured_session_share_refuses_at_its_bound_with_429_and_the_id() -> None:
    app = app_of(parsed([*UP, "--share-sessions", "1:2"]), ReportLog())
    assert isinstance(app, GatewayApp)
    validator = app.validator
    assert opened(validator, "alice", "a0").busy is None
    refused = opened(validator, "alice", "a1")  # her one session is held
    assert refused.busy is not None
    head, answer = dict(refused.busy.headers), json.loads(refused.busy.body)
    assert_refused(refused.busy.status, head, answer, 7, "sessions")
    assert opened(validator, "bob", "b0").busy is None  # another caller: served
    full = opened(validator, "carol", "c0")  # the table's two are held
    assert full.busy is not None and json.loads(full.busy.body)["id"] == 7
    default = app_of(parsed(UP), ReportLog())
    assert isinstance(default, GatewayApp)
    share = default.validator._sessions.share
    assert (share.per_key, share.total) == (1000, 10000)


def test_the_http_gateway_gives_its_shares_to_the_bridge_it_builds() -> None:
    info = {"name": "up", "version": "1"}
    stateless = Served(("2026-07-28",), False, {"tools": {}}, info, discovered=True)
    handshake = Served((), True, {"tools": {}}, info, version="2025-06-18")
    bounds = SessionBounds(max_sessions=3, max_sessions_per_key=1)
    up = UpstreamBounds(max_upstreams=5, max_upstreams_per_key=2)
    front = GatewayApp(UNREACHED, served=stateless, bridge=True, **bounds, **up)
    assert front.front is not None and front.back is None
    assert (front.front.sessions.share.per_key, front.front.sessions.share.total) == (1, 3)
    back = GatewayApp(UNREACHED, served=handshake, bridge=True, **bounds, **up)
    assert back.back is not None and (back.back.share.per_key, back.back.share.total) == (2, 5)
    with pytest.raises(ValueError, match="must not exceed"):  # checked, bridged or not
        GatewayApp(UNREACHED, max_upstreams=2, max_upstreams_per_key=3)
