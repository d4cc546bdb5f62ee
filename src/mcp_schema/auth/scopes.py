"""Which scopes an operation needs, and whether a token's grant covers them.

* `ScopeHierarchy`: which scope implies which. The specification requires a
  server to count a broader scope as granting the narrower ones it implies
  ([Step-Up Authorization Flow](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization#step-up-authorization-flow));
  it does not say how scopes are named, so the hierarchy is configured
  (``{"files": ["files:read", "files:write"]}``), never guessed from the
  names, and taken transitively.
* `RequiredScopes`: the scopes every request needs (``always``) and those
  each tool, resource (by URI) and prompt adds. A token that lacks some gets
  the 403 step-up challenge, which lists *all* the scopes the operation
  needs in one challenge (the specification's
  [Runtime Insufficient Scope Errors](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization#runtime-insufficient-scope-errors)).

``offline_access`` asks for a refresh token, no resource's requirement: it
is refused here, and never appears in a challenge or in ``scopes_supported``
([Refresh Tokens](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization#refresh-tokens)).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Literal

from mcp_schema._args import check, mapping, strings
from mcp_schema.auth.verifier import SCOPE_TOKEN

__all__ = [
    "MAX_CONFIGURED",
    "OFFLINE_ACCESS",
    "Kind",
    "RequiredScopes",
    "ScopeHierarchy",
    "needed",
    "scopes",
]

OFFLINE_ACCESS = "offline_access"
"""The scope that asks for a refresh token (OpenID Connect Core 11)."""

MAX_CONFIGURED = 4096
"""Most scopes (and items) a configuration names."""

Kind = Literal["tool", "resource", "prompt"]
"""What an operation reaches: a tool (by name), a resource (by URI) or a prompt (by name)."""


def scopes(value: object, what: str) -> frozenset[str]:
    """``value``, a collection of scope tokens (RFC 6749 section 3.3), none
    of them ``offline_access``; ``TypeError`` or ``ValueError`` otherwise."""
    items = strings(value, what)
    assert items is not None
    if len(items) > MAX_CONFIGURED:
        raise ValueError(f"{what}: more than {MAX_CONFIGURED} scopes")
    for item in items:
        if not SCOPE_TOKEN.fullmatch(item):
            raise ValueError(f"{what}: {item!r:.80} is not a scope token")
        if item == OFFLINE_ACCESS:
            raise ValueError(f"{what}: {OFFLINE_ACCESS} asks for a refresh token, not a resource")
    return frozenset(items)


def needed(value: Collection[str]) -> frozenset[str]:
    """The scopes a tool, resource or prompt declares (``scopes=``), checked as `scopes`."""
    if isinstance(value, str):
        raise TypeError("scopes is a collection of scopes, not one string")
    return scopes(value, "scopes") if value else frozenset()


class ScopeHierarchy:
    """Which scope implies which (``implies``: a broader scope to the
    narrower ones it grants), taken transitively; cycles are allowed (the
    scopes of one are then equivalent)."""

    __slots__ = ("_closure",)

    def __init__(self, implies: Mapping[str, Collection[str]] | None = None) -> None:
        given = mapping(implies, "implies", none=True) or {}
        if len(given) > MAX_CONFIGURED:
            raise ValueError(f"implies: more than {MAX_CONFIGURED} scopes")
        direct: dict[str, frozenset[str]] = {}
        for scope, narrower in given.items():
            scopes((scope,), "implies")  # a key is a scope token too
            direct[scope] = scopes(narrower, f"implies[{scope!r:.80}]")
        closure: dict[str, frozenset[str]] = {}
        for scope in direct:
            seen, todo = {scope}, [scope]
            while todo:
                for narrower in direct.get(todo.pop(), ()):
                    if narrower not in seen:
                        seen.add(narrower)
                        todo.append(narrower)
            closure[scope] = frozenset(seen)
        self._closure = closure

    def expand(self, granted: Iterable[str]) -> frozenset[str]:
        """Every scope ``granted`` grants: each, and each it implies."""
        out: set[str] = set()
        for scope in granted:
            out |= self._closure.get(scope, {scope})
        return frozenset(out)

    def missing(self, granted: Iterable[str], required: Collection[str]) -> frozenset[str]:
        """The scopes of ``required`` that ``granted`` does not grant."""
        if not required:
            return frozenset()
        return frozenset(required) - self.expand(granted)


class RequiredScopes:
    """The scopes operations need: ``always`` (every request, checked as a
    token is taken), plus what each tool, resource (by URI) or prompt adds;
    ``implies``: the `ScopeHierarchy`."""

    __slots__ = ("_items", "always", "hierarchy")

    def __init__(
        self,
        *,
        always: Collection[str] = (),
        tools: Mapping[str, Collection[str]] | None = None,
        resources: Mapping[str, Collection[str]] | None = None,
        prompts: Mapping[str, Collection[str]] | None = None,
        implies: Mapping[str, Collection[str]] | None = None,
    ) -> None:
        self.always = scopes(always, "always")
        self.hierarchy = ScopeHierarchy(implies)
        items: dict[tuple[Kind, str], frozenset[str]] = {}
        kinds: tuple[tuple[Kind, object], ...] = (
            ("tool", tools),
            ("resource", resources),
            ("prompt", prompts),
        )
        for kind, given in kinds:
            named = mapping(given, f"{kind}s", none=True) or {}
            if len(named) > MAX_CONFIGURED:
                raise ValueError(f"{kind}s: more than {MAX_CONFIGURED} items")
            for name, needed in named.items():
                check(name, str, f"a {kind}'s name")
                items[kind, name] = self.always | scopes(needed, f"{kind}s[{name!r:.80}]")
        self._items = items

    def required(self, kind: Kind | None = None, name: str | None = None) -> frozenset[str]:
        """The scopes an operation needs: on ``kind`` ``name`` (a tool's or
        prompt's name, a resource's URI), or any request (no ``kind``)."""
        if kind is None or name is None:
            return self.always
        return self._items.get((kind, name), self.always)

    def missing(
        self, granted: Iterable[str], kind: Kind | None = None, name: str | None = None
    ) -> frozenset[str]:
        """What ``granted`` lacks of `required` (empty: the operation is allowed)."""
        return self.hierarchy.missing(granted, self.required(kind, name))

    def supported(self) -> frozenset[str]:
        """Every scope named: what ``always`` and the items need."""
        return self.always.union(*self._items.values())
