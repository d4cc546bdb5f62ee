"""What a server's results carry besides what the handler gave: in the
stateless era, ``resultType``, the server's info in ``_meta`` and the cache
hints of the results that have them (`completed`)."""

from __future__ import annotations

import functools
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from mcp_schema._codec.catalog import catalog
from mcp_schema.negotiation import SERVER_INFO_KEY
from mcp_schema.versions import version_of


class Hints(Protocol):
    """What a server adds to its stateless-era results: the session itself
    (`ServerSession`) is passed, none built per answer."""

    @property
    def info(self) -> dict[str, Any]: ...

    @property
    def cache_scope(self) -> Literal["private", "public"]: ...

    @property
    def ttl_ms(self) -> int: ...


def completed(
    wire: dict[str, Any], method: str, version: str, hints: Hints, *, sent: bool = True
) -> dict[str, Any]:
    """A stateless-era result with what the era asks of every one (the
    server's info only in what is ``sent`` as it is, not projected); a copy."""
    wire = dict(wire)
    wire.setdefault("resultType", "complete")
    if sent:
        meta = wire.get("_meta")
        if meta is None and "_meta" not in wire:  # the common case: no empty mapping to merge
            wire["_meta"] = {SERVER_INFO_KEY: hints.info}
        elif isinstance(meta, dict) and SERVER_INFO_KEY not in meta:
            wire["_meta"] = {**meta, SERVER_INFO_KEY: hints.info}
    if wire["resultType"] == "complete":
        for name in cache_hints(version, method):
            wire.setdefault(name, hints.cache_scope if name == "cacheScope" else hints.ttl_ms)
    return wire


@functools.cache
def cache_hints(version: str, method: str) -> tuple[str, ...]:
    """The cache hints (``cacheScope``, ``ttlMs``) the result of ``method`` has
    in ``version``; a method the catalog knows (the route checked it), so the
    cache holds at most every method of every version."""
    entry = catalog(version, ()).requests.get(method)
    cls = None if entry is None else entry.result
    if not (isinstance(cls, type) and issubclass(cls, BaseModel)):
        return ()
    names = {(f.serialization_alias or a) for a, f in cls.model_fields.items()}
    return tuple(name for name in ("cacheScope", "ttlMs") if name in names)


def protocol_of(model: BaseModel) -> str | None:
    compiled = version_of(type(model))
    return None if compiled is None or compiled.extension is not None else compiled.version
