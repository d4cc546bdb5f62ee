"""`Counts`: the package's own counters (refusals, bridge carries, sealed
states, shares, broker round trips), kept in plain dicts and reported
through asynchronous instruments (``ObservableCounter``) when the SDK collects.

A synchronous ``Counter.add`` of the OpenTelemetry Python SDK cleans and
hashes its attributes, builds a measurement object and takes its locks on
every call (about 75,000 instructions for three attributes, by callgrind):
a flood of refused messages would pay that for each one. Here a count is
one dict update under a lock, keyed by the attributes as a tuple of pairs
(values from closed sets); the callback hands the SDK the running totals at
collection time, so what is exported is the same cumulative, monotonic sum
under the same name and attributes.

The SDK gives back the instrument first made under a name, with that one's
callback only, so every `mcp_schema.telemetry.Telemetry` on one meter
provider shares one `Counts` (`counts_for`).
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.metrics import CallbackOptions, Meter, MeterProvider, Observation

__all__ = ["MAX_SERIES", "OVERFLOW", "Counts", "Tally", "counts_for"]

MAX_SERIES = 2000
"""Most attribute sets one tally keeps (the SDK's own cardinality limit); a
new one beyond them is counted under `OVERFLOW`, as the SDK would."""

Key = tuple[tuple[str, "str | int | bool"], ...]
"""A count's attributes as a tuple of (name, value) pairs."""

OVERFLOW: Key = (("otel.metric.overflow", True),)
"""Where a tally counts once it holds `MAX_SERIES` attribute sets."""


class Tally:
    """Running totals by attributes, read by the SDK through `observe`."""

    __slots__ = ("_lock", "_totals")

    def __init__(self) -> None:
        self._totals: dict[Key, int] = {}
        self._lock = threading.Lock()

    def add(self, key: Key, count: int = 1) -> None:
        """``count`` more under the attributes ``key`` (safe from any thread)."""
        with self._lock:
            totals = self._totals
            if key not in totals and len(totals) >= MAX_SERIES:
                key = OVERFLOW
            totals[key] = totals.get(key, 0) + count

    def totals(self) -> dict[Key, int]:
        """A copy of the running totals."""
        with self._lock:
            return dict(self._totals)

    def observe(self, options: CallbackOptions) -> Iterable[Observation]:
        """The totals as observations: the instrument's callback."""
        from opentelemetry.metrics import Observation

        return [Observation(total, dict(key)) for key, total in self.totals().items()]


class Counts:
    """One meter's tallies, each behind an ``ObservableCounter`` of its name."""

    __slots__ = ("bridged", "broker", "refused", "sealed", "shares")

    def __init__(self, meter: Meter) -> None:
        def counter(name: str, description: str) -> Tally:
            tally = Tally()
            meter.create_observable_counter(
                name, callbacks=[tally.observe], description=description
            )
            return tally

        self.refused = counter(
            "mcp_schema.refused",
            "Messages refused or reported, by JSON-RPC code, direction and method.",
        )
        self.bridged = counter(
            "mcp_schema.bridge.messages",
            "Messages an era bridge carried or refused, by direction, outcome and era.",
        )
        self.sealed = counter(
            "mcp_schema.state.refused", "Sealed request states (requestState) refused, by reason."
        )
        self.shares = counter("mcp_schema.shares", "Share requests per table, granted or refused.")
        self.broker = counter(
            "mcp_schema.broker.calls", "Broker round trips, by operation and outcome."
        )


_made: weakref.WeakKeyDictionary[Any, Counts] = weakref.WeakKeyDictionary()
_global: list[Counts] = []  # the Counts of the global providers, once made
_making = threading.Lock()


def counts_for(provider: MeterProvider, meter: Meter, *, from_globals: bool) -> Counts:
    """The `Counts` of ``provider`` (``meter``: its meter of the package's
    scope), made on first use and shared from then on.

    ``from_globals``: the provider is the global one, looked up. Every such
    `Telemetry` shares one `Counts`, whether made before an SDK was set (on
    the API's proxy, which hands the SDK the same instruments once it is
    set) or after; so does one given the global provider by name. (Left
    uncovered: a provider given by name, counted on, and only then made the
    global one while counts were made on the proxy before: the proxy's
    instruments then meet the ones made first, and keep those.)"""
    from opentelemetry import metrics

    with _making:
        is_global = from_globals or provider is metrics.get_meter_provider()
        try:
            made = _made.get(provider)
        except TypeError:  # a provider that cannot be weakly referenced
            made = None
        if made is None and is_global and _global:
            made = _global[0]
        if made is None:
            made = Counts(meter)
        with contextlib.suppress(TypeError):
            _made.setdefault(provider, made)
        if is_global and not _global:
            _global.append(made)
        return made
