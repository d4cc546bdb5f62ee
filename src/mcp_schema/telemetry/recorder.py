"""`Telemetry`: the tracer, the meter and every instrument of the package, made
once per app and consulted on each request.

Nothing here is imported unless the OpenTelemetry API is (the ``otel``
extra), and `Telemetry.active` is False while the API has no SDK behind its
global providers: a request then pays one check, not a span.
"""

from __future__ import annotations

import hashlib
import itertools
import time
from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from opentelemetry.trace import SpanKind

from mcp_schema.telemetry.counts import Key, counts_for
from mcp_schema.telemetry.operation import METRIC_ATTRIBUTES, Late, Operation
from mcp_schema.telemetry.propagation import extract
from mcp_schema.telemetry.vocabulary import MAX_VALUE, OTHER, code_value, method_value, named
from mcp_schema.versions import SUPPORTED

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import Span, TracerProvider

__all__ = ["DURATION_BUCKETS", "MAX_LEARNED", "RECHECK_SECONDS", "Telemetry"]

DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
"""The conventions' bucket boundaries of the operation and session durations, in seconds."""

MAX_LEARNED = 256
"""Most tool and prompt names a `Telemetry` learns from what a peer lists
(`Telemetry.learn`): the first ones kept, any later one recorded `OTHER`."""

RECHECK_SECONDS = 1.0
"""How long an answer of `Telemetry.active` without an SDK is kept."""

_SCOPE = "mcp_schema"
_PROMPT_METHODS = frozenset({"prompts/get"})
_NAMED_METHODS = frozenset({"tools/call", *_PROMPT_METHODS})
"""The methods whose ``params.name`` names a tool or a prompt (the span's target)."""
_RESOURCE_METHODS = frozenset(
    {
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "notifications/resources/updated",
    }
)
Transport = Literal["tcp", "pipe", "unix"]


def _version(version: str | None) -> str | None:
    if version is None:
        return None
    return version if version in SUPPORTED else OTHER


def _word(value: str) -> str:
    """One of the package's own words (a direction, a reason, a table): kept
    as it is, bounded all the same."""
    return value if len(value) <= MAX_VALUE else OTHER


