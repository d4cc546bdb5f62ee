"""Traces and metrics by the OpenTelemetry MCP semantic conventions
(hand-written runtime package; the ``otel`` extra: ``opentelemetry-api``).

* `Telemetry` (``recorder``): the tracer, the meter and the instruments of
  one app: server and client spans (`Operation`, ``operation``), the
  conventional duration metrics, and the counts no peer keeps (refusals,
  bridge carries, shares, broker round trips; the duration histogram counts
  requests by era and version).
* ``propagation``: trace context in ``params._meta`` (SEP-414).
* ``vocabulary``: the closed sets every recorded value comes from.

`telemetry_for` is what every app calls with its ``telemetry`` argument:
without the extra nothing here imports OpenTelemetry and nothing is paid.
"""

from __future__ import annotations

import functools
import importlib.util
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_schema.telemetry.operation import Operation
    from mcp_schema.telemetry.recorder import Telemetry

__all__ = ["Operation", "Telemetry", "available", "telemetry_for"]


@functools.cache
def available() -> bool:
    """Whether the OpenTelemetry API is importable (the ``otel`` extra)."""
    return importlib.util.find_spec("opentelemetry") is not None and (
        importlib.util.find_spec("opentelemetry.trace") is not None
    )


def telemetry_for(telemetry: Telemetry | bool | None) -> Telemetry | None:
    """An app's telemetry: ``None`` (the default) records to the global
    providers when the API is installed and nothing otherwise; ``False``
    records nothing; ``True`` insists (ImportError without the extra); a
    `Telemetry` is used as it is."""
    if telemetry is False:
        return None
    if telemetry is None or telemetry is True:
        if not available():
            if telemetry:
                raise ImportError(
                    "telemetry=True needs the otel extra: pip install 'mcp-schema[otel]'"
                )
            return None
        return _global()
    from mcp_schema.telemetry.recorder import Telemetry

    if not isinstance(telemetry, Telemetry):
        raise TypeError(
            f"telemetry must be a Telemetry, a bool or None, not {type(telemetry).__name__}"
        )
    return telemetry


@functools.cache
def _global() -> Telemetry:
    """The one `Telemetry` of the global providers, shared by every app and
    session that names none (made once: a session is made per request)."""
    from mcp_schema.telemetry.recorder import Telemetry

    return Telemetry()


def __getattr__(name: str) -> object:
    # Naming the package imports no OpenTelemetry: the classes load on use.
    if name == "Telemetry":
        from mcp_schema.telemetry.recorder import Telemetry

        return Telemetry
    if name == "Operation":
        from mcp_schema.telemetry.operation import Operation

        return Operation
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
