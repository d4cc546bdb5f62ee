"""Shares counted (``mcp_schema.shares``): each entry granted and each
refusal, by table and outcome alone (never the caller's key: a principal
or an address), and the 429 the front door answers by its own code."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_schema.http import Endpoint
from mcp_schema.http.asgi import App
from mcp_schema.http.sessions import MemorySessions
from mcp_schema.shares import Share
from tests.telemetry.conftest import Recorded
from tests.telemetry.test_front_door import HEADERS, client, refusals


def shares(recorded: Recorded) -> dict[tuple[str, str], int]:
    found = {}
    for point in recorded.points("mcp_schema.shares"):
        attributes = dict(point.attributes)
        assert set(attributes) == {"mcp_schema.table", "mcp_schema.outcome"}  # no key
        found[attributes["mcp_schema.table"], attributes["mcp_schema.outcome"]] = point.value
    return found


def test_a_share_counts_grants_and_refusals_but_not_a_retried_acquire(
    recorded: Recorded,
) -> None:
    share = Share("live tasks", total=2, per_key=1)
    share.observe(recorded.telemetry)
    share.observe(None)  # a second owner: the first one's telemetry stays
    assert share.acquire("alice@example.com")
    assert not share.acquire("alice@example.com")  # failed, then room is made and it is retried
    share.release("alice@example.com")
    share.take("alice@example.com")
    with pytest.raises(Exception, match="Too many requests"):
        share.take("alice@example.com")
    assert shares(recorded) == {("live tasks", "granted"): 2, ("live tasks", "refused"): 1}


def initialize(n: int) -> dict[str, Any]:
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"},
    }
    return {"jsonrpc": "2.0", "id": n, "method": "initialize", "params": params}


@pytest.mark.anyio
async def test_the_endpoints_sessions_share_is_counted_and_its_429_by_code(
    recorded: Recorded,
) -> None:
    endpoint = Endpoint(
        lambda session, event: None,
        info={"name": "e", "version": "1"},
        sessions=MemorySessions(4, max_per_key=1),
        telemetry=recorded.telemetry,
    )
    async with client(App(endpoint)) as http:
        assert (await http.post("/mcp", json=initialize(1), headers=HEADERS)).status_code == 200
        full = await http.post("/mcp", json=initialize(2), headers=HEADERS)
        assert full.status_code == 429, full.text
    assert shares(recorded) == {("sessions", "granted"): 1, ("sessions", "refused"): 1}
    assert refusals(recorded) == {("-31429", 429, "received", "initialize"): 1}
