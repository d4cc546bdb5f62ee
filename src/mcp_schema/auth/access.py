"""`Access`: what each principal may reach of a server's tools, resources
and prompts, by the scopes each needs and by a policy (hand-written runtime
module; imports without the ``auth`` extra).

Two rules, in this order, for a call (``tools/call``, ``prompts/get``,
``resources/read``, ``resources/subscribe``, and ``completion/complete`` of
the prompt or resource template its ``ref`` names):

1. **The policy** (`Policy`, sync or async), given an `Attempt`: the
   principal, the method, the item (its kind and name, a resource's URI)
   and the arguments. It answers True to allow; anything else, an
   exception, or no answer within ``policy_seconds`` denies (it fails
   closed, and the failure is logged). A denied item is *hidden*: left out
   of every listing, and a call of it answered as a call of an unknown one
   (`unknown`: -32602, the error the server layer gives), with no challenge,
   so that nothing tells a hidden item from one that does not exist.
2. **The scopes**: what the item needs (``scopes``: a function of the kind
   and name, such as `RequiredScopes.required` or the server layer's
   declared ones; plus ``always``), expanded by the `ScopeHierarchy`
   against the principal's grant. A call lacking some is refused with the
   403 step-up challenge naming *all* the scopes the call needs
   (`mcp_schema.auth.challenge.insufficient_scope`; ``offline_access``
   never in it). Without a principal nothing is granted: a call of an item
   that needs scopes is refused so too. An item whose scopes are missing
   stays listed (the client learns of it and steps up when it calls),
   unless ``list_missing`` is False.

The same rule filters the lists (`Access.visible`, each item asked with
the list's method and no arguments; `Access.page` for a page of a list a
gateway relays, each page filtered alike) and the resource URIs a
``subscriptions/listen`` may hear updates of (those the principal may read,
both rules). A list that depends on the principal (`Access.filters`) is
marked ``cacheScope: "private"``, on every page (the specification's
[Caching](https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching)).

It is what an `mcp_schema.http.Endpoint` consults (``access=``, the
`mcp_schema.http.gate.Gate` it implements) before a request is dispatched,
so a missing scope reaches the HTTP status; a gateway consults the same
object for the calls it relays and the pages it passes on. See
``docs/guide/authorization.md``.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Collection, Generator, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from mcp_schema._args import check
from mcp_schema._codec.route import request_id
from mcp_schema.auth.challenge import insufficient_scope
from mcp_schema.auth.principal import Principal
from mcp_schema.auth.scopes import Kind, ScopeHierarchy, scopes
from mcp_schema.errors import InvalidParamsError, McpError
from mcp_schema.http.gate import Verdict, current_principal
from mcp_schema.http.rules import refusal
from mcp_schema.http.stream import Response

if TYPE_CHECKING:
    from mcp_schema.auth.server import ResourceServer

__all__ = [
    "CALLS",
    "LISTS",
    "POLICY_SECONDS",
    "Access",
    "Attempt",
    "Policy",
    "current_principal",
    "unknown",
]

_LOG = logging.getLogger("mcp_schema.auth")

POLICY_SECONDS = 2.0
"""Seconds an async policy has to answer, by default (then it denies)."""

CALLS: Mapping[str, Kind] = MappingProxyType(
    {
        "tools/call": "tool",
        "prompts/get": "prompt",
        "resources/read": "resource",
        "resources/subscribe": "resource",
    }
)
"""The requests that reach one item, and the kind of item each reaches."""

LISTS: Mapping[str, tuple[Kind, str, str]] = MappingProxyType(
    {
        "tools/list": ("tool", "tools", "name"),
        "prompts/list": ("prompt", "prompts", "name"),
        "resources/list": ("resource", "resources", "uri"),
        "resources/templates/list": ("resource", "resourceTemplates", "uriTemplate"),
    }
)
"""Each list: the kind of its items, the member holding them, and the member naming each."""

_LISTEN = "subscriptions/listen"
_COMPLETE = "completion/complete"
_NO_ARGUMENTS: Mapping[str, Any] = MappingProxyType({})
_EMPTY: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Attempt:
    """What a policy decides on: ``principal`` (None where none was
    verified) reaching the ``kind`` item ``name`` (a tool's or prompt's
    name, a resource's URI or URI template) by ``method`` (a call, or the
    list it is listed in, then with no ``arguments``). ``arguments`` are the
    call's as the client sent them (not checked against any schema yet),
    read-only."""

    principal: Principal | None
    method: str
    kind: Kind
    name: str
    arguments: Mapping[str, Any] = field(default_factory=lambda: _NO_ARGUMENTS)


Policy = Callable[[Attempt], bool | Awaitable[bool]]
"""Whether an attempt is allowed: True, or an awaitable of True (see the module)."""


def unknown(kind: Kind, name: object) -> InvalidParamsError:
    """The error of a call of an item that is not there (or is hidden):
    the server layer's, word for word."""
    if kind == "resource":
        return InvalidParamsError("Resource not found", {"uri": name})
    return InvalidParamsError(f"Unknown {kind}: {name}", {"name": name})


