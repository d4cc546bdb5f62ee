"""The gateway's root and its two rooms: every name either room loads when
first named is the root's too, resolved by the room that holds it (one
table of lazy names per room, none of the root's own)."""

from __future__ import annotations

import pytest

import mcp_schema.gateway as gateway
from mcp_schema.gateway import bridge, monitor


@pytest.mark.parametrize("room", [bridge, monitor])
def test_each_rooms_lazy_names_are_the_roots_and_the_same_objects(room: object) -> None:
    names = room._LAZY  # type: ignore[attr-defined]
    assert names
    for name in names:
        assert getattr(gateway, name) is getattr(room, name)


def test_the_root_keeps_no_table_of_its_own() -> None:
    assert not hasattr(gateway, "_LAZY")
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        gateway.Nothing  # noqa: B018
