"""The same message as a model of another protocol version (hand-written
runtime module).

`project` walks a decoded message with the models it was decoded by. Which
members the target version lacks comes from `mcp_schema.diff`, so the diff
and the projection cannot disagree. The rules for shapes that changed
between versions are the ``_`` functions below, one per rule, and the
table in docs/guide/versions.md.
"""

from __future__ import annotations

import importlib
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Generic, TypeVar, overload

from pydantic import BaseModel, ValidationError

from mcp_schema._args import check
from mcp_schema.base import McpModel
from mcp_schema.codec import ErrorResponse, ResultResponse, to_wire
from mcp_schema.context import CAPABILITIES_KEY, INFO_KEY, LOG_LEVEL_KEY
from mcp_schema.diff import VersionDiff, definitions, diff
from mcp_schema.errors import MAX_ERRORS, MAX_MESSAGE, clip, quote
from mcp_schema.tables import CompiledVersion
from mcp_schema.versions import PROTOCOL_VERSION_KEY, protocol, version_of

__all__ = ["Projection", "ProjectionError", "Session", "project"]

COMPLETE = "complete"
"""The ``resultType`` of a complete result: the only kind the handshake era has."""

NEW_RESULT_DEFAULTS: Mapping[str, Any] = {"cacheScope": "private", "ttlMs": 0}
"""Members a 2026 list result requires and no handshake-era result carries:
the answer may not be cached or shared, which every older answer allowed for."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class Session:
    """What a handshake-era session knows from ``initialize`` (and ``logging/setLevel``)
    and a stateless-era request carries in ``params._meta``: JSON values."""

    client_capabilities: Mapping[str, Any] = field(default_factory=dict)
    client_info: Mapping[str, Any] | None = None
    log_level: str | None = None


M = TypeVar("M", bound=McpModel)


@dataclass(frozen=True)
class Projection(Generic[M]):
    message: M
    """The message as a model of the target version (an instance of the class
    asked for, when `project` was given one)."""
    removed: tuple[str, ...]
    """JSON paths of the members the target version cannot carry, removed."""
    session: Session | None
    """The per-request session facts a stateless-era request carried, moved out
    of ``params._meta`` when projected into the handshake era."""


class ProjectionError(ValueError):
    """The message has no equivalent in the target version, or (``strict``) it
    would lose members; ``paths`` names every one."""

    def __init__(self, reason: str, paths: tuple[str, ...] = ()) -> None:
        # The reason and the paths may quote a peer's text: the message stays
        # bounded (each quote is cut, and at most MAX_ERRORS paths are listed).
        shown = ", ".join(clip(path) for path in paths[:MAX_ERRORS])
        if len(paths) > MAX_ERRORS:
            shown += f" and {len(paths) - MAX_ERRORS} more"
        super().__init__(clip(f"{reason}: {shown}" if paths else reason, MAX_MESSAGE))
        self.paths = paths


def _version_of(model: BaseModel) -> CompiledVersion:
    compiled = version_of(type(model))
    if compiled is None:
        raise TypeError(f"{type(model).__name__} is not a model of a protocol version")
    return compiled


def _path(base: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{base}[{key}]"
    return f"{base}.{key}" if _NAME.match(key) else f"{base}[{quote(key)}]"


class _Walk:
    def __init__(
        self, changes: VersionDiff, target: str, kept: Mapping[str, frozenset[str]] | None = None
    ) -> None:
        self.changes = changes
        self.known = definitions(target)
        self.removed: list[str] = []
        self.kept = kept or {}
        """Members the target defines at a path whatever the definition there
        lists: ``_meta`` of every request's and notification's ``params``."""

    def value(self, model: Any, data: Any, path: str) -> Any:
        if isinstance(model, BaseModel) and isinstance(data, dict):
            return self.model(model, data, path)
        if isinstance(model, list) and isinstance(data, list):
            kept = []
            for index, (item, raw) in enumerate(zip(model, data, strict=True)):
                if isinstance(item, BaseModel) and type(item).__name__ not in self.known:
                    # A union arm (a content block type) the target lacks.
                    self.removed.append(_path(path, index))
                    continue
                kept.append(self.value(item, raw, _path(path, index)))
            return kept
        if isinstance(model, dict) and isinstance(data, dict):
            return {
                k: self.value(model.get(k), v, _path(path, k)) if _walked(v) else v
                for k, v in data.items()
            }
        return data

    def model(
        self,
        model: BaseModel,
        data: dict[str, Any],
        path: str,
        envelope: frozenset[str] = frozenset(),
    ) -> dict[str, Any]:
        name = _definition_name(type(model))
        if name not in self.known:
            return data  # target decides (e.g. a 2026 ``_meta`` object is a plain object before)
        target = self.known[name].members or {}
        # A JSON Schema document (either version declares ``$schema``): its
        # keywords are its vocabulary, not protocol members, whichever ones a
        # version names.
        attrs = _attributes(type(model))
        schema = "$schema" in target or "$schema" in attrs
        lacking = frozenset() if schema else self.changes.removed_members(name)
        lacking -= envelope | self.kept.get(path, frozenset())
        out: dict[str, Any] = {}
        for key, raw in data.items():
            if key in lacking or not _carried(target.get(key), raw):
                self.removed.append(_path(path, key))
                continue
            attr = attrs.get(key)
            if attr is not None and _walked(raw):
                out[key] = self.value(getattr(model, attr), raw, _path(path, key))
            else:
                out[key] = raw
        return out


def _walked(raw: Any) -> bool:
    """Whether `_Walk.value` looks inside ``raw`` (it hands anything else back
    as it is, so its path need not be spelled)."""
    return isinstance(raw, (dict, list))


@cache
def _attributes(cls: type[BaseModel]) -> dict[str, str]:
    """The attribute of each wire name of ``cls``, worked out once per class."""
    return {(f.serialization_alias or f.alias or a): a for a, f in cls.model_fields.items()}


def _carried(member: Any, raw: Any) -> bool:
    """Whether the target's member can hold ``raw``: a non-object
    ``structuredContent``, or an ``outputSchema`` not of type object, cannot be
    carried by a version that requires an object there."""
    if member is None:
        return True
    if member.type.startswith("dict[") and not isinstance(raw, dict):
        return False
    if member.type == "ToolOutputSchema":
        return isinstance(raw, dict) and raw.get("type") == "object"
    return True


def _result_type_out(result: dict[str, Any]) -> None:
    """2026 → handshake era: ``resultType: complete`` is what every older result is."""
    kind = result.pop("resultType", COMPLETE)
    if kind != COMPLETE:
        raise ProjectionError(f"a {quote(kind)} result has no handshake-era equivalent")
    # The defaults say what an older answer always meant; other values are
    # lost and reported like any member the target lacks.
    for key, default in NEW_RESULT_DEFAULTS.items():
        if key in result and result[key] == default:
            del result[key]


def _result_type_in(result: dict[str, Any], target: type[BaseModel]) -> None:
    """Handshake era → 2026: a result is complete; list results may not be cached."""
    result.setdefault("resultType", COMPLETE)
    for key, default in NEW_RESULT_DEFAULTS.items():
        if key in _attributes(target):
            result.setdefault(key, default)


@cache
def _params_members(generic: type[BaseModel]) -> frozenset[str]:
    """The wire names of the ``params`` members a version's generic Request (or
    Notification) defines: what every request's (notification's) params may carry."""
    info = generic.model_fields.get("params")
    if info is None:
        return frozenset()
    pending: list[Any] = [info.annotation]
    while pending:
        kind = pending.pop()
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            return frozenset(_wire_names(kind))
        pending.extend(typing.get_args(kind))
    return frozenset()


@cache
def _wire_names(cls: type[BaseModel]) -> frozenset[str]:
    return frozenset(_attributes(cls))


def _session_out(request: dict[str, Any]) -> Session:
    """2026 → handshake era: the per-request client facts belong to the session."""
    params = request.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict):
        return Session()
    meta.pop(PROTOCOL_VERSION_KEY, None)
    session = Session(
        client_capabilities=meta.pop(CAPABILITIES_KEY, {}),
        client_info=meta.pop(INFO_KEY, None),
        log_level=meta.pop(LOG_LEVEL_KEY, None),
    )
    if not meta and isinstance(params, dict):
        del params["_meta"]
    return session


def _session_in(request: dict[str, Any], session: Session | None, version: str) -> None:
    """Handshake era → 2026: every request names its version and its client."""
    if session is None:
        raise TypeError(f"a request projected into {version} needs its session (session=)")
    meta = request.setdefault("params", {}).setdefault("_meta", {})
    meta[PROTOCOL_VERSION_KEY] = version
    meta[CAPABILITIES_KEY] = dict(session.client_capabilities)
    if session.client_info is not None:
        meta[INFO_KEY] = dict(session.client_info)
    if session.log_level is not None:
        meta[LOG_LEVEL_KEY] = session.log_level


@cache
def _definition_name(cls: type[BaseModel]) -> str:
    """The definition a generated class stands for in every version: its own,
    or for a class the generator derived from another of its module (a
    draft-07 ``JSONRPC<Name>``, a ``<Name>AssumedComplete``), that one's."""
    while cls.__bases__[0].__module__ == cls.__module__:
        cls = cls.__bases__[0]
    return cls.__name__


