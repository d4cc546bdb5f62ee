"""Authorization per tool, resource and prompt, through the endpoint a
replica serves (`Server.access` as its gate): a missing scope is the 403
step-up challenge before any answer starts, a policy's denial hides the item
and answers as an unknown one, the lists (and the resource updates a listen
hears) are filtered by the same rules, private on every page. The
principals are built directly; the front door's place for them is
`mcp_schema.http.gate.VERIFIED`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Collection
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_schema.auth import Attempt, Principal, ScopeHierarchy
from mcp_schema.http import Endpoint
from mcp_schema.http.gate import VERIFIED
from mcp_schema.http.stream import Response
from mcp_schema.http_headers import request_headers
from mcp_schema.server import Server
from mcp_schema.subscriptions import Subscriptions
from tests.server.serving import BASE, HANDSHAKE, VERSION, message

METADATA = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
SSE_ONLY = {"content-type": "application/json", "accept": "text/event-stream"}


def who(*scopes: str, subject: str = "alice") -> Principal:
    return Principal("https://auth.example.com", subject, "app", frozenset(scopes), None)


class Files:
    """A server of scoped tools, resources and a prompt; ``ran`` names each function run."""

    def __init__(self, cache_scope: str = "private", **options: Any) -> None:
        self.ran: list[str] = []
        server = self.server = Server("files", **options)
        ran = self.ran

        @server.tool(scopes=["files:read"])
        def read_file(path: str) -> str:
            ran.append("read_file")
            return f"read {path}"

        @server.tool(scopes=["files:read", "files:write"])
        def write_file(path: str, text: str) -> str:
            ran.append("write_file")
            return f"wrote {path}"

        @server.tool()
        def hello() -> str:
            ran.append("hello")
            return "hello"

        @server.resource("config://app", scopes=["config"])
        def config() -> str:
            ran.append("config")
            return "{}"

        @server.resource("users://{user_id}", scopes=["users:read"])
        def user(user_id: int) -> str:
            ran.append("user")
            return f"user {user_id}"

        @server.prompt(scopes=["prompts"])
        def review(code: str) -> str:
            ran.append("review")
            return f"review {code}"

        server.access.resource_metadata = METADATA
        self.endpoint = Endpoint(
            server.handler,
            info=server.info,
            capabilities=server.capabilities,
            handler_version=VERSION,
            subscriptions=Subscriptions(),
            access=server.access,
            session_options={"cache_scope": cache_scope},  # what an unfiltered list says
        )

    async def send(
        self, principal: Principal | None, value: dict[str, Any], **headers: str
    ) -> Response:
        """The endpoint's response to a POST of ``value`` by ``principal``
        (set where the front door sets it); a call's stream once it ended."""
        sent = {**BASE, **request_headers(value), **headers}
        token = VERIFIED.set(principal)
        try:
            response = await self.endpoint.handle_async(
                "POST", "/mcp", sent, json.dumps(value).encode()
            )
        finally:
            VERIFIED.reset(token)
        stream = response.stream
        if stream is not None and value.get("method") != "subscriptions/listen":
            for _ in range(1000):
                if stream.finished:
                    break
                await asyncio.sleep(0.005)
        return response

    async def answer(self, principal: Principal | None, value: dict[str, Any]) -> dict[str, Any]:
        """The JSON-RPC answer (one JSON body, or the last frame of a stream)."""
        response = await self.send(principal, value)
        return _answer_of(response)

    async def call(
        self, principal: Principal | None, name: str, **arguments: Any
    ) -> tuple[int, dict[str, Any]]:
        response = await self.send(
            principal, message("tools/call", {"name": name, "arguments": arguments})
        )
        return response.status, _answer_of(response)


def _answer_of(response: Response) -> dict[str, Any]:
    if response.stream is None:
        answer: dict[str, Any] = json.loads(response.body)
        return answer
    (last,) = [json.loads(f) for f in response.stream.take_frames() if b'"method"' not in f]
    return last  # type: ignore[no-any-return]


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def names(result: dict[str, Any], member: str = "tools", key: str = "name") -> list[str]:
    return [item[key] for item in result[member]]


# -- scopes -----------------------------------------------------------------------------------


