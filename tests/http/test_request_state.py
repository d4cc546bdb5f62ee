"""Tests for mcp_schema.request_state (sealed requestState of multi-round-trip requests)."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_schema import v2026_07_28
from mcp_schema.codec import decode
from mcp_schema.errors import InternalError, InvalidParamsError
from mcp_schema.request_state import (
    DEFAULT_TTL,
    MIN_KEY_BYTES,
    STATE_PATH,
    InMemorySingleUse,
    OpenedState,
    StateKeys,
    StateSealer,
)

KEY = "k" * MIN_KEY_BYTES
OLD_KEY = b"o" * 40
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}
ASKED = {
    "login": {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Your GitHub login?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
    }
}


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def call(
    arguments: Any = None, *, method: str = "tools/call", state: Any = None, **extra: Any
) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "deploy", "arguments": arguments or {"region": "eu", "n": 3}}
    if state is not None:
        params["requestState"] = state
    params.update(extra)
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def retry(token: str, arguments: Any = None, **extra: Any) -> dict[str, Any]:
    """The retry of `call(arguments)`: another id, the answers, the state, _meta."""
    message = call(arguments, state=token, inputResponses={"login": {"action": "decline"}})
    message["id"] = 2
    message["params"]["_meta"] = META
    message["params"].update(extra)
    return message


def refusal(sealer: StateSealer, request: Any, principal: str | None = "alice") -> str:
    with pytest.raises(InvalidParamsError) as caught:
        sealer.open(request, principal=principal)
    err = caught.value
    assert err.code == -32602
    assert [e["path"] for e in err.errors] == [STATE_PATH]
    assert len(err.message) <= 200
    reason: str = err.errors[0]["reason"]
    assert err.message == f"Invalid params: {STATE_PATH}: {reason}"
    return reason


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def sealer(clock: Clock) -> StateSealer:
    return StateSealer(StateKeys(KEY), clock=clock)


def test_round_trip_gives_back_what_was_sealed(sealer: StateSealer, clock: Clock) -> None:
    data = {"step": 2, "draft": ["a", "é", 1.5], "done": False}
    token = sealer.seal(call(), principal="alice", asked=ASKED, data=data)
    opened = sealer.open(retry(token), principal="alice")
    assert isinstance(opened, OpenedState)
    assert opened.asked == ASKED
    assert opened.data == data
    assert opened.expires_at == pytest.approx(clock.now + DEFAULT_TTL, abs=0.001)
    # Each seal is a new token, with its own id.
    again = sealer.seal(call(), principal="alice", asked=ASKED, data=data)
    assert again != token
    reopened = sealer.open(retry(again), principal="alice")
    assert reopened is not None and reopened.token_id != opened.token_id


def test_models_are_sealed_and_opened_like_their_wire_json(sealer: StateSealer) -> None:
    first = decode(json.dumps(call(_meta=META)).encode())
    assert isinstance(first, v2026_07_28.CallToolRequest)
    asked = {"roots": v2026_07_28.ListRootsRequest(params=None)}
    token = sealer.seal(first, principal=None, asked=asked, data=7)
    second = decode(json.dumps(retry(token)).encode())
    opened = sealer.open(second, principal=None)
    assert opened is not None
    assert opened.asked == {"roots": {"method": "roots/list"}}
    assert opened.data == 7


def test_a_request_without_state_opens_to_none(sealer: StateSealer) -> None:
    assert sealer.open(call(), principal="alice") is None
    assert sealer.open(call(state=None), principal="alice") is None


def test_the_payload_is_readable_but_names_no_principal_or_params(sealer: StateSealer) -> None:
    # Signed, not encrypted (the docs say so): the data shows, the binding does not.
    token = sealer.seal(
        call({"secret-arg": "hunter2"}), principal="alice@example.com", data={"visible": 1}
    )
    raw = base64.urlsafe_b64decode(token[3:] + "=" * (-len(token[3:]) % 4))
    assert b'"visible":1' in raw
    assert b"alice" not in raw and b"hunter2" not in raw


def test_expired_state_is_refused(sealer: StateSealer, clock: Clock) -> None:
    token = sealer.seal(call(), principal="alice")
    clock.now += DEFAULT_TTL - 1
    assert sealer.open(retry(token), principal="alice") is not None
    clock.now += 1
    assert refusal(sealer, retry(token)) == "expired"


def test_ttl_is_configurable(clock: Clock) -> None:
    short = StateSealer(StateKeys(KEY), ttl=5, clock=clock)
    token = short.seal(call(), principal=None)
    clock.now += 4.9
    assert short.open(retry(token), principal=None) is not None
    clock.now += 0.2
    assert refusal(short, retry(token), None) == "expired"


@pytest.mark.parametrize(
    ("changed", "reason"),
    [
        (call({"region": "us", "n": 3}), "sealed for a call with other params"),
        (call({"region": "eu"}), "sealed for a call with other params"),
        (call(extra_param=True), "sealed for a call with other params"),
        (call(method="prompts/get"), "sealed for another method"),
    ],
)
def test_state_of_another_call_is_refused(
    sealer: StateSealer, changed: dict[str, Any], reason: str
) -> None:
    token = sealer.seal(call(), principal="alice")
    changed["params"]["requestState"] = token
    assert refusal(sealer, changed) == reason
    assert sealer.open(retry(token), principal="alice") is not None  # the token itself is fine


@pytest.mark.parametrize(
    ("sealed_for", "opened_by"),
    [(None, "alice"), ("alice", None), ("alice", "bob"), ("alice", "Alice")],
)
def test_state_of_another_principal_is_refused(
    sealer: StateSealer, sealed_for: str | None, opened_by: str | None
) -> None:
    token = sealer.seal(call(), principal=sealed_for)
    assert refusal(sealer, retry(token), opened_by) == "sealed for another principal"
    assert sealer.open(retry(token), principal=sealed_for) is not None


def test_unbound_params_may_change(sealer: StateSealer) -> None:
    token = sealer.seal(call(_meta={"progressToken": 1}), principal=None)
    changed = retry(token, inputResponses={"other": {}})
    changed["params"]["_meta"] = {"anything": "else"}
    assert sealer.open(changed, principal=None) is not None


@pytest.mark.parametrize(
    ("sealed", "retried"),
    [
        ({"n": 1}, {"n": 1.0}),
        ({"n": 100}, {"n": 1e2}),
        ({"n": 0}, {"n": -0.0}),
        ({"a": 1, "b": [1, {"c": 2, "d": None}]}, {"b": [1.0, {"d": None, "c": 2}], "a": 1}),
        ({"big": 2**80}, {"big": float(2**80)}),
    ],
)
def test_params_equal_as_json_values_open(
    sealer: StateSealer, sealed: dict[str, Any], retried: dict[str, Any]
) -> None:
    token = sealer.seal(call(sealed), principal=None)
    assert sealer.open(retry(token, retried), principal=None) is not None


@pytest.mark.parametrize(
    ("sealed", "retried"),
    [
        ({"n": 1}, {"n": 1.5}),
        ({"n": 1}, {"n": True}),
        ({"n": 1}, {"n": "1"}),
        ({"n": 2**53 + 1}, {"n": float(2**53 + 1)}),  # the float is 2**53
        ({"s": "é"}, {"s": "e\u0301"}),  # code points, no normalization
        ({"l": [1, 2]}, {"l": [2, 1]}),
        ({"n": None}, {}),
    ],
)
def test_params_that_differ_as_json_values_are_refused(
    sealer: StateSealer, sealed: dict[str, Any], retried: dict[str, Any]
) -> None:
    token = sealer.seal(call(sealed), principal=None)
    assert refusal(sealer, retry(token, retried), None) == "sealed for a call with other params"


@pytest.mark.parametrize(
    "token",
    ["", "v1.", "v2.AAAA", "v1.!!!!", "v1.AAAAA", "v1." + "A" * 40, "nope", "v1.AAAA=", "v1.AA AA"],
)
def test_malformed_state_is_refused(sealer: StateSealer, token: str) -> None:
    assert refusal(sealer, retry(token)) == "not a request state this server sealed"


@pytest.mark.parametrize("token", [42, ["v1.x"], {"a": 1}, True])
def test_state_that_is_not_a_string_is_refused(sealer: StateSealer, token: Any) -> None:
    assert refusal(sealer, retry(token)) == "must be a string"


def test_forged_state_is_refused(sealer: StateSealer) -> None:
    token = sealer.seal(call(), principal="alice", data={"admin": False})
    raw = base64.urlsafe_b64decode(token[3:] + "=" * (-len(token[3:]) % 4))
    forged_raw = raw.replace(b'"admin":false', b'"admin":true ')
    assert forged_raw != raw
    forged = "v1." + base64.urlsafe_b64encode(forged_raw).decode().rstrip("=")
    assert refusal(sealer, retry(forged)) == "does not verify (altered or forged)"


def test_state_of_another_ring_is_refused(sealer: StateSealer, clock: Clock) -> None:
    other = StateSealer(StateKeys("z" * 32), clock=clock)
    token = other.seal(call(), principal="alice")
    assert refusal(sealer, retry(token)) == "sealed with a key this server does not hold"


def test_oversized_state_is_refused_before_it_is_read(clock: Clock) -> None:
    small = StateSealer(StateKeys(KEY), max_length=1000, clock=clock)
    assert refusal(small, retry("v1." + "A" * 998)) == "longer than 1000 characters"
    # Not even a string scan: characters base64 refuses still count as length only.
    assert refusal(small, retry("\x00" * 5000)) == "longer than 1000 characters"


def test_sealing_more_than_max_length_is_the_authors_error(clock: Clock) -> None:
    small = StateSealer(StateKeys(KEY), max_length=500, clock=clock)
    small.seal(call(), principal=None, data="x" * 100)
    with pytest.raises(ValueError, match="over max_length 500"):
        small.seal(call(), principal=None, data="x" * 500)


def test_rotation_opens_old_tokens_until_the_old_key_is_dropped(clock: Clock) -> None:
    before = StateSealer(StateKeys(OLD_KEY), clock=clock)
    token = before.seal(call(), principal="alice", data=1)
    rotated = StateSealer(StateKeys(KEY, OLD_KEY), clock=clock)
    opened = rotated.open(retry(token), principal="alice")
    assert opened is not None and opened.data == 1
    fresh = rotated.seal(call(), principal="alice")  # the new key signs...
    assert refusal(before, retry(fresh)) == "sealed with a key this server does not hold"
    dropped = StateSealer(StateKeys(KEY), clock=clock)  # ...and the old one goes
    assert refusal(dropped, retry(token)) == "sealed with a key this server does not hold"
    assert dropped.open(retry(fresh), principal="alice") is not None


def test_keys_shorter_than_32_bytes_are_refused() -> None:
    with pytest.raises(ValueError, match="31 bytes"):
        StateKeys("k" * 31)
    with pytest.raises(ValueError, match=r"keys\[1\] has 3 bytes"):
        StateKeys(KEY, b"abc")
    # Bytes of a string count, not characters.
    StateKeys("é" * 16)
    with pytest.raises(ValueError):
        StateKeys("é" * 15)


@pytest.mark.parametrize("key", [32, None, bytearray(32), ["k" * 32]])
def test_keys_of_other_types_are_refused(key: Any) -> None:
    with pytest.raises(TypeError):
        StateKeys(key)


def test_a_repeated_key_and_a_lone_surrogate_are_refused() -> None:
    with pytest.raises(ValueError, match="repeats"):
        StateKeys(KEY, KEY.encode())
    with pytest.raises(ValueError, match="surrogate"):
        StateKeys("\ud800" * 32)


def test_the_ring_never_shows_its_keys() -> None:
    keys = StateKeys(KEY, OLD_KEY)
    assert KEY not in repr(keys) and "ooo" not in repr(keys)
    assert len(keys.key_ids) == 2 and all(len(kid) == 16 for kid in keys.key_ids)


def test_from_env_reads_a_comma_separated_ring(clock: Clock) -> None:
    token = StateSealer(StateKeys(OLD_KEY), clock=clock).seal(call(), principal=None)
    keys = StateKeys.from_env(f" {KEY} , {OLD_KEY.decode()} ")
    assert keys.key_ids == StateKeys(KEY, OLD_KEY).key_ids
    assert StateSealer(keys, clock=clock).open(retry(token), principal=None) is not None


@pytest.mark.parametrize("value", [None, "", "  ", f"{KEY},,{OLD_KEY.decode()}", "short"])
def test_from_env_refuses_what_is_not_a_ring(value: str | None) -> None:
    with pytest.raises(ValueError, match=r"MCP_STATE_KEY|bytes"):
        StateKeys.from_env(value)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"ttl": 0}, ValueError),
        ({"ttl": -1.0}, ValueError),
        ({"ttl": float("inf")}, ValueError),
        ({"ttl": float("nan")}, ValueError),
        ({"ttl": True}, ValueError),
        ({"max_length": 10}, ValueError),
        ({"max_length": 1e6}, ValueError),
    ],
)
def test_sealer_settings_are_checked(kwargs: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        StateSealer(StateKeys(KEY), **kwargs)
    with pytest.raises(TypeError):
        StateSealer(KEY)  # type: ignore[arg-type]


@pytest.mark.parametrize("data", [float("nan"), {1: "int key"}, {"s": {1, 2}}, b"bytes", object()])
def test_data_that_is_not_json_cannot_be_sealed(sealer: StateSealer, data: Any) -> None:
    with pytest.raises((TypeError, ValueError)):
        sealer.seal(call(), principal=None, data=data)


@pytest.mark.parametrize("asked", [{1: {"method": "roots/list"}}, [("a", {})], {"a": "text"}])
def test_asked_must_map_names_to_requests(sealer: StateSealer, asked: Any) -> None:
    with pytest.raises(TypeError):
        sealer.seal(call(), principal=None, asked=asked)


def test_a_principal_must_be_a_string_or_none(sealer: StateSealer) -> None:
    with pytest.raises(TypeError):
        sealer.seal(call(), principal=1)  # type: ignore[arg-type]
    token = sealer.seal(call(), principal=None)
    with pytest.raises(TypeError):
        sealer.open(retry(token), principal=b"alice")  # type: ignore[arg-type]


def test_single_use_serves_a_retry_once(sealer: StateSealer, clock: Clock) -> None:
    claims = InMemorySingleUse(clock=clock)
    token = sealer.seal(call(), principal="alice")

    async def redeem() -> None:
        opened = sealer.open(retry(token), principal="alice")
        assert opened is not None
        await opened.claim(claims)

    asyncio.run(redeem())
    with pytest.raises(InvalidParamsError) as caught:
        asyncio.run(redeem())
    assert caught.value.errors == [{"path": STATE_PATH, "reason": "already used"}]
    # Another token is another claim.
    other = sealer.open(retry(sealer.seal(call(), principal="alice")), principal="alice")
    assert other is not None
    asyncio.run(other.claim(claims))


def test_single_use_entries_expire_and_are_bounded(clock: Clock) -> None:
    claims = InMemorySingleUse(max_entries=2, clock=clock)

    async def run() -> None:
        assert await claims.claim("a", clock.now + 10)
        assert not await claims.claim("a", clock.now + 10)
        assert await claims.claim("b", clock.now + 20)
        with pytest.raises(InternalError, match="full"):
            await claims.claim("c", clock.now + 20)
        clock.now += 10  # "a" expires: its room is free again
        assert await claims.claim("c", clock.now + 20)
        with pytest.raises(InternalError):
            await claims.claim("d", clock.now + 20)
        clock.now += 100
        assert await claims.claim("a", clock.now + 1)  # expired entries are gone
        assert not await claims.claim("late", clock.now)  # an expired token is never claimed

    asyncio.run(run())


def test_single_use_stays_bounded_under_churn(clock: Clock) -> None:
    claims = InMemorySingleUse(max_entries=100, clock=clock)

    async def run() -> None:
        for n in range(5000):
            assert await claims.claim(str(n), clock.now + 1)
            clock.now += 0.1
        assert len(claims._claims) <= 11
        assert len(claims._claims._heap) <= 2 * 11 + 64

    asyncio.run(run())


# Hypothesis: whatever a client does to a token, it does not open.

_SEALER = StateSealer(StateKeys(KEY), clock=lambda: 1_800_000_000.0)
_TOKEN = _SEALER.seal(call(), principal="alice", asked=ASKED, data={"step": 1, "n": [1, 2.5]})


@st.composite
def mutations(draw: st.DrawFn) -> str:
    token = _TOKEN
    kind = draw(st.sampled_from(["flip", "truncate", "extend", "replace"]))
    if kind == "truncate":
        return token[: draw(st.integers(0, len(token) - 1))]
    if kind == "extend":
        return token + draw(st.text(min_size=1, max_size=8))
    at = draw(st.integers(0, len(token) - 1))
    if kind == "flip":
        char = chr(ord(token[at]) ^ (1 << draw(st.integers(0, 6))))
    else:
        char = draw(st.characters().filter(lambda c: c != token[at]))
    return token[:at] + char + token[at + 1 :]


@given(mutations())
@settings(max_examples=400, deadline=None)
def test_any_mutation_of_a_token_is_refused(token: str) -> None:
    assert token != _TOKEN
    refusal(_SEALER, retry(token))


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(st.dictionaries(st.text(max_size=4), json_values, max_size=4), json_values)
@settings(max_examples=100, deadline=None)
def test_only_calls_equal_as_json_values_open(sealed: dict[str, Any], other: Any) -> None:
    token = _SEALER.seal(call(sealed), principal="alice")
    assert _SEALER.open(retry(token, json.loads(json.dumps(sealed))), principal="alice")
    changed = {**sealed, "extra": other}
    assert refusal(_SEALER, retry(token, changed)) == "sealed for a call with other params"


@given(st.text(max_size=20) | st.none(), st.text(max_size=20) | st.none())
@settings(max_examples=100, deadline=None)
def test_only_the_same_principal_opens(sealed_for: str | None, opened_by: str | None) -> None:
    token = _SEALER.seal(call(), principal=sealed_for)
    if sealed_for == opened_by:
        assert _SEALER.open(retry(token), principal=opened_by) is not None
    else:
        assert refusal(_SEALER, retry(token), opened_by) == "sealed for another principal"