_Called = tuple[str, Kind, str, object]
"""What a call names: its method, the kind and name of the item, and its
``arguments`` member as sent (`_attempt` makes them a policy's)."""


def _target(message: Mapping[str, Any]) -> _Called | None:
    """The method, kind, name and arguments of a call ``message`` names;
    None for any other message (and a malformed call: its session refuses it)."""
    method = message.get("method")
    params = message.get("params")
    # A parsed message's params are a dict; the ABC is asked only of anything else.
    if not isinstance(method, str) or (
        type(params) is not dict and not isinstance(params, Mapping)
    ):
        return None
    if method == _COMPLETE:
        return _completed(params)
    kind = CALLS.get(method)
    if kind is None:
        return None
    name = params.get("uri" if kind == "resource" else "name")
    if not isinstance(name, str):
        return None
    return method, kind, name, params.get("arguments")


def _attempt(principal: Principal | None, target: _Called) -> Attempt:
    """The policy's view of ``target``: its arguments read-only (built only
    when a policy is asked)."""
    method, kind, name, arguments = target
    given = MappingProxyType(arguments) if isinstance(arguments, dict) else _NO_ARGUMENTS
    return Attempt(principal, method, kind, name, given)


def _completed(params: Mapping[str, Any]) -> _Called | None:
    """A ``completion/complete`` reaches the prompt or resource template its
    ``ref`` names: completing a hidden one would tell it is there."""
    ref = params.get("ref")
    if not isinstance(ref, Mapping):
        return None
    kind: Kind = "prompt" if ref.get("type") == "ref/prompt" else "resource"
    name = ref.get("name" if kind == "prompt" else "uri")
    if ref.get("type") not in ("ref/prompt", "ref/resource") or not isinstance(name, str):
        return None
    return _COMPLETE, kind, name, None