def test_a_call_lacking_a_scope_is_the_403_challenge_naming_every_scope_it_needs() -> None:
    files = Files()
    response = run(
        files.send(
            who("files:read"), message("tools/call", {"name": "write_file", "arguments": {}})
        )
    )
    assert response.status == 403
    challenge = response.header("www-authenticate")
    assert challenge is not None
    assert challenge.startswith('Bearer error="insufficient_scope"')
    assert 'scope="files:read files:write"' in challenge  # all it needs, not only the missing one
    assert f'resource_metadata="{METADATA}"' in challenge
    body = json.loads(response.body)
    assert body["id"] == 7 and body["error"]["code"] < 0
    assert files.ran == []


def test_the_challenge_comes_before_any_event_stream_starts() -> None:
    files = Files()
    value = message("tools/call", {"name": "read_file", "arguments": {"path": "a"}})
    response = run(files.send(who(), value, **SSE_ONLY))
    assert response.status == 403 and response.stream is None
    assert response.header("content-type") == "application/json"
    granted = run(files.send(who("files:read"), value, **SSE_ONLY))
    assert granted.status == 200
    assert _answer_of(granted)["result"]["content"][0]["text"] == "read a"


def test_a_call_with_the_scopes_runs_and_one_needing_none_needs_no_token() -> None:
    files = Files()
    assert run(files.call(who("files:read"), "read_file", path="x"))[0] == 200
    status, answer = run(files.call(None, "hello"))
    assert status == 200 and answer["result"]["content"][0]["text"] == "hello"
    status, _ = run(files.call(None, "read_file", path="x"))
    assert status == 403  # no principal: nothing granted
    assert files.ran == ["read_file", "hello"]


def test_a_broader_scope_grants_the_narrower_ones_it_implies() -> None:
    files = Files()
    files.server.access.hierarchy = ScopeHierarchy({"files": ["files:read", "files:write"]})
    status, answer = run(files.call(who("files"), "write_file", path="p", text="t"))
    assert status == 200, answer
    assert files.ran == ["write_file"]


def test_offline_access_is_no_items_requirement() -> None:
    server = Server("refresh")
    with pytest.raises(ValueError, match="offline_access"):

        @server.tool(scopes=["offline_access"])
        def keep() -> None: ...

    with pytest.raises(TypeError, match="one string"):

        @server.tool(scopes="files:read")
        def read() -> None: ...


def test_resources_templates_and_prompts_need_their_scopes_too() -> None:
    files = Files()
    read = message("resources/read", {"uri": "users://42"})
    assert run(files.send(who(), read)).status == 403
    answer = run(files.answer(who("users:read"), read))
    assert answer["result"]["contents"][0]["text"] == "user 42"
    config = run(files.send(who("users:read"), message("resources/read", {"uri": "config://app"})))
    assert config.status == 403 and 'scope="config"' in (config.header("www-authenticate") or "")
    get = message("prompts/get", {"name": "review", "arguments": {"code": "x"}})
    assert run(files.send(who(), get)).status == 403
    assert "messages" in run(files.answer(who("prompts"), get))["result"]
    assert files.ran == ["user", "review"]


def test_an_item_lacking_scopes_stays_listed_unless_configured_otherwise() -> None:
    listed = run(Files().answer(who(), message("tools/list")))
    assert names(listed["result"]) == ["read_file", "write_file", "hello"]
    hidden = run(Files(list_missing=False).answer(who("files:read"), message("tools/list")))
    assert names(hidden["result"]) == ["read_file", "hello"]
    assert hidden["result"]["cacheScope"] == "private"


def test_a_step_up_leaves_a_handshake_session_as_it_was() -> None:
    files = Files()
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": HANDSHAKE,
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        },
    }
    opened = run(files.send(who(), init))
    session = {
        "mcp-session-id": opened.header("mcp-session-id") or "",
        "mcp-protocol-version": HANDSHAKE,
    }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert run(files.send(who(), initialized, **session)).status == 202
    call = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"path": "h"}},
    }
    refused = run(files.send(who(), call, **session, accept="text/event-stream"))
    assert refused.status == 403 and refused.stream is None
    assert json.loads(refused.body)["id"] == 3
    again = run(files.send(who("files:read"), call, **session))  # the same id: never seen
    assert _answer_of(again)["result"]["content"][0]["text"] == "read h"
    listed = _answer_of(
        run(files.send(who(), {**call, "id": 4, "method": "tools/list", "params": {}}, **session))
    )
    assert "cacheScope" not in listed["result"]  # no such member in that version


# -- the policy -------------------------------------------------------------------------------


