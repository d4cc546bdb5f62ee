"""`Access` on its own, as a gateway would consult it: each page of a list
relayed is filtered alike and private; a resource server's challenge URL,
scopes and hierarchy taken over (``offline_access`` in neither the
challenge nor ``scopes_supported``); the verdicts on parsed messages; a
listen's URIs narrowed, failing closed beyond its bound."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcp_schema.auth import Access, Attempt, Principal, RequiredScopes
from mcp_schema.auth.access import unknown
from mcp_schema.errors import McpError
from mcp_schema.http.stream import Response
from tests.auth.tokens import METADATA_URL, resource_server


def who(*scopes: str) -> Principal:
    return Principal("https://auth.example.com", "alice", "app", frozenset(scopes), None)


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def hide(*names: str) -> Any:
    async def policy(attempt: Attempt) -> bool:
        return attempt.name not in names

    return policy


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_every_page_a_gateway_relays_is_filtered_and_private() -> None:
    access = Access(policy=hide("b", "d"))
    pages: list[dict[str, Any]] = [
        {"tools": [{"name": "a"}, {"name": "b"}], "nextCursor": "2", "ttlMs": 5},
        {"tools": [{"name": "d"}], "nextCursor": "3", "cacheScope": "public"},
        {"tools": [{"name": "e"}]},
    ]
    seen = [run(access.page(who(), "tools/list", page)) for page in pages]
    assert [[t["name"] for t in p["tools"]] for p in seen] == [["a"], [], ["e"]]
    assert [p.get("nextCursor") for p in seen] == ["2", "3", None]  # the cursors kept
    assert all(p["cacheScope"] == "private" for p in seen)
    assert seen[0]["ttlMs"] == 5
    templates = {"resourceTemplates": [{"uriTemplate": "b"}, {"uriTemplate": "c"}]}
    shown = run(access.page(who(), "resources/templates/list", templates))
    assert shown["resourceTemplates"] == [{"uriTemplate": "c"}]


def test_a_list_the_same_for_everyone_is_left_as_it_is() -> None:
    page = {"tools": [{"name": "a"}], "cacheScope": "public"}
    assert run(Access().page(who(), "tools/list", page)) == page


def test_a_resource_servers_scopes_and_hierarchy_are_taken_over() -> None:
    required = RequiredScopes(
        always=["mcp"], tools={"deploy": ["ops:deploy"]}, implies={"ops": ["ops:deploy"]}
    )
    server = resource_server(required=required)
    declared = {"tool": {"deploy": ["ops:audit"]}}
    access = Access(scopes=lambda kind, name: declared.get(kind, {}).get(name, ())).protected_by(
        server
    )
    assert access.resource_metadata == METADATA_URL
    assert access.required("tool", "deploy") == {"mcp", "ops:deploy", "ops:audit"}
    verdict = run(access.admit(who("mcp", "ops:audit"), call("deploy")))
    assert isinstance(verdict, Response) and verdict.status == 403
    challenge = verdict.header("www-authenticate") or ""
    assert 'scope="mcp ops:audit ops:deploy"' in challenge
    assert "offline_access" not in challenge
    assert json.loads(verdict.body)["id"] == 9
    assert run(access.admit(who("mcp", "ops", "ops:audit"), call("deploy"))) is None
    supported: Any = server.metadata.document["scopes_supported"]
    assert "offline_access" not in supported


def test_offline_access_is_refused_where_scopes_are_configured() -> None:
    with pytest.raises(ValueError, match="offline_access"):
        Access(always=["offline_access"])


def test_a_denial_is_the_unknown_items_error_and_other_messages_pass() -> None:
    access = Access(policy=hide("secret"))
    denied = run(access.admit(who(), call("secret")))
    assert isinstance(denied, McpError)
    assert denied.to_response(9) == unknown("tool", "secret").to_response(9)
    read = {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "secret"}}
    assert run(access.admit(who(), read)).to_response(1)["error"]["data"] == {"uri": "secret"}
    for other in (
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 5}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ):
        assert run(access.admit(who(), other)) is None


def test_completing_a_hidden_prompt_or_template_is_denied_too() -> None:
    access = Access(policy=hide("review", "users://{id}"))
    for ref in (
        {"type": "ref/prompt", "name": "review"},
        {"type": "ref/resource", "uri": "users://{id}"},
    ):
        complete: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "completion/complete",
            "params": {"ref": ref, "argument": {"name": "id", "value": "4"}},
        }
        assert isinstance(run(access.admit(who(), complete)), McpError)
    shown = {"type": "ref/prompt", "name": "other"}
    complete["params"]["ref"] = shown
    assert run(access.admit(who(), complete)) is None


def test_without_a_metadata_url_a_missing_scope_is_a_plain_403() -> None:
    access = Access(scopes=lambda kind, name: ["files:read"])
    verdict = access.admit_now(who(), call("read"))
    assert isinstance(verdict, Response) and verdict.status == 403
    assert verdict.header("www-authenticate") is None


def test_a_listen_beyond_the_bound_checked_hears_of_no_resource() -> None:
    access = Access(policy=hide())
    many = [f"file://{i}" for i in range(300)]
    listen: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "subscriptions/listen",
        "params": {"notifications": {"resourceSubscriptions": many}},
    }
    assert run(access.admit(who(), listen)) is None
    assert listen["params"]["notifications"]["resourceSubscriptions"] == []
