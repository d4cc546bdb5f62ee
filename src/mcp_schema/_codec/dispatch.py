"""What the codec dispatches on, per version: the method tables (merged with
the negotiated extensions'), the result-union policy and the error-code
union, each built from the registry once per version and cached."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Union

from pydantic import Discriminator, Field, Tag, TypeAdapter

from mcp_schema._codec.builds import built_once
from mcp_schema._codec.messages import ErrorResponse, ResultResponse
from mcp_schema.base import DEFAULT_RESULT_TAG, McpModel, ResultTypeUnion
from mcp_schema.compiled import VersionTables
from mcp_schema.method_table import NotificationMethod, RequestMethod
from mcp_schema.versions import (
    DEFAULT_VERSION,
    STATELESS_VERSIONS,
    SUPPORTED_VERSIONS,
    extensions_of,
    protocol,
    unsupported,
)

SUPPORTED: frozenset[str] = frozenset(SUPPORTED_VERSIONS)
STATELESS: frozenset[str] = frozenset(STATELESS_VERSIONS)
"""Sets, not functions: the fast path asks on every message."""


@built_once
def version_tables(version: str) -> VersionTables:
    compiled = protocol(version)
    assert compiled is not None, version  # callers check SUPPORTED first
    return compiled.load()


@built_once
def _extension_tables(version: str, extensions: frozenset[str]) -> tuple[VersionTables, ...]:
    known = extensions_of(version)
    return tuple(known[e].load() for e in sorted(extensions) if e in known)


def detect_version(named: Any, version: str | None, headers: Mapping[str, str] | None) -> str:
    """The version to decode in: the caller's, else the one the message names
    in ``_meta``, else the ``MCP-Protocol-Version`` header, else the default."""
    requested = version
    if requested is None:
        requested = named
    if requested is None and headers:
        requested = next(
            (v for k, v in headers.items() if k.lower() == "mcp-protocol-version"), None
        )
    if requested is None:
        return DEFAULT_VERSION
    if not isinstance(requested, str) or requested not in SUPPORTED:
        raise unsupported(requested)
    return str(requested)


@built_once
def tables(
    version: str, extensions: frozenset[str]
) -> tuple[Mapping[str, RequestMethod], Mapping[str, NotificationMethod]]:
    core = version_tables(version)
    requests: dict[str, RequestMethod] = dict(core.requests)
    notifications: dict[str, NotificationMethod] = dict(core.notifications)
    for ext in _extension_tables(version, extensions):
        requests.update(ext.requests)
        notifications.update(ext.notifications)
    return requests, notifications


def _telling(complete: type[McpModel], members: tuple[str, ...]) -> tuple[str, ...]:
    # Handshake era: an alternative result is told by a member only it has
    # (2025-11-25: a task-augmented request is answered by CreateTaskResult,
    # which carries `task`); a member the method's own result declares tells nothing.
    declared = {f.serialization_alias or name for name, f in complete.model_fields.items()} | set(
        complete.model_fields
    )
    return tuple(m for m in members if m not in declared)


def _member_tag(complete: type[McpModel], members: tuple[str, ...]) -> Callable[[Any], str]:
    telling = _telling(complete, members)

    def tag_of(value: Any) -> str:
        for member in telling:
            present = (
                (member in value)
                if isinstance(value, dict)
                else getattr(value, member, None) is not None
            )
            if present:
                return member
        return DEFAULT_RESULT_TAG

    return tag_of


def _own_result(entry: RequestMethod, assume_complete: bool) -> Any:
    """The method's own result; with ``assume_complete``, one whose ``resultType``
    may be absent (results from handshake-era servers): the generated
    ``<Result>AssumedComplete``, where the result requires ``resultType``."""
    if assume_complete and entry.assumed_complete is not None:
        return entry.assumed_complete
    return entry.result


def known_method(version: str, extensions: frozenset[str], method: str) -> str:
    """``method`` when the version knows it, else "": every unknown method is
    answered by the generic result, and the method names a peer makes up are
    never keys of a cache (nor each worth a validator build)."""
    return method if method in tables(version, extensions)[0] else ""


def result_response(
    version: str, method: str, extensions: frozenset[str], assume_complete: bool
) -> Any:
    """``ResultResponse[...]`` of ``method``: its complete result, or one of
    the alternatives the version (and negotiated extensions) allow."""
    return _result_response(
        version, known_method(version, extensions, method), extensions, assume_complete
    )


@built_once
def _result_response(
    version: str, method: str, extensions: frozenset[str], assume_complete: bool
) -> Any:
    requests, _ = tables(version, extensions)
    core = version_tables(version)
    entry = requests.get(method)
    if entry is None:
        return ResultResponse[core.result]  # type: ignore[name-defined]
    complete = _own_result(entry, assume_complete)
    arms: list[Any] = [Annotated[complete, Tag(DEFAULT_RESULT_TAG)]]
    tags = _alternatives(version, entry.alternatives, extensions)
    if not tags:
        return ResultResponse[complete]  # type: ignore[valid-type]
    arms += [Annotated[cls, Tag(tag)] for tag, cls in tags.items()]
    if version in STATELESS:
        by_result_type: Any = Annotated[Union[tuple(arms)], ResultTypeUnion(*tags)]
        return ResultResponse[by_result_type]
    by_member: Any = Annotated[
        Union[tuple(arms)], Discriminator(_member_tag(entry.result, tuple(tags)))
    ]
    return ResultResponse[by_member]


def _alternatives(
    version: str, listed: tuple[type[McpModel], ...], extensions: frozenset[str]
) -> dict[str, type[McpModel]]:
    """The alternative results by tag: the version's own answer the methods that
    list them; an extension's answer any method once the extension is negotiated."""
    tags = {tag: cls for tag, cls in version_tables(version).result_arms.items() if cls in listed}
    for ext in _extension_tables(version, extensions):
        tags.update(ext.result_arms)
    return tags


