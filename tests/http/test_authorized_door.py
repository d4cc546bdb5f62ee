"""The front door with a `ResourceServer` (`Endpoint(auth=...)`, through the
ASGI `App` and `ClusterApp`): the protected resource metadata, the token
checked before anything reaches a handler, the `Caller` built once (the
token's principal, the address behind trusted proxies only), handshake-era
sessions bound to the principal that opened them, the caller forwarded
between replicas without ``Authorization``, and streams ending with their
token. Tokens are signed here and checked against an authorization server
in memory (`tests.auth.tokens`); tests/auth runs the real one."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from mcp_schema.auth import Access
from mcp_schema.broker import InProcessBroker
from mcp_schema.http import Endpoint
from mcp_schema.http.asgi import App
from mcp_schema.http.caller import Caller
from mcp_schema.http.forward import ClusterApp
from mcp_schema.http.shared_sessions import BrokerSessions
from mcp_schema.session import Event, RequestReceived, ServerSession
from tests.auth.test_hostile_tokens import HOSTILE
from tests.auth.tokens import (
    ISSUER,
    METADATA_URL,
    OTHER_RSA_KEY,
    RESOURCE,
    challenge_params,
    claims,
    resource_server,
    sign,
)
from tests.http.test_forward import HEADERS, INIT

ORIGIN = "https://app.example.com"
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "who"}}


class Served:
    """A handler that answers ``tools/call`` with the caller it was given,
    and remembers every request that reached it."""

    def __init__(self) -> None:
        self.requests: list[RequestReceived] = []

    def __call__(self, session: ServerSession, event: Event) -> None:
        if not isinstance(event, RequestReceived):
            return
        self.requests.append(event)
        caller = event.context.caller
        assert caller is not None
        verified = caller.verified
        text = json.dumps(
            {
                "principal": caller.principal,
                "session": session.principal,
                "address": caller.address,
                "scopes": None if verified is None else sorted(verified.scopes),
            }
        )
        session.respond(event, {"content": [{"type": "text", "text": text}]})


def endpoint(served: Served, **options: Any) -> Endpoint:
    return Endpoint(
        served,
        info={"name": "t", "version": "1"},
        capabilities={"tools": {}},
        auth=resource_server(),
        allowed_origins=[ORIGIN],
        **options,
    )


def token(subject: str = "alice", **changed: Any) -> str:
    return sign(claims(sub=subject, **changed))


def run(body: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(body(), 30))


async def call(
    app: Any, scope: dict[str, Any], body: bytes = b""
) -> tuple[int, dict[str, str], bytes]:
    """One request to ``app`` by its ASGI ``scope``: status, head, body."""
    sent: list[dict[str, Any]] = []
    incoming = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if incoming:
            return incoming.pop()
        await asyncio.sleep(30)
        return {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(dict(message))

    await app(scope, receive, send)
    head = {k.decode(): v.decode() for k, v in sent[0]["headers"]}
    return sent[0]["status"], head, b"".join(m.get("body", b"") for m in sent[1:])


def scope(
    method: str,
    path: str = "/mcp",
    *,
    bearer: str | None = None,
    client: tuple[str, int] = ("203.0.113.9", 5000),
    **headers: str,
) -> dict[str, Any]:
    given = {
        **HEADERS,
        "host": "mcp.example.com",
        **{k.replace("_", "-"): v for k, v in headers.items()},
    }
    if bearer is not None:
        given["authorization"] = f"Bearer {bearer}"
    return {
        "type": "http",
        "method": method,
        "path": path,
        "headers": [(k.encode(), v.encode()) for k, v in given.items()],
        "server": ("10.0.0.2", 8000),
        "client": client,
    }


def posted(
    message: dict[str, Any], bearer: str | None, **options: Any
) -> tuple[dict[str, Any], bytes]:
    return scope("POST", bearer=bearer, **options), json.dumps(message).encode()


META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
}


def stateless(bearer: str | None, **options: Any) -> tuple[dict[str, Any], bytes]:
    """A 2026-07-28 ``tools/call`` of ``who``, with its headers."""
    message = {**CALL, "params": {"name": "who", "_meta": META}}
    headers = {"mcp_protocol_version": "2026-07-28", "mcp_method": "tools/call", "mcp_name": "who"}
    return posted(message, bearer, **headers, **options)


def text_of(body: bytes) -> dict[str, Any]:
    answer = json.loads(body)
    return json.loads(answer["result"]["content"][0]["text"])  # type: ignore[no-any-return]


# -- metadata and challenges --------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
)
def test_the_metadata_is_served_at_both_well_known_paths_without_a_token(path: str) -> None:
    async def body() -> None:
        app = App(endpoint(Served()))
        status, head, document = await call(app, scope("GET", path, origin="https://any.example"))
        assert status == 200 and head["access-control-allow-origin"] == "*"
        assert json.loads(document)["authorization_servers"] == [ISSUER]
        assert json.loads(document)["resource"] == RESOURCE
        preflight = scope("OPTIONS", path, origin="https://any.example")
        assert (await call(app, preflight))[0] == 204

    run(body)


def test_a_request_without_a_token_is_challenged_and_reaches_no_handler() -> None:
    async def body() -> None:
        served = Served()
        app = App(endpoint(served))
        status, head, answer = await call(app, *posted(CALL, None))
        assert status == 401
        assert challenge_params(head["www-authenticate"]) == {"resource_metadata": METADATA_URL}
        assert json.loads(answer)["error"]["code"] < 0
        status, head, _ = await call(app, *posted(CALL, token(aud="https://other.example/mcp")))
        assert status == 401
        params = challenge_params(head["www-authenticate"])
        assert params["error"] == "invalid_token" and params["resource_metadata"] == METADATA_URL
        assert served.requests == []

    run(body)


def test_a_browser_preflight_needs_no_token_and_a_challenge_is_readable() -> None:
    async def body() -> None:
        app = App(endpoint(Served()))
        asked = scope("OPTIONS", origin=ORIGIN, access_control_request_method="POST")
        status, head, _ = await call(app, asked)
        assert status == 204 and head["access-control-allow-origin"] == ORIGIN
        status, head, _ = await call(app, *posted(CALL, None, origin=ORIGIN))
        assert status == 401 and head["access-control-allow-origin"] == ORIGIN
        assert "WWW-Authenticate" in head["access-control-expose-headers"]

    run(body)


def test_the_handler_sees_the_verified_principal_and_the_address() -> None:
    async def body() -> None:
        served = Served()
        app = App(endpoint(served))
        status, _, answer = await call(
            app,
            *stateless(token(scope="tools:read files")),
        )
        assert status == 200, answer
        seen = text_of(answer)
        name = json.dumps([ISSUER, "sub", "alice"], separators=(",", ":"))
        assert seen == {
            "principal": name,
            "session": name,
            "address": "203.0.113.9",
            "scopes": ["files", "tools:read"],
        }

    run(body)


# -- sessions bound to their principal ----------------------------------------------------


async def opened(app: Any, bearer: str) -> str:
    status, head, answer = await call(app, *posted(INIT, bearer))
    assert status == 200, answer
    session_id = head["mcp-session-id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await call(app, *posted(initialized, bearer, mcp_session_id=session_id)))[0] == 202
    return session_id


def test_another_principal_cannot_use_or_end_a_session() -> None:
    async def body() -> None:
        served = Served()
        app = App(endpoint(served))
        alice, bob = token("alice"), token("bob")
        session_id = await opened(app, alice)
        status, _, answer = await call(app, *posted(CALL, bob, mcp_session_id=session_id))
        assert status == 404 and json.loads(answer)["id"] == 1
        for method in ("DELETE", "GET"):
            refused = scope(
                method, bearer=bob, mcp_session_id=session_id, accept="text/event-stream"
            )
            assert (await call(app, refused))[0] == 404
        assert served.requests == []
        status, _, answer = await call(
            app, *posted(CALL, token("alice"), mcp_session_id=session_id)
        )
        assert status == 200 and "alice" in text_of(answer)["session"]
        ended = scope("DELETE", bearer=alice, mcp_session_id=session_id)
        assert (await call(app, ended))[0] == 200

    run(body)


def test_a_stream_ends_when_its_token_expires() -> None:
    async def body() -> None:
        app = App(endpoint(Served()))
        session_id = await opened(app, token("alice"))
        short = token("alice", exp=int(time.time()) + 1)
        listening = scope(
            "GET", bearer=short, mcp_session_id=session_id, accept="text/event-stream"
        )
        started = time.monotonic()
        status, _, _ = await asyncio.wait_for(call(app, listening), 10)
        assert status == 200 and time.monotonic() - started < 5

    run(body)


def test_the_sans_io_handle_refuses_what_it_cannot_check() -> None:
    served = Served()
    made = endpoint(served)
    answer = made.handle("POST", "/mcp", {**HEADERS}, json.dumps(CALL).encode())
    assert answer.status == 500 and served.requests == []
    done = asyncio.run(made.handle_async("POST", "/mcp", {**HEADERS}, json.dumps(CALL).encode()))
    assert done.status == 401


# -- the client's address -----------------------------------------------------------------


def test_forwarding_headers_are_believed_from_trusted_proxies_alone() -> None:
    async def body() -> None:
        app = App(endpoint(Served(), trusted_proxies=["10.0.0.0/8"]))
        direct = stateless(token(), x_forwarded_for="198.51.100.7")
        assert text_of((await call(app, *direct))[2])["address"] == "203.0.113.9"
        behind, raw = stateless(
            token(),
            client=("10.1.2.3", 4000),
            x_forwarded_for="192.0.2.1, 198.51.100.7, 10.9.9.9",
        )
        assert text_of((await call(app, behind, raw))[2])["address"] == "198.51.100.7"
        rfc, raw = stateless(
            token(),
            client=("10.1.2.3", 4000),
            forwarded='for="[2001:db8::1]:4711";proto=https',
        )
        assert text_of((await call(app, rfc, raw))[2])["address"] == "2001:db8::1"

    run(body)


# -- across replicas ----------------------------------------------------------------------


class Recording(InProcessBroker):
    """An `InProcessBroker` remembering every message published."""

    def __init__(self) -> None:
        super().__init__()
        self.published: list[bytes] = []

    async def publish(self, channel: str, data: bytes) -> bool:
        self.published.append(data)
        return await super().publish(channel, data)


@asynccontextmanager
async def replicas(
    broker: InProcessBroker, served: Served, **options: Any
) -> AsyncIterator[list[ClusterApp]]:
    apps = [
        ClusterApp(
            App(endpoint(served, sessions=BrokerSessions(broker, replica=f"r{i}"), **options))
        )
        for i in range(2)
    ]
    for app in apps:
        await app.start()
    try:
        yield apps
    finally:
        for app in apps:
            await app.stop()


def test_a_forwarded_request_carries_the_caller_and_never_the_token() -> None:
    async def body() -> None:
        broker, served = Recording(), Served()
        async with replicas(broker, served) as (a, b):
            alice = token("alice")
            session_id = await opened(a, alice)
            status, _, answer = await call(
                b, *posted(CALL, alice, mcp_session_id=session_id, x_forwarded_for="198.51.100.7")
            )
            assert status == 200, answer
            seen = text_of(answer)
            assert "alice" in seen["principal"] and seen["address"] == "203.0.113.9"
            assert seen["scopes"] == ["tools:read"]
            opens = [m for m in broker.published if m.startswith(b'{"t":"open"')]
            assert opens and all(alice.encode() not in m for m in broker.published)
            assert all(b"authorization" not in m.split(b"\n")[0] for m in opens)
            count = len(served.requests)
            refused = posted(CALL, token("bob"), mcp_session_id=session_id)
            assert (await call(b, *refused))[0] == 404
            assert (await call(b, *posted(CALL, None, mcp_session_id=session_id)))[0] == 401
            bad = sign(claims(sub="alice"), key=OTHER_RSA_KEY)
            assert (await call(b, *posted(CALL, bad, mcp_session_id=session_id)))[0] == 401
            assert len(served.requests) == count

    run(body)


def test_a_scoped_tool_is_gated_by_the_scopes_the_forward_carries() -> None:
    """The holder's gate decides a forwarded call by the token the other
    replica verified: its scopes travel with the caller, the token does not."""
    access = Access(
        scopes=lambda kind, name: {"files:write"} if name == "who" else (),
        resource_metadata=METADATA_URL,
    )

    async def body() -> None:
        broker, served = Recording(), Served()
        async with replicas(broker, served, access=access) as (a, b):
            writer = token("alice", scope="tools:read files:write")
            session_id = await opened(a, writer)
            status, _, answer = await call(b, *posted(CALL, writer, mcp_session_id=session_id))
            assert status == 200, answer
            assert text_of(answer)["scopes"] == ["files:write", "tools:read"]
            assert all(writer.encode() not in m for m in broker.published)
            count = len(served.requests)
            reader = token("alice", scope="tools:read")  # hers too, without the tool's scope
            status, head, answer = await call(b, *posted(CALL, reader, mcp_session_id=session_id))
            assert status == 403 and json.loads(answer)["id"] == 1, answer
            found = challenge_params(head["www-authenticate"])
            assert found["error"] == "insufficient_scope" and "files:write" in found["scope"]
            assert found["resource_metadata"] == METADATA_URL
            assert len(served.requests) == count  # the handler never saw it

    run(body)


def test_a_caller_survives_the_wire() -> None:
    from mcp_schema.http.caller_wire import caller_of, caller_wire

    assert caller_of(caller_wire(Caller("p", "192.0.2.1"))) == Caller("p", "192.0.2.1")
    malformed: object
    for malformed in (None, [], {"principal": 1}, {"principal": "p", "verified": {"issuer": 1}}):
        assert caller_of(malformed) is None


# -- hostile tokens -----------------------------------------------------------------------


@pytest.mark.parametrize("make", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_token_reaches_no_handler_on_any_door(make: Callable[[], str]) -> None:
    async def body() -> None:
        served, hostile = Served(), make()
        for sent in (stateless(hostile), posted(INIT, hostile)):
            status, head, _ = await call(App(endpoint(served)), *sent)
            assert status == 401 and "invalid_token" in head["www-authenticate"]
        async with replicas(InProcessBroker(), served) as (a, b):
            session_id = await opened(a, token("alice"))
            count = len(served.requests)
            for door in (a, b):
                refused = posted(CALL, hostile, mcp_session_id=session_id)
                assert (await call(door, *refused))[0] == 401
            assert len(served.requests) == count

    run(body)
