"""The ``WWW-Authenticate`` challenges: 401 without a token (no error code,
``scope`` where known), 401 ``invalid_token``, 403 ``insufficient_scope``
with every scope needed in one challenge, each with ``resource_metadata``
and a JSON-RPC error body; quoted so that no input can end the header or
add one; ``offline_access`` never in ``scope``. And the reading of the
``Authorization`` header: Bearer only, bounded before it is read."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_schema.auth import InvalidToken
from mcp_schema.auth.bearer import MAX_TOKEN, bearer_token
from mcp_schema.auth.challenge import challenge, insufficient_scope, quoted, unauthorized
from tests.auth.tokens import METADATA_URL, challenge_params

# What a header value may hold once sent: visible ASCII, space and tab.
HEADER_SAFE = re.compile(r"[\t\x20-\x7e]*")
QDTEXT = st.characters(
    codec="ascii", exclude_characters='"\\', categories=["L", "N", "P", "S", "Zs"]
)


@given(st.text())
def test_a_quoted_string_of_anything_is_one_safe_quoted_string(value: str) -> None:
    text = quoted(value)
    assert HEADER_SAFE.fullmatch(text)
    assert re.fullmatch(r'"(?:[^"\\]|\\.)*"', text)  # one quoted-string: nothing after it


@given(st.text(QDTEXT))
def test_a_quoted_string_of_header_text_reads_back_the_same(value: str) -> None:
    assert re.sub(r"\\(.)", r"\1", quoted(value)[1:-1]) == value
    assert quoted('a"b\\c') == r'"a\"b\\c"'


@given(description=st.text(), metadata=st.text(), scopes=st.lists(st.text()))
def test_no_input_ends_the_header_or_adds_a_parameter(
    description: str, metadata: str, scopes: list[str]
) -> None:
    value = challenge(metadata, error="invalid_token", scopes=scopes, description=description)
    assert HEADER_SAFE.fullmatch(value)
    params = challenge_params(value)
    assert set(params) <= {"error", "error_description", "scope", "resource_metadata"}
    assert params["error"] == "invalid_token"


def test_a_missing_token_gets_401_with_the_scope_and_no_error() -> None:
    answer = unauthorized(METADATA_URL, scopes=["b", "a", "offline_access"], request_id=7)
    assert answer.status == 401
    assert challenge_params(answer.header("www-authenticate") or "") == {
        "scope": "a b",
        "resource_metadata": METADATA_URL,
    }
    body = json.loads(answer.body)
    assert body["id"] == 7 and body["error"]["code"] == -32600
    assert answer.header("content-type") == "application/json"


def test_a_refused_token_gets_401_invalid_token_saying_why() -> None:
    answer = unauthorized(METADATA_URL, description="the token has expired")
    assert challenge_params(answer.header("www-authenticate") or "") == {
        "error": "invalid_token",
        "error_description": "the token has expired",
        "resource_metadata": METADATA_URL,
    }
    assert "expired" in json.loads(answer.body)["error"]["message"]


def test_insufficient_scope_is_403_with_every_scope_needed_in_one_challenge() -> None:
    answer = insufficient_scope(METADATA_URL, ["files:write", "files:read", "offline_access"])
    assert answer.status == 403
    params = challenge_params(answer.header("www-authenticate") or "")
    assert params["error"] == "insufficient_scope"
    assert params["scope"] == "files:read files:write"
    assert params["resource_metadata"] == METADATA_URL
    assert len([v for k, v in answer.headers if k == "www-authenticate"]) == 1


def test_no_scope_parameter_when_none_is_known() -> None:
    assert "scope" not in challenge_params(challenge(METADATA_URL, scopes=["offline_access"]))


@pytest.mark.parametrize(
    ("value", "token"),
    [
        (None, None),
        ("Basic YTpi", None),
        ("Bearer", None),
        ("bearer abc.def-ghi_jkl~", "abc.def-ghi_jkl~"),
        ("BEARER   abc==  ", "abc=="),
    ],
)
def test_the_bearer_token_is_read_from_authorization(value: str | None, token: str | None) -> None:
    assert bearer_token(value) == token


@pytest.mark.parametrize(
    "value",
    [
        "Bearer a b",
        "Bearer a, Bearer b",  # two Authorization fields, joined
        "Bearer a\r\nX-Evil: 1",
        "Bearer =abc",
        "Bearer " + "a" * (MAX_TOKEN + 1),
        "Bearer " + "a" * (1 << 20),
    ],
)
def test_a_malformed_or_huge_bearer_value_is_an_invalid_token(value: str) -> None:
    with pytest.raises(InvalidToken, match="longer" if len(value) > MAX_TOKEN else "not Bearer"):
        bearer_token(value)


@given(st.text())
def test_any_authorization_value_is_a_token_none_or_invalid(value: str) -> None:
    try:
        token = bearer_token(value)
    except InvalidToken as refused:  # in words of its own, quoting nothing
        assert str(refused).startswith(("the token is longer", "the Authorization header is"))
        return
    assert token is None or (re.fullmatch(r"[A-Za-z0-9\-._~+/]+=*", token) and token in value)