def deny(*hidden: str) -> Any:
    def policy(attempt: Attempt) -> bool:
        return attempt.name not in hidden

    return policy


def test_a_denied_tool_is_hidden_and_its_call_answered_as_an_unknown_ones() -> None:
    files = Files(policy=deny("write_file"))
    listed = run(files.answer(who("files:read", "files:write"), message("tools/list")))
    assert names(listed["result"]) == ["read_file", "hello"]
    assert listed["result"]["cacheScope"] == "private"
    status, denied = run(files.call(who("files:read", "files:write"), "write_file"))
    ghost = run(files.send(who(), message("tools/call", {"name": "ghost", "arguments": {}})))
    assert status == ghost.status  # no 403: nothing tells it from a tool that is not there
    unknown = _answer_of(ghost)["error"]
    assert denied["error"]["code"] == unknown["code"]
    assert denied["error"]["message"] == unknown["message"].replace("ghost", "write_file")
    assert denied["error"]["data"] == {"name": "write_file"}
    # Denied before the scopes are looked at: no challenge tells it exists.
    without = run(files.send(who(), message("tools/call", {"name": "write_file", "arguments": {}})))
    assert without.status == ghost.status and without.header("www-authenticate") is None
    assert files.ran == []


def test_the_policy_sees_the_principal_the_method_the_item_and_its_arguments() -> None:
    seen: list[Attempt] = []

    def policy(attempt: Attempt) -> bool:
        seen.append(attempt)
        return True

    files = Files(policy=policy)
    alice = who("files:read")
    run(files.call(alice, "read_file", path="/etc/passwd"))
    (attempt,) = seen
    assert attempt.principal is alice and attempt.method == "tools/call"
    assert (attempt.kind, attempt.name) == ("tool", "read_file")
    assert dict(attempt.arguments) == {"path": "/etc/passwd"}
    with pytest.raises(TypeError):
        attempt.arguments["path"] = "changed"  # type: ignore[index]
    seen.clear()
    run(files.answer(alice, message("resources/read", {"uri": "users://7"})))
    assert [(a.method, a.kind, a.name) for a in seen] == [
        ("resources/read", "resource", "users://7")
    ]


@pytest.mark.parametrize("failure", ["slow", "raises", "truthy", "sync raises"])
def test_a_policy_fails_closed(failure: str, caplog: pytest.LogCaptureFixture) -> None:
    async def slow(attempt: Attempt) -> bool:
        await asyncio.sleep(10)
        return True

    async def raises(attempt: Attempt) -> bool:
        raise RuntimeError("policy store down")

    async def truthy(attempt: Attempt) -> Any:
        return "yes"

    def sync_raises(attempt: Attempt) -> bool:
        raise RuntimeError("bug")

    policies = {"slow": slow, "raises": raises, "truthy": truthy, "sync raises": sync_raises}
    files = Files(policy=policies[failure], policy_seconds=0.05)
    status, answer = run(files.call(who("files:read"), "read_file", path="x"))
    assert status == 200 and answer["error"]["message"] == "Unknown tool: read_file"
    listed = run(files.answer(who("files:read"), message("tools/list")))
    assert names(listed["result"]) == []
    assert files.ran == []
    if failure != "truthy":
        assert "denied" in caplog.text


def test_an_async_policy_is_awaited() -> None:
    async def policy(attempt: Attempt) -> bool:
        await asyncio.sleep(0)
        return attempt.principal is not None and attempt.principal.subject == "alice"

    files = Files(policy=policy)
    assert run(files.call(who("files:read"), "read_file", path="x"))[1]["result"]
    status, answer = run(files.call(who("files:read", subject="bob"), "read_file", path="x"))
    assert status == 200
    assert answer["error"]["message"] == "Unknown tool: read_file"
    bob = run(files.answer(who(subject="bob"), message("tools/list")))
    assert names(bob["result"]) == []


def test_where_nothing_is_awaited_an_async_policy_denies() -> None:
    async def policy(attempt: Attempt) -> bool:
        return True

    files = Files(policy=policy)
    value = message("tools/call", {"name": "hello", "arguments": {}})
    sent = {**BASE, **request_headers(value)}
    response = files.endpoint.handle("POST", "/mcp", sent, json.dumps(value).encode())
    assert json.loads(response.body)["error"]["message"] == "Unknown tool: hello"
    assert files.ran == []


