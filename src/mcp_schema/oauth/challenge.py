"""The ``WWW-Authenticate`` challenges a client reads (RFC 9110 section 11.6.1):
the Bearer one's ``resource_metadata`` (RFC 9728 section 5.1), ``scope`` and
``error`` (RFC 6750 section 3). Every header is the server's: it is read
within `MAX_CHALLENGE` characters, and what cannot be read is no parameter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["MAX_CHALLENGE", "Challenge", "read_challenge"]

MAX_CHALLENGE = 8192
"""Characters of ``WWW-Authenticate`` read (all the headers, joined)."""

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_SCHEME = re.compile(rf"[\s,]*({_TOKEN})")
_PARAM = re.compile(rf'[\s,]*({_TOKEN})\s*=\s*(?:"((?:[^"\\]|\\.)*)"|({_TOKEN}))')
_TOKEN68 = re.compile(r"\s*[A-Za-z0-9\-._~+/]+=*\s*(?=,|$)")
_ESCAPED = re.compile(r"\\(.)")
_SCOPE = re.compile(r"[!#-\[\]-~]+")


@dataclass(frozen=True)
class Challenge:
    """A Bearer challenge, as far as a client acts on it."""

    resource_metadata: str | None = None
    scopes: tuple[str, ...] | None = None
    """The ``scope`` named (None when there is none)."""
    error: str | None = None

    @property
    def insufficient_scope(self) -> bool:
        return self.error == "insufficient_scope"


def _challenges(header: str) -> list[tuple[str, dict[str, str]]]:
    found: list[tuple[str, dict[str, str]]] = []
    at = 0
    while at < len(header):
        scheme = _SCHEME.match(header, at)
        if scheme is None:
            break
        at = scheme.end()
        params: dict[str, str] = {}
        token68 = _TOKEN68.match(header, at)
        if token68 is not None and not _PARAM.match(header, at):
            at = token68.end()
        while (param := _PARAM.match(header, at)) is not None:
            name, quoted, bare = param.groups()
            value = _ESCAPED.sub(r"\1", quoted) if quoted is not None else bare
            params.setdefault(name.lower(), value)
            at = param.end()
        found.append((scheme.group(1).lower(), params))
        if at < len(header) and header[at] not in ", \t":
            break  # unreadable from here on
    return found


def read_challenge(headers: Iterable[str]) -> Challenge | None:
    """The Bearer challenge among the ``WWW-Authenticate`` header values
    ``headers``, or None when there is none."""
    header = ", ".join(headers)[:MAX_CHALLENGE]
    for scheme, params in _challenges(header):
        if scheme != "bearer":
            continue
        scope = params.get("scope")
        scopes = None
        if scope is not None:
            scopes = tuple(dict.fromkeys(s for s in scope.split(" ") if _SCOPE.fullmatch(s)))
        return Challenge(params.get("resource_metadata"), scopes, params.get("error"))
    return None