def plain_response(
    version: str, method: str, extensions: frozenset[str], assume_complete: bool
) -> tuple[Any, tuple[str, ...]] | None:
    """For a handshake-era method whose alternative results are told by a
    member: ``ResultResponse`` of the method's own result alone, and those
    members. A response naming none of them is that result: the dict view
    reads it so, without the Python discriminator (which turns the whole
    result into Python objects before validating it; the model path keeps the
    union, whose class the decoded message is). None for every other method."""
    return _plain_response(
        version, known_method(version, extensions, method), extensions, assume_complete
    )


@built_once
def _plain_response(
    version: str, method: str, extensions: frozenset[str], assume_complete: bool
) -> tuple[Any, tuple[str, ...]] | None:
    entry = tables(version, extensions)[0].get(method)
    if version in STATELESS or entry is None:
        return None  # stateless-era unions are told by resultType, natively
    tags = _alternatives(version, entry.alternatives, extensions)
    if not tags:
        return None
    complete = _own_result(entry, assume_complete)
    return ResultResponse[complete], _telling(entry.result, tuple(tags))  # type: ignore[valid-type]


def result_adapter(
    version: str, method: str, extensions: frozenset[str], assume_complete: bool
) -> TypeAdapter[Any]:
    return _result_adapter(
        version, known_method(version, extensions, method), extensions, assume_complete
    )


@built_once
def _result_adapter(
    version: str, method: str, extensions: frozenset[str], assume_complete: bool
) -> TypeAdapter[Any]:
    return TypeAdapter(_result_response(version, method, extensions, assume_complete))


def _error_code_tag(known: frozenset[int]) -> Callable[[Any], str]:
    def tag_of(value: Any) -> str:
        code = value.get("code") if isinstance(value, dict) else getattr(value, "code", None)
        # Any JSON may stand where the code should: only a known integer selects.
        known_code = isinstance(code, int) and not isinstance(code, bool) and code in known
        return str(code) if known_code else "other"

    return tag_of


@built_once
def error_response(version: str) -> Any:
    """``ErrorResponse[...]`` whose error is the model of its code."""
    core = version_tables(version)
    generic = core.error
    # A peer may send a known code without the data its model requires: the
    # generic Error then keeps the message rather than refusing it.
    arms = [
        Annotated[Union[model, generic], Field(union_mode="left_to_right"), Tag(str(code))]
        for code, model in core.error_models.items()
        if model is not generic
    ]
    arms.append(Annotated[generic, Tag("other")])
    known = frozenset(code for code, model in core.error_models.items() if model is not generic)
    error_type: Any = Annotated[Union[tuple(arms)], Discriminator(_error_code_tag(known))]
    return ErrorResponse[error_type]


@built_once
def error_adapter(version: str) -> TypeAdapter[Any]:
    return TypeAdapter(error_response(version))