class Access:
    """What each principal may reach (see the module).

    * ``scopes``: the scopes an item needs, by its kind and name (default:
      none), plus ``always`` (those every request needs);
    * ``implies``: the `ScopeHierarchy` (or its mapping);
    * ``policy``, ``policy_seconds``: the policy, and the time it has to answer;
    * ``list_missing``: list an item whose scopes the principal lacks (True)
      or hide it as a denied one (False);
    * ``resource_metadata``: the protected resource metadata URL the
      challenges name (`protected_by` sets it; None: a 403 without
      ``WWW-Authenticate``, for a server without a resource server).
    """

    def __init__(
        self,
        *,
        scopes: Callable[[Kind, str], Collection[str]] | None = None,
        always: Collection[str] = (),
        implies: ScopeHierarchy | Mapping[str, Collection[str]] | None = None,
        policy: Policy | None = None,
        policy_seconds: float = POLICY_SECONDS,
        list_missing: bool = True,
        resource_metadata: str | None = None,
    ) -> None:
        if not all(f is None or callable(f) for f in (scopes, policy)):
            raise TypeError("scopes and policy are functions (or None)")
        check(policy_seconds, (int, float), "policy_seconds")
        if not policy_seconds > 0:
            raise ValueError(f"policy_seconds must be positive, not {policy_seconds!r}")
        check(list_missing, bool, "list_missing")
        check(resource_metadata, str, "resource_metadata", none=True)
        self._scopes = scopes
        self._more: Callable[[Kind, str], Collection[str]] | None = None
        self.always = _scopes_of(always, "always")
        self.hierarchy = implies if isinstance(implies, ScopeHierarchy) else ScopeHierarchy(implies)
        self.policy = policy
        self.policy_seconds = float(policy_seconds)
        self.list_missing = list_missing
        self.resource_metadata = resource_metadata

    def protected_by(self, resource_server: ResourceServer) -> Access:
        """Take the challenges' URL, the scopes every request needs, the
        hierarchy and the per-item scopes of ``resource_server`` (its
        `RequiredScopes`, beside the item's own); this object."""
        required = resource_server.required
        self.resource_metadata = resource_server.metadata.url
        self.always = self.always | required.always
        self.hierarchy = required.hierarchy
        self._more = required.required
        return self

    # -- the rules --------------------------------------------------------------------------

    @property
    def filters(self) -> bool:
        """Whether a list may differ from one principal to another (then
        every page of it is ``cacheScope: "private"``)."""
        return self.policy is not None or not self.list_missing

    def required(self, kind: Kind, name: str) -> frozenset[str]:
        """Every scope a call of the ``kind`` item ``name`` needs."""
        needed = self.always
        for source in (self._scopes, self._more):
            if source is not None:
                more = source(kind, name)
                if more:  # most items need no scope of their own: no union made
                    needed = needed | frozenset(more)
        return needed

    def missing(self, principal: Principal | None, kind: Kind, name: str) -> frozenset[str]:
        """The scopes ``kind`` ``name`` needs that ``principal`` is not granted."""
        needed = self.required(kind, name)
        if not needed:
            return _EMPTY
        granted = () if principal is None else principal.scopes
        return self.hierarchy.missing(granted, needed)

    def allows(self, attempt: Attempt) -> bool | Awaitable[bool]:
        """The policy's answer on ``attempt``: a bool, or (an async policy)
        an awaitable of one, bounded by ``policy_seconds``; fails closed."""
        if self.policy is None:
            return True
        try:
            answer = self.policy(attempt)
        except Exception:
            _LOG.exception("the policy failed on %s %s: denied", attempt.kind, attempt.name[:200])
            return False
        if inspect.isawaitable(answer):
            return _Pending(answer, attempt, self.policy_seconds)
        return answer is True

    # -- calls (the endpoint's gate) --------------------------------------------------------

    async def admit(self, principal: Principal | None, message: dict[str, Any]) -> Verdict:
        """The verdict on the parsed ``message`` (`mcp_schema.http.gate`): a
        call of a denied item is its `unknown` error, one lacking scopes the
        step-up challenge; a listen's resource URIs are narrowed to those
        ``principal`` may read."""
        if message.get("method") == _LISTEN:
            await self._narrow(principal, message)
            return None
        target = _target(message)
        if target is None:
            return None
        if self.policy is None:  # nothing to ask: no attempt built (the per-request path)
            return self._verdict(principal, target, True, message)
        allowed = self.allows(_attempt(principal, target))
        if not isinstance(allowed, bool):
            allowed = await allowed
        return self._verdict(principal, target, allowed, message)

    def admit_now(self, principal: Principal | None, message: dict[str, Any]) -> Verdict:
        """`admit`, nothing awaited: an async policy's answer denies (it
        cannot be awaited here), and so does the listen it would narrow."""
        if message.get("method") == _LISTEN:
            self._narrow_now(principal, message)
            return None
        target = _target(message)
        if target is None:
            return None
        allowed = True if self.policy is None else _now(self.allows(_attempt(principal, target)))
        return self._verdict(principal, target, allowed, message)

    async def policed(
        self, principal: Principal | None, message: Mapping[str, Any]
    ) -> McpError | None:
        """The policy's verdict alone on a call ``message`` (a denial: the
        item's `unknown` error), for a handler no gate admitted the request
        to (on stdio no token is checked, so no scope either)."""
        target = _target(message)
        if target is None or self.policy is None:
            return None
        allowed = self.allows(_attempt(principal, target))
        if not isinstance(allowed, bool):
            allowed = await allowed
        return None if allowed else unknown(target[1], target[2])

    def _verdict(
        self, principal: Principal | None, target: _Called, allowed: bool, message: Any
    ) -> Verdict:
        _, kind, name, _ = target
        if not allowed:
            return unknown(kind, name)
        if not self.missing(principal, kind, name):
            return None
        return self.step_up(self.required(kind, name), request_id(message.get("id")))

    def step_up(self, needed: Iterable[str], request_id: str | int | None = None) -> Response:
        """The 403 refusal of a call lacking some of ``needed`` (all it
        needs): with the step-up challenge where the metadata URL is known."""
        if self.resource_metadata is not None:
            return insufficient_scope(self.resource_metadata, needed, request_id=request_id)
        shown = " ".join(sorted(set(needed)))
        return refusal(403, f"Forbidden: the operation needs the scopes: {shown}", request_id)

    # -- lists and listens ------------------------------------------------------------------

    async def visible(
        self,
        principal: Principal | None,
        method: str,
        kind: Kind,
        items: Iterable[Mapping[str, Any]],
        key: str = "name",
        *,
        scoped: bool = True,
    ) -> list[Mapping[str, Any]]:
        """The ``items`` of a list (definitions, each named by its ``key``
        member) that ``principal`` may see, in order (see the module);
        ``scoped`` False: by the policy alone (no token was checked)."""
        listed = list(items)
        if not self.filters:
            return listed
        answers = [self._sees(principal, method, kind, item.get(key), scoped) for item in listed]
        waiting = [a for a in answers if not isinstance(a, bool)]
        if waiting:
            done = iter(await asyncio.gather(*waiting))
            answers = [a if isinstance(a, bool) else next(done) for a in answers]
        return [item for item, shown in zip(listed, answers, strict=True) if shown]

    def _sees(
        self, principal: Principal | None, method: str, kind: Kind, name: object, scoped: bool
    ) -> bool | Awaitable[bool]:
        if not isinstance(name, str):
            return False
        if scoped and not self.list_missing and self.missing(principal, kind, name):
            return False
        return self.allows(Attempt(principal, method, kind, name))

    async def page(
        self, principal: Principal | None, method: str, result: Mapping[str, Any]
    ) -> dict[str, Any]:
        """One page of the list ``method`` answered (``result``, as a gateway
        relays it): its items filtered, ``cacheScope: "private"`` when the
        list depends on the principal; the cursor and the rest unchanged.
        Each page is filtered alike, whatever its cursor."""
        kind, member, key = LISTS[method]
        out = dict(result)
        items = result.get(member)
        if isinstance(items, list):
            shown = [i for i in items if isinstance(i, Mapping)]
            out[member] = await self.visible(principal, method, kind, shown, key)
        if self.filters:
            out["cacheScope"] = "private"
        return out

    async def _narrow(self, principal: Principal | None, message: dict[str, Any]) -> None:
        uris = _listened_uris(message)
        if uris is None:
            return
        if not uris:
            return _keep(message, [])
        answers = [self._reads(principal, uri) for uri in uris]
        waiting = [a for a in answers if not isinstance(a, bool)]
        if waiting:
            done = iter(await asyncio.gather(*waiting))
            answers = [a if isinstance(a, bool) else next(done) for a in answers]
        _keep(message, [u for u, ok in zip(uris, answers, strict=True) if ok])

    def _narrow_now(self, principal: Principal | None, message: dict[str, Any]) -> None:
        uris = _listened_uris(message)
        if uris is not None:
            _keep(message, [u for u in uris if _now(self._reads(principal, u))])

    def _reads(self, principal: Principal | None, uri: str) -> bool | Awaitable[bool]:
        if self.missing(principal, "resource", uri):
            return False
        return self.allows(Attempt(principal, "resources/read", "resource", uri))