@cache
def _enveloped(envelope: type[BaseModel], cls: type[BaseModel]) -> type[BaseModel]:
    """``ResultResponse[cls]`` (or ``ErrorResponse[cls]``), parametrized once."""
    return envelope[cls]  # type: ignore[index,no-any-return]


@cache
def _target_class(name: str, version: CompiledVersion) -> type[BaseModel]:
    cls = getattr(importlib.import_module(f"{version.package}.models"), name, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseModel)):
        raise ProjectionError(f"{name} has no equivalent in {version.version}")
    return cls


def _whole_message(cls: type[BaseModel], method: Any, version: CompiledVersion) -> type[BaseModel]:
    """What ``version`` decodes a ``method`` message of definition ``cls`` as:
    a draft-07 version, the ``JSONRPC<Name>`` of its tables."""
    tables = version.load()
    request = tables.requests.get(method) if isinstance(method, str) else None
    note = tables.notifications.get(method) if isinstance(method, str) else None
    whole = request.request if request else note.notification if note else cls
    return whole if issubclass(whole, cls) else cls


@overload
def project(
    message: BaseModel,
    to_version: str,
    *,
    strict: bool = False,
    session: Session | None = None,
) -> Projection[McpModel]: ...
@overload
def project(
    message: BaseModel,
    to_version: type[M],
    *,
    strict: bool = False,
    session: Session | None = None,
) -> Projection[M]: ...
def project(
    message: BaseModel,
    to_version: str | type[M],
    *,
    strict: bool = False,
    session: Session | None = None,
) -> Projection[Any]:
    """``message`` (a decoded message) as a model of ``to_version``.

    ``to_version`` is a version, or a request or notification class of one
    (``v2026_07_28.CallToolRequest``): the message projected into that class's
    version must then be an instance of it (`ProjectionError` otherwise), and
    a type checker knows the result's class.

    Members the message's version defines and ``to_version`` does not are
    removed and listed in the result (``strict=True``: `ProjectionError` naming
    every path instead). Members neither version defines are kept. A request
    projected into the stateless era takes ``session``.
    """
    check(strict, bool, "strict")
    check(session, Session, "session", none=True)
    if isinstance(to_version, type):
        compiled = version_of(to_version) if issubclass(to_version, BaseModel) else None
        if compiled is None or compiled.extension is not None:
            raise TypeError(f"{to_version!r} is not a model class of a protocol version")
        found = _project(message, compiled.version, strict, session)
        if not isinstance(found.message, to_version):
            raise ProjectionError(
                f"{type(message).__name__} projects to {type(found.message).__name__}, "
                f"not {to_version.__name__}"
            )
        return found
    if not isinstance(to_version, str):
        raise TypeError(f"to_version must be a version or a model class, not {to_version!r:.40}")
    return _project(message, to_version, strict, session)


