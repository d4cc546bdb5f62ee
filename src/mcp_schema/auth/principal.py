"""`Principal`: who a verified access token speaks for, *the* principal of
everything a request touches (sessions, sealed ``requestState``, tasks,
listens, the handler's context).

It is the token's issuer and subject (``sub``) or, for a token without a
subject (a client acting on its own behalf, as some introspection answers
put it), its ``client_id``: `Principal.name` is that identity as one string,
the form the principal hooks of `mcp_schema.http.Endpoint` and the task
stores take. The same user reached through two clients is one principal.

A principal never holds the token it was read from.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = ["MAX_NAME", "MAX_SCOPES", "Principal"]

MAX_NAME = 255
"""Longest ``sub`` or ``client_id`` taken, in characters."""

MAX_SCOPES = 256
"""Most scopes one token may grant."""

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class Principal:
    """A verified access token's identity and grant.

    * ``issuer``: the authorization server that issued the token (its issuer
      identifier, as configured);
    * ``subject``: the token's ``sub``, None when it has none;
    * ``client_id``: the client the token was issued to, when it says;
    * ``scopes``: the scopes granted (as the token lists them; the resource
      server's hierarchy expands them where a check needs it);
    * ``expires_at``: when the token expires (seconds since the epoch), None
      when it does not say (an introspection answer without ``exp``);
    * ``claims``: the token's claims, or the introspection answer, read-only
      and left out of ``repr`` and comparisons.
    """

    issuer: str
    subject: str | None
    client_id: str | None
    scopes: frozenset[str]
    expires_at: float | None
    claims: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.subject is None and self.client_id is None:
            raise ValueError("a principal needs a subject or a client_id")

    @functools.cached_property
    def name(self) -> str:
        """The identity as one string: ``["issuer", "sub", subject]``, or
        ``["issuer", "client_id", client_id]`` without a subject, as compact
        JSON (the two kinds never collide)."""
        kind, value = (
            ("sub", self.subject) if self.subject is not None else ("client_id", self.client_id)
        )
        return json.dumps([self.issuer, kind, value], ensure_ascii=False, separators=(",", ":"))
