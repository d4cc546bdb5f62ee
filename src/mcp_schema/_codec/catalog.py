"""What one protocol version knows, with the extensions negotiated for it:
its methods, and the definition each kind of message is validated against.

Built from the generated tables once per version and set of *known*
extension ids, so whatever a peer declares, there are at most as many
catalogs as subsets of the compiled extensions.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from mcp_schema._codec.builds import built_once
from mcp_schema._codec.schemas import Target, definition
from mcp_schema.tables import NotificationMethod, RequestMethod
from mcp_schema.versions import STATELESS, SUPPORTED, extensions_of, protocol

__all__ = ["BY_VERSION", "STATELESS", "SUPPORTED", "Catalog", "Results", "catalog"]


@dataclass(frozen=True)
class Results:
    """What may answer one request method (see `Catalog.results`)."""

    complete: Target
    """The method's own result."""
    assumed_complete: Target | None
    """``complete`` with ``resultType`` optional (``assume_complete``); None
    where the result has no required ``resultType``."""
    by_result_type: Mapping[str, Target]
    """Stateless era: the results a ``resultType`` value selects."""
    by_member: tuple[tuple[str, Target], ...]
    """Handshake era: results told by a member only they have (``task``)."""


@dataclass(frozen=True)
class Catalog:
    version: str
    stateless: bool
    requests: Mapping[str, RequestMethod]
    notifications: Mapping[str, NotificationMethod]
    request_targets: Mapping[str, Target]
    """The whole message of each request method."""
    notification_targets: Mapping[str, Target]
    request: Target
    """A request of a method the version does not know (``JSONRPCRequest``)."""
    notification: Target
    result: Target
    """A result whose method is not known (``Result``)."""
    error: Target
    """An error object whose code has no model of its own."""
    error_models: Mapping[int, Target]
    _arms: tuple[tuple[str, Target, bool], ...] = field(repr=False)
    """(tag, result, answers every method): the version's alternative results
    answer the methods that list them, an extension's answer every method."""
    _results: dict[str, Results] = field(default_factory=dict, repr=False, compare=False)

    def results(self, method: str) -> Results | None:
        """The results of a request method the catalog knows, else None."""
        found = self._results.get(method)
        if found is None:
            entry = self.requests.get(method)
            if entry is None:
                return None  # never cached: a peer names methods at will
            found = self._results[method] = self._results_of(entry)
        return found

    def _results_of(self, entry: RequestMethod) -> Results:
        complete = Target(entry.package, entry.result_name)
        arms = {
            tag: target
            for tag, target, answers_all in self._arms
            if answers_all or target.name in entry.alternative_names
        }
        assumed = entry.assumed_complete_name
        return Results(
            complete,
            None if assumed is None else Target(entry.package, assumed),
            arms if self.stateless else {},
            () if self.stateless else _telling(complete, arms),
        )


def _telling(complete: Target, arms: Mapping[str, Target]) -> tuple[tuple[str, Target], ...]:
    # A member the method's own result declares tells nothing.
    declared = definition(complete).get("properties", {})
    return tuple((member, target) for member, target in arms.items() if member not in declared)


BY_VERSION: dict[str, Catalog] = {}
"""The catalog of each version without extensions: what most traffic needs,
one dict lookup away."""


BY_EXTENSIONS: dict[tuple[str, frozenset[str]], Catalog] = {}
"""The catalog of each version with a set of its compiled extensions a reader
was given (a session's or a decoder's own), one dict lookup away too; a set
naming others (anyone may invent one) is not kept."""


def catalog(version: str, extensions: Collection[str]) -> Catalog:
    """The catalog of a supported ``version`` with the compiled ones among ``extensions``."""
    if not extensions:
        found = BY_VERSION.get(version)
        if found is None:
            found = BY_VERSION[version] = _catalog(version, frozenset())
        return found
    given: tuple[str, frozenset[str]] | None = None
    if type(extensions) is frozenset:
        given = (version, extensions)
        found = BY_EXTENSIONS.get(given)
        if found is not None:
            return found
    known = extensions_of(version)
    found = _catalog(version, frozenset(e for e in extensions if e in known))
    if given is not None and given[1] <= known.keys():  # kept: at most a set per subset
        BY_EXTENSIONS[given] = found
    return found


@built_once
def _catalog(version: str, extensions: frozenset[str]) -> Catalog:
    compiled = protocol(version)
    assert compiled is not None, version  # callers check SUPPORTED first
    core = compiled.load()
    added = [extensions_of(version)[e].load() for e in sorted(extensions)]
    requests: dict[str, RequestMethod] = dict(core.requests)
    notifications: dict[str, NotificationMethod] = dict(core.notifications)
    arms = [(tag, Target(core.package, name), False) for tag, name in core.result_arm_names.items()]
    for tables in added:
        requests.update(tables.requests)
        notifications.update(tables.notifications)
        arms += [
            (tag, Target(tables.package, name), True)
            for tag, name in tables.result_arm_names.items()
        ]
    here = core.package
    return Catalog(
        version=version,
        stateless=version in STATELESS,
        requests=requests,
        notifications=notifications,
        request_targets={m: Target(e.package, e.request_name) for m, e in requests.items()},
        notification_targets={
            m: Target(n.package, n.notification_name) for m, n in notifications.items()
        },
        request=Target(here, core.request_name),
        notification=Target(here, core.notification_name),
        result=Target(here, core.result_name),
        error=Target(here, core.error_name),
        error_models={
            code: Target(here, name)
            for code, name in core.error_model_names.items()
            if name != core.error_name
        },
        _arms=tuple(arms),
    )