def _project(
    message: BaseModel, to_version: str, strict: bool, session: Session | None
) -> Projection[Any]:
    target = protocol(to_version)
    if target is None:
        raise ValueError(f"no models for protocol version {to_version!r}")
    envelope: type[BaseModel] | None = None
    body: Any = message
    if isinstance(message, ResultResponse):
        envelope, body = ResultResponse, message.result
    elif isinstance(message, ErrorResponse):
        envelope, body = ErrorResponse, message.error
    if not isinstance(body, BaseModel):
        raise TypeError(f"{type(message).__name__} holds no model of a protocol version")
    source = _version_of(body)
    if source.extension is not None:
        raise ProjectionError(f"{type(body).__name__} ({source.extension}) has no other version")
    if source.version == to_version:
        return Projection(message, (), None)
    data = to_wire(message)
    name = _definition_name(type(body))
    stateless_out = source.era == "stateless" and target.era == "handshake"
    stateless_in = source.era == "handshake" and target.era == "stateless"
    if envelope is ResultResponse and stateless_out:
        _result_type_out(data["result"])
    cls: type[BaseModel]
    if envelope is ErrorResponse:
        # Error objects are typed by code, under names that vary by version.
        tables = target.load()
        code = data["error"].get("code")
        cls = tables.error_models.get(code, tables.error) if isinstance(code, int) else tables.error
    else:
        cls = _target_class(name, target)
        if envelope is None:
            cls = _whole_message(cls, data.get("method"), target)
    moved: Session | None = None
    if envelope is None:
        # A draft-07 version declares the JSON-RPC members (``jsonrpc``, ``id``)
        # on its envelopes, not on each request and notification, and the
        # members every request's (notification's) params may have (``_meta``)
        # on the generic Request (Notification), not on each one's params.
        tables = target.load()
        generic = tables.request if "id" in data else tables.notification
        envelope_members = _wire_names(tables.request) | _wire_names(tables.notification)
        walk = _Walk(
            diff(source.version, to_version), to_version, {"$.params": _params_members(generic)}
        )
        data = walk.model(body, data, "$", envelope_members)
        if "id" in data and "method" in data:
            if stateless_out:
                moved = _session_out(data)
            elif stateless_in:
                _session_in(data, session, to_version)
    else:
        walk = _Walk(diff(source.version, to_version), to_version)
        key = "result" if envelope is ResultResponse else "error"
        inner = walk.model(body, data[key], f"$.{key}")
        if key == "result" and stateless_in:
            _result_type_in(inner, cls)
        data[key] = inner
    removed = tuple(walk.removed)
    if strict and removed:
        raise ProjectionError(f"{to_version} cannot carry these members", removed)
    model = cls if envelope is None else _enveloped(envelope, cls)
    try:
        # pydantic's own validation: ``data`` is JSON (to_wire's, walked), so the
        # check McpModel.model_validate adds (no unknown member that is not a
        # JSON value) cannot fail, and it would walk the whole message again.
        projected = model.__pydantic_validator__.validate_python(data)
    except ValidationError as exc:
        paths = tuple(
            "$"
            + "".join(
                f"[{quote(step)}]" if isinstance(step, str) else f"[{step}]" for step in e["loc"]
            )
            for e in exc.errors(include_url=False)
        )
        raise ProjectionError(f"not a valid {name} of {to_version}", paths) from None
    return Projection(projected, removed, moved)