class Telemetry:
    """What the package records, and where to.

    * ``tracer_provider``, ``meter_provider``: the providers to use (default:
      the global ones, which `opentelemetry-instrument` and the ``OTEL_*``
      variables configure);
    * ``tools``, ``prompts``: the names the server declares, the only ones
      recorded as ``gen_ai.tool.name`` / ``gen_ai.prompt.name`` (others are ``_OTHER``);
    * ``record_content``: record tool arguments and results (opt-in: they
      may hold what a user would not want in a trace backend).
    """

    __slots__ = (
        "_explicit",
        "_learned",
        "_meter_provider",
        "_quiet_until",
        "_shapes",
        "_tracer",
        "_tracer_provider",
        "bridged",
        "broker",
        "client_duration",
        "prompts",
        "record_content",
        "refused",
        "resource_uris",
        "sealed",
        "server_duration",
        "session_duration",
        "shares",
        "tools",
    )

    def __init__(
        self,
        *,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        tools: Collection[str] = (),
        prompts: Collection[str] = (),
        record_content: bool = False,
        resource_uris: bool = True,
    ) -> None:
        from opentelemetry import metrics, trace

        from mcp_schema import __version__

        self._explicit = tracer_provider is not None or meter_provider is not None
        self._learned = 0
        self._shapes: dict[tuple[str | None, ...], _Shape] = {}
        self._quiet_until = 0.0
        self._tracer_provider = tracer_provider or trace.get_tracer_provider()
        self._meter_provider = meter_provider or metrics.get_meter_provider()
        self._tracer = self._tracer_provider.get_tracer(_SCOPE, __version__)
        meter = self._meter_provider.get_meter(_SCOPE, __version__)
        self.tools, self.prompts = frozenset(tools), frozenset(prompts)
        self.record_content, self.resource_uris = bool(record_content), bool(resource_uris)

        self._durations(meter)
        counts = counts_for(self._meter_provider, meter, from_globals=meter_provider is None)
        self.refused, self.bridged, self.sealed = counts.refused, counts.bridged, counts.sealed
        self.shares, self.broker = counts.shares, counts.broker

    def _durations(self, meter: Any) -> None:
        def duration(name: str, what: str) -> Any:
            return meter.create_histogram(
                name,
                unit="s",
                description=what,
                explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
            )

        self.server_duration = duration(
            "mcp.server.operation.duration", "MCP request or notification duration on the receiver."
        )
        self.client_duration = duration(
            "mcp.client.operation.duration", "MCP request or notification duration on the sender."
        )
        self.session_duration = duration(
            "mcp.server.session.duration", "Duration of a handshake-era MCP session on the server."
        )

    def _unproxied(self) -> None:
        """The SDK's own tracer and duration instruments, once an SDK is
        behind the global providers, in place of the API's proxies this
        `Telemetry` was made with when none was (they forward each call: one
        layer less per span and per record). Asked for again by name, they
        are the ones the proxies forward to; the counters keep theirs
        (`counts_for`)."""
        from opentelemetry import metrics, trace

        from mcp_schema import __version__

        tracer_provider = trace.get_tracer_provider()
        if not isinstance(tracer_provider, trace.ProxyTracerProvider):
            self._tracer_provider = tracer_provider
            self._tracer = tracer_provider.get_tracer(_SCOPE, __version__)
        meter_provider = metrics.get_meter_provider()
        if not _proxy_meter_provider(meter_provider):
            self._meter_provider = meter_provider
            self._durations(meter_provider.get_meter(_SCOPE, __version__))

    def declare(self, *, tools: Collection[str] = (), prompts: Collection[str] = ()) -> None:
        """Names a server declares, recorded as they are from now on (the
        set only grows, by what servers declare, never by what peers send)."""
        self.tools = self.tools | frozenset(tools)
        self.prompts = self.prompts | frozenset(prompts)

    def learn(self, *, tools: Iterable[object] = (), prompts: Iterable[object] = ()) -> None:
        """Names a peer published (a gateway's upstream, in its ``tools/list``
        and ``prompts/list`` results): recorded as they are from now on, as
        declared ones are, but a peer names what it likes, so at most
        `MAX_LEARNED` are ever learned (first come, first kept), each a
        string of at most `MAX_VALUE` characters; any other is `OTHER`."""
        self.tools = self._learn(tools, self.tools)
        self.prompts = self._learn(prompts, self.prompts)

    def listed(self, method: str, names: Iterable[object]) -> None:
        """`learn` the names a ``tools/list`` or ``prompts/list`` (``method``) result lists."""
        if method == "tools/list":
            self.learn(tools=names)
        elif method == "prompts/list":
            self.learn(prompts=names)

    def _learn(self, names: Iterable[object], known: frozenset[str]) -> frozenset[str]:
        room = MAX_LEARNED - self._learned
        if room <= 0:
            return known
        read = itertools.islice(names, MAX_LEARNED)  # a list read only as far as it may teach
        fit = (n for n in read if isinstance(n, str) and len(n) <= MAX_VALUE and n not in known)
        new = list(dict.fromkeys(fit))[:room]
        self._learned += len(new)
        return known | frozenset(new) if new else known

    @property
    def active(self) -> bool:
        """Whether anything is recorded: providers were given, or an SDK is
        behind the global ones (the API's proxies record nothing).

        Asking the API is dear (each look-up reads the environment), so while
        no SDK is there the answer is kept for `RECHECK_SECONDS`; once one is,
        it stays (the API sets a global provider once)."""
        if self._explicit:
            return True
        now = time.monotonic()
        if now < self._quiet_until:
            return False
        if _sdk_behind_globals():
            self._explicit = True
            self._unproxied()
            return True
        self._quiet_until = now + RECHECK_SECONDS
        return False

    # -- one operation ---------------------------------------------------------------------

    def _attributes(
        self,
        method: str,
        request_id: str | int | None,
        version: str | None,
        era: str | None,
        params: Mapping[str, Any] | None,
        transport: Transport,
    ) -> tuple[dict[str, Any], str, dict[str, Any], Late | None]:
        """The span's attributes, its name (``{method} {target}``), the
        duration's attributes (shared: never to be changed), and the name to
        look up again at the end when it is not known yet (`Late`)."""
        target = late = None
        if method in _NAMED_METHODS:  # known methods: recorded as they are
            given = None if params is None else params.get("name")
            tools = method == "tools/call"
            target = named(given, self.tools if tools else self.prompts)
            if target == OTHER and isinstance(given, str) and len(given) <= MAX_VALUE:
                known = self._known_tools if tools else self._known_prompts
                attribute = "gen_ai.tool.name" if tools else "gen_ai.prompt.name"
                late = Late(known, attribute, method, given)
        # The other facts as sent first: when they are of the closed sets (the
        # common case) they are their own recorded key, found in one look-up.
        shape = self._shapes.get((method, version, era, transport, target))
        if shape is None:
            shape = self._shape_of(method, version, era, transport, target)
        name, base, metric = shape
        attributes = dict(base)
        if request_id is not None:
            attributes["jsonrpc.request.id"] = str(request_id)[:MAX_VALUE]
        recorded = base["mcp.method.name"]
        if recorded == "tools/call":
            if self.record_content and params is not None and "arguments" in params:
                attributes["gen_ai.tool.call.arguments"] = _json(params["arguments"])
        elif recorded in _RESOURCE_METHODS and self.resource_uris and params is not None:
            uri = params.get("uri")
            if isinstance(uri, str):
                attributes["mcp.resource.uri"] = uri[:2048]
        return attributes, name, metric, late

    def _shape_of(
        self, method: str, version: str | None, era: str | None, transport: str, target: str | None
    ) -> _Shape:
        """The shape of these facts as recorded (`_shape`; ``target``: the
        tool or prompt, recorded already), kept under the recorded key. Facts
        as sent that are of the closed sets are their own recorded key: the
        next such operation finds its shape in `_attributes`' one look-up
        (and a key kept is only ever one that facts record as)."""
        era_word = None if era is None else _word(era)
        key = (method_value(method), _version(version), era_word, transport, target)
        shape = self._shapes.get(key)
        if shape is None:
            if len(self._shapes) >= _MAX_SHAPES:  # a closed set; bounded all the same
                self._shapes.clear()
            shape = self._shapes[key] = _shape(*key)
        return shape

    def _known_tools(self) -> frozenset[str]:
        return self.tools

    def _known_prompts(self) -> frozenset[str]:
        return self.prompts

    def server_operation(
        self,
        method: str,
        *,
        request_id: str | int | None = None,
        version: str | None = None,
        era: str | None = None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        transport: Transport = "tcp",
        client: tuple[str, int] | None = None,
        session: str | None = None,
        session_bound: bool = False,
    ) -> Operation:
        """A server span for a received message, parented by the context of
        its ``params._meta`` (over the HTTP ``headers``'), ended by the caller.

        ``session``: the handshake-era session id, recorded as it is only
        when the session is bound to an authenticated principal
        (``session_bound``), else hashed: a raw id is a capability."""
        attributes, name, metric, late = self._attributes(
            method, request_id, version, era, params, transport
        )
        if client is not None:
            attributes["client.address"], attributes["client.port"] = client
        if session is not None:
            attributes["mcp.session.id"] = session if session_bound else _hashed(session)
        meta = None if params is None else params.get("_meta")
        parent = extract(meta if isinstance(meta, Mapping) else None, headers)
        span = self._tracer.start_span(name, parent, SpanKind.SERVER, attributes)
        return Operation(span, self.server_duration, metric, late)

    def client_operation(
        self,
        method: str,
        *,
        request_id: str | int | None = None,
        version: str | None = None,
        era: str | None = None,
        params: Mapping[str, Any] | None = None,
        server: tuple[str, int] | None = None,
        transport: Transport = "tcp",
        parent: Any = None,
    ) -> Operation:
        """A client span for a message sent (the caller injects its context
        into the message, `mcp_schema.telemetry.propagation.inject`)."""
        attributes, name, metric, late = self._attributes(
            method, request_id, version, era, params, transport
        )
        if server is not None:
            attributes["server.address"], attributes["server.port"] = server
            metric = {**metric, "server.address": server[0], "server.port": server[1]}
        span = self._tracer.start_span(name, parent, SpanKind.CLIENT, attributes)
        return Operation(span, self.client_duration, metric, late)

    def task_work(self, created_by: Span, tool: object) -> Span:
        """The span of a task's work (the Tasks extension), started: the
        conventions' ``execute_tool {gen_ai.tool.name}`` (INTERNAL), a child
        of the ``tools/call`` server span ``created_by`` that created the
        task, and linked to it (the work outlives that span: a backend that
        shows a long child apart, or another process resuming the trace,
        still finds where it came from). Ended by the caller."""
        from opentelemetry.trace import Link, set_span_in_context

        recorded = named(tool, self.tools)
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": recorded,
            "mcp.method.name": "tools/call",
        }
        link = Link(created_by.get_span_context(), {"mcp_schema.link": "created_by"})
        parent = set_span_in_context(created_by)
        return self._tracer.start_span(
            f"execute_tool {recorded}", parent, SpanKind.INTERNAL, attributes, links=[link]
        )

    def session_ended(self, seconds: float, version: str | None, transport: Transport) -> None:
        """A handshake-era session (or a stdio child) that lived ``seconds`` ended."""
        attributes: dict[str, str] = {"network.transport": transport}
        if (recorded := _version(version)) is not None:
            attributes["mcp.protocol.version"] = recorded
        self.session_duration.record(seconds, attributes)

    # -- what no peer counts ---------------------------------------------------------------

    def count_refused(
        self, code: int, direction: str, method: object = None, *, status: int | None = None
    ) -> None:
        """A message refused or reported (``direction``: ``received`` or
        ``sent``; ``status``: the HTTP status of a front door's refusal)."""
        key: Key = (
            ("rpc.response.status_code", code_value(code)),
            ("mcp_schema.direction", _word(direction)),
            ("mcp.method.name", method_value(method)),
        )
        if status is not None and 400 <= status < 600:
            key += (("http.response.status_code", status),)
        self.refused.add(key)

    def count_sealed(self, reason: str) -> None:
        """A sealed request state refused (``reason``: a word of `state_reason`)."""
        self.sealed.add((("mcp_schema.reason", _word(reason)),))

    def count_bridged(
        self,
        direction: str,
        outcome: str,
        era: str,
        *,
        code: int | None = None,
        count: int = 1,
    ) -> None:
        """``count`` messages an era bridge whose clients are of ``era``
        carried (``outcome`` ``carried``) or refused (``refused``, with the
        JSON-RPC ``code``) toward ``direction`` (``received``: from the
        client, ``sent``: toward it)."""
        key: Key = (
            ("mcp_schema.direction", _word(direction)),
            ("mcp_schema.outcome", _word(outcome)),
            ("mcp_schema.era", _word(era)),
        )
        if code is not None:
            key += (("rpc.response.status_code", code_value(code)),)
        self.bridged.add(key, count)

    def count_share(self, table: str, granted: bool) -> None:
        """A share of ``table`` asked for."""
        outcome = "granted" if granted else "refused"
        self.shares.add((("mcp_schema.table", _word(table)), ("mcp_schema.outcome", outcome)))

    def count_broker(self, operation: str, outcome: str) -> None:
        """A broker round trip (``outcome``: ``ok``, ``timeout``, ``error``)."""
        key: Key = (
            ("mcp_schema.operation", _word(operation)),
            ("mcp_schema.outcome", _word(outcome)),
        )
        self.broker.add(key)