class _Pending:
    """An async policy's answer to come: awaited within ``seconds`` (True
    allows; anything else, an exception or no answer in time denies), or
    closed unawaited."""

    __slots__ = ("answer", "attempt", "seconds")

    def __init__(self, answer: Awaitable[Any], attempt: Attempt, seconds: float) -> None:
        self.answer, self.attempt, self.seconds = answer, attempt, seconds

    def __await__(self) -> Generator[Any, None, bool]:
        return self._awaited().__await__()

    async def _awaited(self) -> bool:
        what = f"{self.attempt.kind} {self.attempt.name[:200]}"
        try:
            return await asyncio.wait_for(self.answer, self.seconds) is True
        except asyncio.TimeoutError:
            _LOG.warning("the policy gave no answer on %s in time: denied", what)
        except Exception:
            _LOG.exception("the policy failed on %s: denied", what)
        return False

    def close(self) -> None:
        """Never to be awaited: closed, so that nothing warns it was not."""
        if inspect.iscoroutine(self.answer):
            self.answer.close()


def _now(answer: bool | Awaitable[bool]) -> bool:
    """A policy's answer where nothing can be awaited: an awaitable denies."""
    if isinstance(answer, bool):
        return answer
    if isinstance(answer, _Pending):
        answer.close()
    _LOG.warning("an async policy cannot be awaited here (Endpoint.handle): denied")
    return False


_MAX_LISTENED = 256  # URIs of one filter checked: a filter naming more hears of none


def _listened_uris(message: dict[str, Any]) -> list[str] | None:
    """The resource URIs a listen asks updates of, when there are some to check."""
    params = message.get("params")
    asked = params.get("notifications") if isinstance(params, dict) else None
    uris = asked.get("resourceSubscriptions") if isinstance(asked, dict) else None
    if not isinstance(uris, list) or not uris:
        return None
    if not all(isinstance(u, str) for u in uris):
        return None  # the listen refuses it (-32602)
    if len(uris) > _MAX_LISTENED:
        return []  # no policy asked that often for one request: none kept (fails closed)
    return uris


def _keep(message: dict[str, Any], uris: list[str]) -> None:
    """The listen ``message`` asks for ``uris`` alone (its filter, narrowed in place)."""
    message["params"]["notifications"]["resourceSubscriptions"] = uris


def _scopes_of(value: Collection[str], what: str) -> frozenset[str]:
    return scopes(value, what) if value else _EMPTY
