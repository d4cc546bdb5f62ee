"""`Upstream`: what an `mcp_schema.gateway.ExchangeValidator` knows of the
server it guards, from its probe (`Upstream.learn`) and from the valid
answers it reads (`Upstream.answered`), and the rules that knowledge
decides (sans-IO; one event loop).

* The tools' ``x-mcp-header`` annotations, from ``tools/list`` answers (the
  upstream's latest listing of a tool winning; at most ``max_tool_bytes``,
  the least recently listed forgotten first).
* The versions it serves per request (a ``server/discover`` answer's
  ``supportedVersions``): a request naming a version the gateway reads none
  in is refused as `mcp_schema.http.Endpoint` refuses it (-32020 when
  ``MCP-Protocol-Version`` names another version, else -32022 listing those
  versions, the ones the gateway reads).
* The extensions it declares (its latest ``server/discover`` answer's
  ``capabilities.extensions``; an ``initialize`` answer adds those it
  declares). A stateless-era exchange is read with an extension (the Tasks
  extension: a ``tools/call`` answered with a task) when its request
  declares it in its client capabilities and the upstream declared it, or
  has not said yet what it declares. The ``extensions`` given (``gateway
  --tasks``) are read in every exchange, whatever is declared. A task answer
  read without the extension is reported saying why.
* A ``tasks/update``'s answers that are no input response at all are not
  the gateway's to refuse: the extension ignores answers under keys the task
  does not ask, whatever they hold, and only the upstream knows those keys
  (it refuses the others, -32602). They are set aside for the reading, and
  the request is forwarded as it came.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from mcp_schema._args import check

# The codec's parse, version rule and schemas (private to it, as the
# endpoint and the sessions read them).
from mcp_schema._codec.parse import parse
from mcp_schema._codec.route import named_version
from mcp_schema._codec.schemas import Target, validator
from mcp_schema._codec.versioning import NULL_VERSION
from mcp_schema.capabilities import CAPABILITIES_KEY
from mcp_schema.errors import HeaderMismatchError, McpError, UnsupportedProtocolVersionError
from mcp_schema.gateway.probe import Served, declared_extensions
from mcp_schema.http_headers import check_version_header
from mcp_schema.tool_headers import InvalidToolHeaderError, ToolHeaders
from mcp_schema.versions import (
    STATELESS_VERSIONS,
    SUPPORTED_VERSIONS,
    TASKS_EXTENSION,
    extensions_of,
    protocol,
    unsupported,
)

__all__ = ["KNOWN_EXTENSIONS", "MAX_TOOL_BYTES", "Upstream"]

MAX_TOOL_BYTES = 1 << 20
"""The tools' ``x-mcp-header`` annotations a validator keeps, by default, in
bytes (`Upstream.tool_bytes`: each annotated tool's name, header names and
property paths)."""

_TOOL_OVERHEAD = 64  # bytes counted for each tool and each of its parameters besides their text

KNOWN_EXTENSIONS: tuple[str, ...] = tuple(
    sorted({name for version in SUPPORTED_VERSIONS for name in extensions_of(version)})
)
"""The extensions the codec has models for: those an exchange may be read with."""
_NAMED = tuple((name, name.encode()) for name in KNOWN_EXTENSIONS)  # the bytes a body names it by

_TASKS_UPDATE = b'"tasks/update"'
_LISTS = {"tools/list": "tools", "prompts/list": "prompts"}


class Upstream:
    """What is known of one upstream (see the module): ``extensions``, those
    read in every exchange; ``max_tool_bytes``, the bound on the tools kept."""

    def __init__(self, extensions: frozenset[str], max_tool_bytes: int) -> None:
        self.extensions = extensions
        self.max_tool_bytes = max_tool_bytes
        self.declared: frozenset[str] | None = None
        """The extensions it declares; None: not known yet."""
        self.versions: tuple[str, ...] | None = None
        """The stateless-era versions it serves, oldest first; None: not known yet."""
        self.tools: OrderedDict[str, ToolHeaders] = OrderedDict()  # as the codec looks them up
        self.listed: Callable[[str, list[object]], None] | None = None
        """Told the names each valid ``tools/list`` or ``prompts/list`` result
        lists, with that method (the gateway's telemetry learns them)."""
        self._sizes: dict[str, int] = {}
        self.tool_bytes = 0

    # -- learning -------------------------------------------------------------------------

    def learn(self, served: Served) -> None:
        """What its probe found: the versions it serves per request and, when
        it discovered, the extensions it declares."""
        check(served, Served, "served")
        if served.stateless:
            self.versions = served.stateless
        if served.extensions is not None:
            self.declared = served.extensions
        elif served.version is not None:  # its initialize answer's, as `answered` adds them
            found = declared_extensions(served.capabilities)
            if found:
                self.declared = found | (self.declared or frozenset())

    def answered(self, method: str | None, result: Mapping[str, Any]) -> None:
        """The valid result (validated by the codec) of a request of ``method``."""
        if self.listed is not None and method in _LISTS:
            listed = result.get(_LISTS[method])
            if isinstance(listed, list):
                self.listed(method, [i.get("name") for i in listed if isinstance(i, dict)])
        if method == "tools/list":
            self._listed(result.get("tools"))
        elif method == "server/discover":
            listed = result.get("supportedVersions")
            if isinstance(listed, list):
                self.versions = tuple(v for v in STATELESS_VERSIONS if v in listed)
            self.declared = declared_extensions(result.get("capabilities"))
        elif method == "initialize":
            found = declared_extensions(result.get("capabilities"))
            if found:
                self.declared = found | (self.declared or frozenset())

    def _listed(self, tools: object) -> None:
        """A ``tools/list`` result's tools: each one's annotations replace what was known of it."""
        if not isinstance(tools, list):
            return
        for tool in tools:
            name = tool.get("name") if isinstance(tool, dict) else None
            if not isinstance(name, str):
                continue
            self._forget_tool(name)
            try:
                read = ToolHeaders(tool)
            except InvalidToolHeaderError:
                continue  # left out by the clients: its calls are not checked
            mirrored = read.headers
            if not mirrored:
                continue
            size = (
                len(name)
                + _TOOL_OVERHEAD
                + sum(
                    len(header) + _TOOL_OVERHEAD + sum(len(step) for step in path)
                    for header, path in mirrored.items()
                )
            )
            if size > self.max_tool_bytes:
                continue  # never kept: it would evict everything else
            self.tools[name], self._sizes[name] = read, size
            self.tool_bytes += size
            while self.tool_bytes > self.max_tool_bytes:
                self._forget_tool(next(iter(self.tools)))

    def _forget_tool(self, name: str) -> None:
        if self.tools.pop(name, None) is not None:
            self.tool_bytes -= self._sizes.pop(name)

    # -- what it decides ------------------------------------------------------------------

    def extensions_for(self, body: bytes) -> frozenset[str]:
        """The extensions a request read by a Correlator of its own is read
        with: those given, and each the upstream may serve (it declared it,
        or what it declares is not known) that the body names; whether the
        request declares it is known once it is read (`declared_only`)."""
        found = self.extensions
        for name, named in _NAMED:
            if name in found or (self.declared is not None and name not in self.declared):
                continue
            if body.find(named) >= 0:  # not ``in``, which raises a TypeError first
                found = found | {name}
        return found

    def declared_only(self, used: frozenset[str], value: Mapping[str, Any]) -> frozenset[str]:
        """Of the extensions ``used`` for the request ``value`` (read), those
        given and those its client capabilities declare."""
        named = used - self.extensions
        if not named:
            return used
        params = value.get("params")
        meta = params.get("_meta") if isinstance(params, Mapping) else None
        capabilities = meta.get(CAPABILITIES_KEY) if isinstance(meta, Mapping) else None
        return self.extensions | (named & declared_extensions(capabilities))

    def unsupported(
        self, err: UnsupportedProtocolVersionError, received: Mapping[str, str], body: bytes
    ) -> McpError:
        """The refusal of a request naming in its ``_meta`` a version the gateway
        reads none in, as the endpoint refuses it: -32020 when
        ``MCP-Protocol-Version`` names another version, else -32022 listing
        the versions served per request (those of the upstream the gateway
        reads, when they are known), newest first. ``err``: the codec's -32022,
        kept for a request that names no version (its header's was refused)."""
        try:
            named = named_version(parse(body))
        except McpError:
            return err
        if named is None:
            return err
        refused: McpError
        try:
            if isinstance(named, str):
                check_version_header(received, named)
        except HeaderMismatchError as mismatch:
            refused = mismatch
        else:
            known = self.versions
            served = [v for v in STATELESS_VERSIONS if known is None or v in known]
            refused = unsupported(
                None if named is NULL_VERSION else named,
                supported=tuple(reversed(served or STATELESS_VERSIONS)),
            )
        refused.request_id, refused.answerable = err.request_id, err.answerable
        return refused

    def set_aside(self, used: frozenset[str], body: bytes) -> bytes | None:
        """A ``tasks/update`` body read with the Tasks extension, without the
        answers that are no input response (see the module); None when it has
        none (or is no such body): the codec's refusal of it stands."""
        if TASKS_EXTENSION not in used or _TASKS_UPDATE not in body:
            return None
        try:
            value = parse(body)
        except McpError:
            return None
        params = value.get("params")
        named = named_version(value)
        compiled = protocol(named) if isinstance(named, str) else None
        if value.get("method") != "tasks/update" or not isinstance(params, dict):
            return None
        responses = params.get("inputResponses")
        if compiled is None or type(responses) is not dict:
            return None
        if TASKS_EXTENSION not in extensions_of(compiled.version):
            return None
        check = validator(Target(compiled.package, "InputResponse"))
        kept = {k: v for k, v in responses.items() if check.is_valid(v)}
        if len(kept) == len(responses):
            return None
        value["params"] = {**params, "inputResponses": kept}
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()

    def unread_task(self, used: frozenset[str], data: bytes) -> str:
        """What the report of an invalid answer adds when it is a task that was
        not read as one (``used``: the extensions it was read with): why not."""
        if TASKS_EXTENSION in used or b'"task"' not in data:
            return ""
        try:
            result = parse(data).get("result")
        except McpError:
            return ""
        if not isinstance(result, dict) or result.get("resultType") != "task":
            return ""
        if self.declared is not None and TASKS_EXTENSION not in self.declared:
            why = (
                "the upstream's server/discover answer does not declare it "
                "(gateway --tasks reads it all the same)"
            )
        else:
            why = "the request does not declare it in its client capabilities"
        return f" (a task, not read as one: the {TASKS_EXTENSION} extension is not in use: {why})"
