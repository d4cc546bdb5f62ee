"""The gateway's tables a client fills, each a share per caller
(`mcp_schema.shares`): the handshake front's sessions, the sessions the
`ExchangeValidator` follows, and the era bridge's upstream sessions (the
children of `StdioBridge`). For each, two callers: one fills its share and
is refused, 429 with ``Retry-After`` and -31429 to its request's id, with
nothing changed; the other is still served, and nobody's entry was taken
to make room. All in memory: no upstream is reached."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_schema.gateway import ExchangeValidator
from mcp_schema.gateway.bridge.handshake_front import HandshakeFront
from mcp_schema.gateway.bridge.links import Link
from mcp_schema.gateway.bridge.stateless import Upstream
from mcp_schema.gateway.bridge.stateless_front import BridgeDriver
from mcp_schema.gateway.findings import Findings
from mcp_schema.gateway.http_upstream import upstream_client
from mcp_schema.gateway.monitor.asgi import GatewayApp
from mcp_schema.gateway.monitor.followed import Followed, Place
from mcp_schema.gateway.probe import Served
from mcp_schema.http.caller import SCOPE_KEY, Caller
from mcp_schema.http.precheck import Precheck
from mcp_schema.session import RequestReceived, ServerSession
from mcp_schema.shares import SHARE_EXCEEDED
from tests.hostile import META, raw

UNREACHED = "http://127.0.0.1:9/mcp"  # nothing is sent there: a refusal is the gateway's
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "c", "version": "1"},
}
JSON = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def run(body: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(body(), 20))


def initialize(rid: int = 7) -> bytes:
    return raw({"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": INIT})


def scope(user: str, headers: dict[str, str], caller: Caller | None = None) -> dict[str, Any]:
    given = {**headers, "host": "127.0.0.1:8000", "x-user": user}
    found: dict[str, Any] = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(k.encode(), v.encode()) for k, v in given.items()],
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 5000),
    }
    if caller is not None:
        found[SCOPE_KEY] = caller
    return found


async def call(app: Any, asked: dict[str, Any], body: bytes) -> tuple[int, dict[str, str], Any]:
    """One request to the ASGI ``app``: its status, headers, JSON body."""
    sent: list[dict[str, Any]] = []
    incoming = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if incoming:
            return incoming.pop()
        await asyncio.sleep(20)
        return {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(dict(message))

    await app(asked, receive, send)
    head = {k.decode(): v.decode() for k, v in sent[0]["headers"]}
    text = b"".join(m.get("body", b"") for m in sent[1:])
    return sent[0]["status"], head, json.loads(text) if text else None


def assert_refused(status: int, head: dict[str, str], answer: Any, rid: Any, table: str) -> None:
    assert status == 429 and head["retry-after"] == "5", (status, answer)
    error = answer["error"]
    assert answer["id"] == rid and error["code"] == SHARE_EXCEEDED
    assert error["data"] == {"table": table, "retryAfter": 5}


def by_user() -> Precheck:
    return Precheck(path="/mcp", principal=lambda headers: headers.get("x-user"))


# -- the handshake front's sessions -------------------------------------------------------


def test_the_handshake_fronts_sessions_are_a_share_per_caller() -> None:
    served = Served(
        ("2026-07-28",), False, {"tools": {}}, {"name": "up", "version": "1"}, discovered=True
    )

    async def body() -> None:
        http = upstream_client()
        front = HandshakeFront(
            UNREACHED, served, lambda: http, max_sessions=3, max_sessions_per_key=2,
            precheck=by_user(),
        )  # fmt: skip
        try:
            opened = []
            for _ in range(2):
                status, head, _ = await call(front, scope("alice", JSON), initialize())
                assert status == 200
                opened.append(head["mcp-session-id"])
            alice = "principal alice"
            status, head, answer = await call(front, scope("alice", JSON), initialize(9))
            assert_refused(status, head, answer, 9, "sessions")
            assert len(front.sessions) == 2 and front.sessions.share.held(alice) == 2
            assert not front._opening  # the refused session was never added
            status, head, _ = await call(front, scope("bob", JSON), initialize())
            assert status == 200 and front.sessions.share.held("principal bob") == 1
            for session_id in opened:  # alice's are still hers, bob took none of them
                ping = raw({"jsonrpc": "2.0", "id": 1, "method": "ping"})
                headers = {**JSON, "mcp-session-id": session_id}
                headers["mcp-protocol-version"] = "2025-11-25"
                assert (await call(front, scope("alice", headers), ping))[0] == 200
            status, head, answer = await call(front, scope("carol", JSON), initialize(3))
            assert_refused(status, head, answer, 3, "sessions")  # the table is full: no eviction
            assert len(front.sessions) == 3
        finally:
            front.close()
            await http.aclose()

    run(body)


# -- the sessions the validator follows --------------------------------------------------


def opened(validator: ExchangeValidator, key: str, session_id: str | None) -> Any:
    """An ``initialize`` of ``key``'s, answered with ``session_id`` (None:
    refused upstream, no session)."""
    exchange = validator.request("POST", JSON, initialize(), key=key)
    if exchange.busy is None:
        named = [] if session_id is None else [("mcp-session-id", session_id)]
        exchange.head(200 if session_id else 500, [("content-type", "application/json"), *named])
        exchange.end()
    return exchange


def test_the_sessions_the_validator_follows_are_a_share_per_caller() -> None:
    validator = ExchangeValidator(max_sessions=3, max_sessions_per_key=2)
    share = validator._sessions.share
    first = opened(validator, "alice", "a0")
    assert first.busy is None and opened(validator, "alice", "a1").busy is None
    refused = opened(validator, "alice", "a2")
    assert refused.busy is refused.refusal and refused.busy is not None
    status = refused.busy.status
    head, answer = dict(refused.busy.headers), json.loads(refused.busy.body)
    assert_refused(status, head, answer, 7, "sessions")
    assert validator.sessions == 2 and share.held("alice") == 2  # as it was
    assert opened(validator, "bob", "b0").busy is None
    assert validator.sessions == 3 and share.held("bob") == 1
    assert opened(validator, "carol", "c0").busy is not None  # full: nobody forgotten for it
    follow = {**JSON, "mcp-session-id": "a0"}
    listed = validator.request("POST", follow, raw({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
    assert listed.correlator is first.correlator  # alice's first session is still followed
    gone = validator.request("DELETE", {"mcp-session-id": "b0"})
    gone.head(200, [])
    assert opened(validator, "carol", None).busy is None  # refused upstream: the place is back
    assert share.held("carol") == 0 and validator.sessions == 2


def test_a_followed_session_unused_for_idle_seconds_gives_its_place_back() -> None:
    now = [0.0]
    followed = Followed(2, 1, 60, clock=lambda: now[0])
    place = followed.reserve("alice")
    assert place is not None and followed.reserve("alice") is None
    followed.keep("s", ExchangeValidator()._correlator(), place)
    place.release()  # taken: giving it back now does nothing
    assert followed.share.held("alice") == 1
    now[0] = 61
    assert followed.get("s") is None and followed.share.held("alice") == 0
    assert followed.reserve("alice") is not None


OPS = st.lists(
    st.tuples(st.sampled_from(["reserve", "keep", "release", "forget"]), st.sampled_from("abc")),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(OPS)
def test_followed_sessions_never_pass_a_share_nor_lose_anothers(ops: list[tuple[str, str]]) -> None:
    followed = Followed(4, 2, 60, clock=lambda: 0.0)
    correlator = ExchangeValidator()._correlator()
    places: dict[str, list[Place]] = {k: [] for k in "abc"}
    kept: dict[str, str] = {}  # session id: its owner
    for n, (op, key) in enumerate(ops):
        before = dict(kept)
        if op == "reserve":
            room = followed.share.room(key)
            place = followed.reserve(key)
            assert (place is not None) == room  # refused only past the share or the table
            if place is not None:
                places[key].append(place)
        elif op == "keep" and places[key]:
            followed.keep(f"s{n}", correlator, places[key].pop())
            kept[f"s{n}"] = key
        elif op == "release" and places[key]:
            places[key].pop().release()
        elif op == "forget":
            mine = [s for s, owner in kept.items() if owner == key]
            if mine:
                followed.forget(mine[0])
                del kept[mine[0]]
        if op != "forget":  # nothing but a forget (or idleness) ends a session
            assert all(followed.get(s) is not None for s in before)
        for k in "abc":
            held = sum(owner == k for owner in kept.values()) + len(places[k])
            assert followed.share.held(k) == held <= 2
        assert len(followed) == len(kept) and len(followed.share) <= 4


def test_the_gateway_refuses_an_initialize_past_the_share_before_forwarding_it() -> None:
    async def body() -> None:
        app = GatewayApp(UNREACHED, precheck=by_user())  # monitor mode
        validator = app.validator
        for n in range(validator._sessions.share.per_key):
            assert opened(validator, "principal alice", f"a{n}").busy is None
        status, head, answer = await call(app, scope("alice", JSON), initialize(4))
        assert_refused(status, head, answer, 4, "sessions")  # never sent: else 502
        await app.aclose()

    run(body)


# -- the bridge's upstream sessions ------------------------------------------------------


class Looped(Link):
    """An upstream session answered in memory by a handshake-era `ServerSession`."""

    def __init__(self, upstream: Upstream, driver: BridgeDriver) -> None:
        super().__init__(upstream, driver)
        self.server = ServerSession(
            info={"name": "up", "version": "1"}, capabilities={"tools": {}}, versions=["2025-06-18"]
        )
        self.closed = False

    @property
    def alive(self) -> bool:
        return not self.closed

    async def start(self) -> None:
        self.flush()

    def flush(self) -> None:
        for frame in self.upstream.client.data_to_send():
            for event in self.server.receive(frame):
                if isinstance(event, RequestReceived):
                    self.server.respond(event, {"tools": []})
            for line in self.server.data_to_send():
                self.deliver(self.upstream.client.receive(line), line)

    def answer(self, frame: bytes) -> None:
        pass

    async def close(self) -> None:
        self.closed = True


class Driver(BridgeDriver):
    def new_link(self, upstream: Upstream) -> Link:
        return Looped(upstream, self)


def listed(rid: int, capabilities: dict[str, Any]) -> tuple[dict[str, str], bytes]:
    meta = {**META, "io.modelcontextprotocol/clientCapabilities": capabilities}
    message = {"jsonrpc": "2.0", "id": rid, "method": "tools/list", "params": {"_meta": meta}}
    headers = {**JSON, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"}
    return headers, raw(message)


def test_the_bridges_upstream_sessions_are_a_share_per_caller() -> None:
    async def body() -> None:
        driver = Driver(Findings(None), max_upstreams=3, max_upstreams_per_key=1)
        info = {"name": "up", "version": "1"}
        driver.adopt(Served((), True, {"tools": {}}, info, version="2025-06-18"))
        alice, bob = Caller("alice", "192.0.2.1"), Caller("bob", "192.0.2.2")

        async def served(caller: Caller, rid: int, capabilities: dict[str, Any]) -> Any:
            headers, sent = listed(rid, capabilities)
            asked = scope("", headers, caller)
            return await call(
                lambda s, r, w: driver.serve("POST", headers, sent, r, w, caller), asked, sent
            )

        status, _, answer = await served(alice, 1, {})
        assert status == 200 and answer["result"]["tools"] == []
        (first,) = [link for links in driver.links.values() for link in links]
        assert isinstance(first, Looped)
        first.listens = 1  # in use (a listen): not idle, so not hers to give up
        # Other capabilities, another upstream session: past alice's share.
        status, head, answer = await served(alice, 2, {"elicitation": {}})
        assert_refused(status, head, answer, 2, "upstream sessions")
        assert len(driver.links) == 1 and driver.share.held(alice.key) == 1  # as it was
        status, _, answer = await served(bob, 3, {"elicitation": {}})
        assert status == 200 and driver.share.held(bob.key) == 1
        assert first.alive and not first.closed  # nobody's session was ended for bob
        first.listens = 0  # idle now: alice's own is ended for her next one
        status, _, _ = await served(alice, 4, {"elicitation": {}})
        assert status == 200 and first.closed and driver.share.held(alice.key) == 1
        await driver.aclose()
        assert len(driver.share) == 0

    run(body)
