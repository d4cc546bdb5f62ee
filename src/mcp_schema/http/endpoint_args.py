"""The checks of `mcp_schema.http.Endpoint`'s arguments that are not one
line each: its bounds and its gate."""

from __future__ import annotations

from mcp_schema._args import check
from mcp_schema.http.gate import Gate

__all__ = ["check_bounds", "gate_of"]


def _positive(value: object, name: str, kinds: type | tuple[type, ...] = int) -> None:
    check(value, kinds, name)
    if not value > 0:  # type: ignore[operator]
        raise ValueError(f"{name} must be positive, not {value!r}")


def gate_of(access: object) -> Gate | None:
    """``access``, the endpoint's gate (`mcp_schema.http.gate`), or None."""
    if access is not None and not isinstance(access, Gate):
        raise TypeError(f"access must be a Gate (an Access), not {type(access).__name__}")
    return access


def check_bounds(
    max_body: int, max_buffer: int, answer_seconds: float, max_waiting: int, replay: int
) -> None:
    """The endpoint's bounds, each positive (``replay``: not negative)."""
    for name, size in (("max_body", max_body), ("max_buffer", max_buffer)):
        _positive(size, name)
    _positive(answer_seconds, "answer_seconds", (int, float))
    _positive(max_waiting, "max_waiting")
    check(replay, int, "replay")
    if replay < 0:
        raise ValueError(f"replay must not be negative, not {replay}")