def test_prompts_resources_and_templates_are_listed_through_the_same_filter() -> None:
    files = Files(policy=deny("config://app", "users://{user_id}", "review"))
    alice = who("config", "users:read", "prompts")
    resources = run(files.answer(alice, message("resources/list")))["result"]
    templates = run(files.answer(alice, message("resources/templates/list")))["result"]
    prompts = run(files.answer(alice, message("prompts/list")))["result"]
    assert resources["resources"] == templates["resourceTemplates"] == prompts["prompts"] == []
    for result in (resources, templates, prompts):
        assert result["cacheScope"] == "private"
    open_files = Files()
    shown = run(open_files.answer(alice, message("resources/templates/list")))["result"]
    assert names(shown, "resourceTemplates", "uriTemplate") == ["users://{user_id}"]


def test_a_listen_hears_updates_only_of_resources_its_principal_may_read() -> None:
    files = Files(policy=deny("config://app"))
    asked = {"resourceSubscriptions": ["config://app", "users://1", "users://2"]}
    response = run(
        files.send(
            who("config", "users:read"),
            message("subscriptions/listen", {"notifications": asked}),
            accept="text/event-stream",
        )
    )
    assert response.status == 200 and response.stream is not None
    for uri in ("config://app", "users://1"):
        files.endpoint.subscriptions.resource_updated(uri)
    frames = [json.loads(f) for f in response.stream.take_frames()]
    ack, *updates = frames
    assert ack["params"]["notifications"]["resourceSubscriptions"] == ["users://1", "users://2"]
    assert [u["params"]["uri"] for u in updates] == ["users://1"]
    # A missing scope hides the updates too: the resource cannot be read.
    lacking = run(
        files.send(
            who(),
            message("subscriptions/listen", {"notifications": asked}),
            accept="text/event-stream",
        )
    )
    assert lacking.stream is not None
    (ack,) = [json.loads(f) for f in lacking.stream.take_frames()]
    assert ack["params"]["notifications"].get("resourceSubscriptions", []) == []


# -- the property -----------------------------------------------------------------------------

SCOPES = ["files:read", "files:write", "config", "users:read", "prompts"]
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "read_file": ("tools/call", {"name": "read_file", "arguments": {"path": "p"}}),
    "write_file": ("tools/call", {"name": "write_file", "arguments": {"path": "p", "text": "t"}}),
    "hello": ("tools/call", {"name": "hello", "arguments": {}}),
    "config": ("resources/read", {"uri": "config://app"}),
    "user": ("resources/read", {"uri": "users://3"}),
    "review": ("prompts/get", {"name": "review", "arguments": {"code": "c"}}),
}
NEEDS = {
    "read_file": {"files:read"},
    "write_file": {"files:read", "files:write"},
    "hello": set(),
    "config": {"config"},
    "user": {"users:read"},
    "review": {"prompts"},
}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    granted=st.sets(st.sampled_from([*SCOPES, "files"])),
    allowed=st.sets(st.sampled_from(sorted(CALLS))),
    called=st.sampled_from(sorted(CALLS)),
    asynchronous=st.booleans(),
)
def test_a_call_runs_exactly_when_its_scopes_and_the_policy_allow(
    granted: Collection[str], allowed: Collection[str], called: str, asynchronous: bool
) -> None:
    def permitted(attempt: Attempt) -> bool:
        item = {"config://app": "config", "users://3": "user"}.get(attempt.name, attempt.name)
        return item in allowed

    async def awaited(attempt: Attempt) -> bool:
        return permitted(attempt)

    files = Files(policy=awaited if asynchronous else permitted)
    files.server.access.hierarchy = ScopeHierarchy({"files": ["files:read", "files:write"]})
    method, params = CALLS[called]
    response = run(files.send(who(*granted), message(method, params)))
    expanded = set(granted) | ({"files:read", "files:write"} if "files" in granted else set())
    runs = called in allowed and NEEDS[called] <= expanded
    assert files.ran == ([called] if runs else [])
    if called not in allowed:
        assert response.status in (200, 400) and response.header("www-authenticate") is None
    elif not runs:
        assert response.status == 403


# -- on the wire ------------------------------------------------------------------------------