_Shape = tuple[str, dict[str, Any], dict[str, Any]]
"""A span's name, its first attributes and its duration's (`_shape`)."""

_MAX_SHAPES = 1024
"""Shapes a `Telemetry` keeps (each of closed-set facts: bounded all the same)."""


def _shape(
    method: str, version: str | None, era: str | None, transport: str, target: str | None
) -> _Shape:
    """What every operation of these recorded facts shares: made once, so a
    request pays a copy of a dict, not the building of it and of its
    duration's (`METRIC_ATTRIBUTES`) again."""
    attributes: dict[str, Any] = {"mcp.method.name": method, "network.transport": transport}
    if transport != "pipe":
        attributes["network.protocol.name"] = "http"
    if version is not None:
        attributes["mcp.protocol.version"] = version
    if era is not None:
        attributes["mcp_schema.era"] = era
    name = method
    if method == "tools/call":
        attributes["gen_ai.operation.name"] = "execute_tool"
        attributes["gen_ai.tool.name"] = target
        name = f"{method} {target}"
    elif target is not None:
        attributes["gen_ai.prompt.name"] = target
        name = f"{method} {target}"
    metric = {k: v for k, v in attributes.items() if k in METRIC_ATTRIBUTES}
    return name, attributes, metric


def _sdk_behind_globals() -> bool:
    from opentelemetry import metrics, trace

    proxy_tracer = isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    return not (proxy_tracer and _proxy_meter_provider(metrics.get_meter_provider()))


def _proxy_meter_provider(provider: object) -> bool:
    # The API has no public name for its proxy meter provider.
    return type(provider).__name__ == "_ProxyMeterProvider"


def _hashed(session: str) -> str:
    # A one-way digest names the session across spans without handing out
    # the id, which anyone holding it could use (ids are 128-bit random).
    return hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _json(value: object) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return text[:4096]
