"""Scopes: a broader scope grants the narrower ones it implies, transitively
(the specification's scope hierarchies); every request's scopes are checked
as a token is taken (403 ``insufficient_scope``); a tool, resource or prompt
that needs more gets the 403 step-up challenge listing all it needs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_schema.auth import Principal, RequiredScopes, ScopeHierarchy
from tests.auth.tokens import (
    METADATA_URL,
    authenticated,
    bearer,
    claims,
    refusal_of,
    resource_server,
    sign,
)

HIERARCHY = {"admin": ["files"], "files": ["files:read", "files:write"], "a": ["b"], "b": ["a"]}


def test_a_broader_scope_grants_the_narrower_ones_transitively() -> None:
    hierarchy = ScopeHierarchy(HIERARCHY)
    assert hierarchy.expand(["admin"]) == {"admin", "files", "files:read", "files:write"}
    assert hierarchy.missing(["files"], {"files:write"}) == set()
    assert hierarchy.missing(["files:read"], {"files", "files:read"}) == {"files"}  # never upward
    assert hierarchy.expand(["a"]) == hierarchy.expand(["b"]) == {"a", "b"}  # a cycle: equivalent


def test_names_alone_imply_nothing() -> None:
    # "files" does not grant "files:read" unless the hierarchy says so.
    assert ScopeHierarchy().missing(["files"], {"files:read"}) == {"files:read"}


@given(
    st.dictionaries(st.sampled_from("abcdef"), st.lists(st.sampled_from("abcdef"))),
    st.sets(st.sampled_from("abcdef")),
)
def test_expanding_is_idempotent_and_keeps_what_is_granted(
    implies: dict[str, list[str]], granted: set[str]
) -> None:
    hierarchy = ScopeHierarchy(implies)
    once = hierarchy.expand(granted)
    assert granted <= once and hierarchy.expand(once) == once


def test_an_item_needs_what_every_request_needs_and_its_own() -> None:
    required = RequiredScopes(always=["mcp"], tools={"delete": ["files:write"]}, prompts={"p": []})
    assert required.required("tool", "delete") == {"mcp", "files:write"}
    assert required.required("tool", "other") == required.required() == {"mcp"}
    assert required.required("prompt", "p") == {"mcp"}
    assert required.required("resource", "delete") == {"mcp"}  # kinds apart
    assert required.supported() == {"mcp", "files:write"}


@pytest.mark.parametrize("scope", ["", "a b", 'a"b', "a\\b", "é", "offline_access"])
def test_a_required_scope_that_is_no_scope_token_is_refused(scope: str) -> None:
    with pytest.raises(ValueError):
        RequiredScopes(tools={"t": [scope]})


def test_a_token_without_every_requests_scope_gets_the_403() -> None:
    server = resource_server(required=RequiredScopes(always=["mcp", "tools:read"]))
    status, params, body = refusal_of(
        authenticated(server, bearer(sign(claims(scope="tools:read"))))
    )
    assert status == 403
    assert params == {
        "error": "insufficient_scope",
        "error_description": "the operation needs the scopes: mcp tools:read",
        "scope": "mcp tools:read",
        "resource_metadata": METADATA_URL,
    }
    assert body["error"]["code"] == -32600
    # No token at all: the 401 names the scopes every request needs.
    assert refusal_of(authenticated(server, {}))[1]["scope"] == "mcp tools:read"


def test_the_step_up_challenge_lists_all_the_scopes_the_tool_needs() -> None:
    required = RequiredScopes(
        always=["mcp"], tools={"write": ["files:read", "files:write"]}, implies=HIERARCHY
    )
    server = resource_server(required=required)
    reader = authenticated(server, bearer(sign(claims(scope="mcp files:read"))))
    assert isinstance(reader, Principal)
    assert server.step_up(reader, "tool", "read") is None
    status, params, body = refusal_of(server.step_up(reader, "tool", "write", request_id="r1"))
    assert (status, params["error"], params["scope"]) == (
        403,
        "insufficient_scope",
        "files:read files:write mcp",
    )
    assert body["id"] == "r1"
    admin = authenticated(server, bearer(sign(claims(scope="mcp admin"))))
    assert isinstance(admin, Principal) and server.step_up(admin, "tool", "write") is None