async def asgi_post(
    app: Any, principal: Principal | None, value: dict[str, Any], accept: str
) -> tuple[int, dict[str, str], bytes]:
    """A POST of ``value`` to ``app`` behind a front door that verified ``principal``."""
    body = json.dumps(value).encode()
    headers = {**request_headers(value), "content-type": "application/json", "accept": accept}
    headers.update(host="127.0.0.1:8000", origin="http://localhost:3000")
    scope: dict[str, Any] = {"type": "http", "method": "POST", "path": "/mcp"}
    scope.update(headers=[(k.encode(), v.encode()) for k, v in headers.items()])
    scope.update(server=("127.0.0.1", 8000))
    sent: list[dict[str, Any]] = []
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if delivered:
            await asyncio.Event().wait()
        delivered = True
        return {"type": "http.request", "body": body}

    async def send(message: Any) -> None:
        sent.append(dict(message))

    token = VERIFIED.set(principal)  # what the front door's token check sets
    try:
        await asyncio.wait_for(app(scope, receive, send), 5)
    finally:
        VERIFIED.reset(token)
    start = sent[0]
    named = {k.decode(): v.decode() for k, v in start["headers"]}
    return start["status"], named, b"".join(m.get("body", b"") for m in sent[1:])


def test_on_the_wire_the_step_up_is_a_403_a_browser_can_read() -> None:
    files = Files()
    app = files.server.asgi(env={}, allowed_origins=["http://localhost:3000"])
    call = message("tools/call", {"name": "read_file", "arguments": {"path": "w"}})
    status, headers, body = run(asgi_post(app, who(), call, "text/event-stream"))
    assert status == 403 and headers["content-type"] == "application/json"
    assert 'error="insufficient_scope"' in headers["www-authenticate"]
    assert "www-authenticate" in headers["access-control-expose-headers"].lower()
    assert json.loads(body)["id"] == 7
    status, headers, body = run(
        asgi_post(app, who("files:read"), call, "application/json, text/event-stream")
    )
    assert status == 200 and b"read w" in body
    assert files.ran == ["read_file"]


def test_without_a_gate_the_server_layer_applies_the_policy_itself() -> None:
    # On stdio (or an endpoint built without access=) no token is checked: no
    # scope counts, and the policy decides calls and lists alike, here.
    from tests.server.serving import Stateless

    files = Files(policy=deny("read_file", "review"), list_missing=False)
    served = Stateless(files.server)
    listed = served.result("tools/list")
    assert names(listed) == ["write_file", "hello"]
    (answer,) = served.send(
        message("tools/call", {"name": "read_file", "arguments": {"path": "x"}})
    )
    assert answer["error"]["message"] == "Unknown tool: read_file"
    (answer,) = served.send(message("prompts/get", {"name": "review", "arguments": {"code": "c"}}))
    assert answer["error"]["message"] == "Unknown prompt: review"
    assert served.call("write_file", path="p", text="t")["content"][0]["text"] == "wrote p"
    assert files.ran == ["write_file"]


LISTED: dict[str, tuple[str, str, dict[str, set[str]]]] = {
    "tools/list": (
        "tools",
        "name",
        {"read_file": {"files:read"}, "write_file": {"files:read", "files:write"}, "hello": set()},
    ),
    "prompts/list": ("prompts", "name", {"review": {"prompts"}}),
    "resources/list": ("resources", "uri", {"config://app": {"config"}}),
    "resources/templates/list": (
        "resourceTemplates",
        "uriTemplate",
        {"users://{user_id}": {"users:read"}},
    ),
}
ITEMS = sorted(name for _, _, needs in LISTED.values() for name in needs)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    granted=st.sets(st.sampled_from(SCOPES)),
    allowed=st.sets(st.sampled_from(ITEMS)),
    list_missing=st.booleans(),
    policed=st.booleans(),
)
def test_an_item_is_listed_exactly_when_the_policy_and_if_configured_its_scopes_allow(
    granted: Collection[str], allowed: Collection[str], list_missing: bool, policed: bool
) -> None:
    def policy(attempt: Attempt) -> bool:
        return attempt.name in allowed

    files = Files("public", policy=policy if policed else None, list_missing=list_missing)
    for method, (member, key, needs) in LISTED.items():
        result = run(files.answer(who(*granted), message(method)))["result"]
        expected = [
            name
            for name, needed in needs.items()
            if (not policed or name in allowed) and (list_missing or needed <= set(granted))
        ]
        assert names(result, member, key) == expected
        filtered = policed or not list_missing  # the list depends on the principal
        assert result["cacheScope"] == ("private" if filtered else "public")
