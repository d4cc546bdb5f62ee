"""Which models a version offers, and how a response's result or error is
told apart: the per-version method tables, the result-union policy and the
error-code union, each built once per version and cached."""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Annotated, Any, Union

from pydantic import Discriminator, Field, StrictStr, Tag, TypeAdapter

from mcp_schema import SUPPORTED_VERSIONS
from mcp_schema._codec.messages import ErrorResponse, ResultResponse
from mcp_schema.base import DEFAULT_RESULT_TAG, McpModel, Omittable, ResultTypeUnion
from mcp_schema.errors import UnsupportedProtocolVersionError
from mcp_schema.method_table import NotificationMethod, RequestMethod

HANDSHAKE_VERSION = "2025-11-25"
"""Used when a message names no version and the caller gives none: only
handshake-era traffic omits it (its version was negotiated by ``initialize``)."""

STATELESS_VERSION = "2026-07-28"
"""The version whose requests name themselves in ``params._meta``."""

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"

_PACKAGES = {"2025-11-25": "mcp_schema.v2025_11_25", "2026-07-28": "mcp_schema.v2026_07_28"}
_EXTENSION_PACKAGES = {(STATELESS_VERSION, TASKS_EXTENSION): "mcp_schema.v2026_07_28.tasks"}


def is_supported(version: str) -> bool:
    return version in _PACKAGES


def _package(version: str) -> ModuleType:
    return importlib.import_module(_PACKAGES[version])


def detect_version(named: Any, version: str | None, headers: Mapping[str, str] | None) -> str:
    """The version to decode in: the caller's, else the one the message names
    in ``_meta``, else the ``MCP-Protocol-Version`` header, else the handshake era's."""
    requested = version
    if requested is None:
        requested = named
    if requested is None and headers:
        requested = next(
            (v for k, v in headers.items() if k.lower() == "mcp-protocol-version"), None
        )
    if requested is None:
        return HANDSHAKE_VERSION
    if not isinstance(requested, str) or not is_supported(requested):
        shown = requested if isinstance(requested, str) else json.dumps(requested)
        raise UnsupportedProtocolVersionError(
            f"Unsupported protocol version: {shown}", requested=shown, supported=SUPPORTED_VERSIONS
        )
    return str(requested)


@functools.cache
def tables(
    version: str, extensions: frozenset[str]
) -> tuple[Mapping[str, RequestMethod], Mapping[str, NotificationMethod]]:
    package = _package(version)
    requests: dict[str, RequestMethod] = dict(package.REQUESTS)
    notifications: dict[str, NotificationMethod] = dict(package.NOTIFICATIONS)
    for extension in sorted(extensions):
        where = _EXTENSION_PACKAGES.get((version, extension))
        if where is not None:
            ext = importlib.import_module(where)
            requests.update(ext.REQUESTS)
            notifications.update(ext.NOTIFICATIONS)
    return requests, notifications


def generic_request(version: str) -> type[McpModel]:
    """The class of a request whose method the version does not know."""
    cls: type[McpModel] = _package(version).JSONRPCRequest
    return cls


def generic_notification(version: str) -> type[McpModel]:
    cls: type[McpModel] = _package(version).JSONRPCNotification
    return cls


def _task_tag(complete: type[McpModel]) -> Callable[[Any], str]:
    # 2025-11-25: a task-augmented request is answered by CreateTaskResult,
    # which carries `task`; the method's own result never declares it.
    declares_task = "task" in complete.model_fields

    def tag_of(value: Any) -> str:
        has_task = (
            ("task" in value)
            if isinstance(value, dict)
            else getattr(value, "task", None) is not None
        )
        return "task" if has_task and not declares_task else DEFAULT_RESULT_TAG

    return tag_of


def _lenient_result_type(cls: type[McpModel]) -> type[McpModel]:
    """``cls`` with ``resultType`` optional: results from handshake-era servers."""
    field = cls.model_fields.get("result_type")
    if field is None:
        return cls
    return type(
        cls.__name__,
        (cls,),
        {
            "__module__": cls.__module__,
            "__annotations__": {"result_type": Omittable[StrictStr]},  # type: ignore[misc]
            "result_type": Field(
                default=None, validation_alias="resultType", serialization_alias="resultType"
            ),
            "__doc__": cls.__doc__,
        },
    )


@functools.cache
def result_response(
    version: str, method: str, extensions: frozenset[str], assume_complete: bool
) -> Any:
    """``ResultResponse[...]`` of ``method``: its complete result, or one of
    the alternatives the version (and negotiated extensions) allow."""
    requests, _ = tables(version, extensions)
    entry = requests.get(method)
    if entry is None:
        generic = _package(version).Result
        return ResultResponse[generic]  # type: ignore[valid-type]
    complete = _lenient_result_type(entry.result) if assume_complete else entry.result
    arms: list[Any] = [Annotated[complete, Tag(DEFAULT_RESULT_TAG)]]
    if version == "2025-11-25":
        tasks = [alt for alt in entry.alternatives if alt.__name__ == "CreateTaskResult"]
        arms += [Annotated[alt, Tag("task")] for alt in tasks]
        result_type: Any = (
            Annotated[Union[tuple(arms)], Discriminator(_task_tag(entry.result))]
            if tasks
            else entry.result
        )
    else:
        tags: dict[str, type[McpModel]] = {}
        for alt in entry.alternatives:
            if alt.__name__ == "InputRequiredResult":
                tags["input_required"] = alt
        ext_package = _EXTENSION_PACKAGES.get((version, TASKS_EXTENSION))
        if TASKS_EXTENSION in extensions and ext_package is not None:
            tags["task"] = importlib.import_module(ext_package).CreateTaskResult
        arms += [Annotated[cls, Tag(tag)] for tag, cls in tags.items()]
        result_type = Annotated[Union[tuple(arms)], ResultTypeUnion(*tags)] if tags else complete
    return ResultResponse[result_type]


@functools.cache
def result_adapter(
    version: str, method: str, extensions: frozenset[str], assume_complete: bool
) -> TypeAdapter[Any]:
    return TypeAdapter(result_response(version, method, extensions, assume_complete))


def _error_code_tag(known: frozenset[int]) -> Callable[[Any], str]:
    def tag_of(value: Any) -> str:
        code = value.get("code") if isinstance(value, dict) else getattr(value, "code", None)
        # Any JSON may stand where the code should: only a known integer selects.
        known_code = isinstance(code, int) and not isinstance(code, bool) and code in known
        return str(code) if known_code else "other"

    return tag_of


@functools.cache
def error_response(version: str) -> Any:
    """``ErrorResponse[...]`` whose error is the model of its code."""
    package = _package(version)
    models: Mapping[int, type[McpModel]] = package.ERROR_MODELS
    generic = package.Error
    # A peer may send a known code without the data its model requires: the
    # generic Error then keeps the message rather than refusing it.
    arms = [
        Annotated[Union[model, generic], Field(union_mode="left_to_right"), Tag(str(code))]
        for code, model in models.items()
        if model is not generic
    ]
    arms.append(Annotated[generic, Tag("other")])
    known = frozenset(code for code, model in models.items() if model is not generic)
    error_type: Any = Annotated[Union[tuple(arms)], Discriminator(_error_code_tag(known))]
    return ErrorResponse[error_type]


@functools.cache
def error_adapter(version: str) -> TypeAdapter[Any]:
    return TypeAdapter(error_response(version))
