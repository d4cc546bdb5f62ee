"""`caller_of`, the holder's reading of the caller another replica forwards:
a caller written by `caller_wire` reads back as it was; any other value,
whatever its shape or size, is a `Caller` or None, never an exception, in
time linear in its size."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_schema.auth.principal import Principal
from mcp_schema.http.caller import Caller
from mcp_schema.http.caller_wire import caller_of, caller_wire
from tests.hostile import costs_linearly

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=4,
)
FIELDS = ("issuer", "subject", "client_id", "expires_at", "scopes", "claims")
VERIFIED = st.fixed_dictionaries(
    {}, optional={key: JSON | st.text(max_size=8) | st.lists(st.text(max_size=4)) for key in FIELDS}
)
WIRES = JSON | st.fixed_dictionaries(
    {}, optional={"principal": JSON, "address": JSON, "verified": VERIFIED | JSON}
)


def verified(scopes: int = 2) -> Caller:
    principal = Principal(
        "https://as.example",
        "alice",
        None,
        frozenset(f"s{i}" for i in range(scopes)),
        1e10,
        MappingProxyType({"sub": "alice"}),
    )
    return Caller(principal.name, "192.0.2.1", principal)


@settings(max_examples=25)
@given(WIRES)
def test_any_forwarded_caller_is_a_caller_or_none(wire: Any) -> None:
    found = caller_of(wire)
    assert found is None or isinstance(found, Caller)
    if found is not None and found.verified is not None:
        assert found.verified.name == found.principal  # never another identity's


def test_a_caller_reads_back_as_it_was_written() -> None:
    for caller in (Caller(), Caller(None, "192.0.2.1"), verified()):
        found = caller_of(caller_wire(caller))
        assert found == caller and found is not None
        assert found.verified == caller.verified


def test_a_forwarded_caller_costs_time_linear_in_its_size() -> None:
    def read(wire: dict[str, Any]) -> None:
        found = caller_of(wire)
        assert found is not None and found.verified is not None

    costs_linearly(read, caller_wire(verified(5_000)), caller_wire(verified(40_000)))
