"""`Context.claim` (and `mcp_schema.session.events.InputReceived.claim`
under it): a sealed round's answer acted on once. The retry of a call whose
handler claims its round runs the confirmed branch once, on any replica
sharing the broker; its replay is refused with -32602 ``already used``; a
broker that cannot be reached refuses the round and the branch never runs;
a sealer without claims refuses every claim."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_schema.broker import BrokerError, InProcessBroker
from mcp_schema.http import Endpoint
from mcp_schema.request_state import StateKeys, StateSealer
from mcp_schema.server import Context, Server
from tests.server.serving import message, post

KEY = "a state key of the tests of 32 bytes or more"
SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
ACCEPTED = {"ok": {"action": "accept", "content": {}}}


class Unreachable(InProcessBroker):
    async def _claim(self, token_id: str, ttl: float) -> bool:
        raise BrokerError("Redis failed to set: TimeoutError")


def redeeming(redeemed: list[str]) -> Server:
    server = Server("claims")

    @server.tool()
    async def redeem(ctx: Context) -> str:
        """Redeem the voucher, once"""
        answer = await ctx.ask("Redeem?", SCHEMA, key="ok")
        await ctx.claim()
        redeemed.append(answer.action)
        return "redeemed"

    return server


def replica(server: Server, claims: Any) -> Endpoint:
    sealer = StateSealer(StateKeys(KEY), claims=claims)
    return Endpoint(
        server.handler, info=server.info, capabilities=server.capabilities, request_state=sealer
    )


def retried(first: Endpoint, second: Endpoint) -> tuple[dict[str, Any], dict[str, Any]]:
    """The call through ``first``, its retry through ``second``, the same
    retry again through ``first``: the two answers to the retry."""

    async def body() -> tuple[dict[str, Any], dict[str, Any]]:
        call = message("tools/call", {"name": "redeem", "arguments": {}})
        asked = await post(first, call)
        state = asked["result"]["requestState"]
        params = {"name": "redeem", "arguments": {}, "requestState": state}
        retry = message("tools/call", {**params, "inputResponses": ACCEPTED}, id=8)
        return await post(second, retry), await post(first, retry)

    return asyncio.run(asyncio.wait_for(body(), 10))


def test_a_claimed_round_is_acted_on_once_across_replicas() -> None:
    redeemed: list[str] = []
    server = redeeming(redeemed)
    shared = InProcessBroker()
    served, replayed = retried(replica(server, shared), replica(server, shared))
    assert served["result"]["content"][0]["text"] == "redeemed"
    assert replayed["id"] == 8 and replayed["error"]["code"] == -32602
    assert replayed["error"]["data"]["errors"][0]["reason"] == "already used"
    assert redeemed == ["accept"]


def test_a_broker_that_cannot_be_reached_refuses_the_round() -> None:
    redeemed: list[str] = []
    server = redeeming(redeemed)
    broker = Unreachable()
    served, _ = retried(replica(server, broker), replica(server, broker))
    assert served["id"] == 8 and served["error"]["code"] == -32603
    assert redeemed == []  # the confirmed branch never ran


def test_a_sealer_without_claims_refuses_every_claim() -> None:
    redeemed: list[str] = []
    server = redeeming(redeemed)
    served, _ = retried(replica(server, None), replica(server, None))
    assert served["error"]["code"] == -32603 and "claims" in served["error"]["message"]
    assert redeemed == []
