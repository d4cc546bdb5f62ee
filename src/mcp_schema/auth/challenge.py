"""The ``WWW-Authenticate: Bearer`` challenges of a resource server (RFC 6750
section 3, with RFC 9728's ``resource_metadata``), and the refusals that
carry them, each with a JSON-RPC error body naming the request's id where
it is known:

* no token (or no Bearer credentials): 401, ``resource_metadata`` and the
  ``scope`` needed where it is known, and no error code (RFC 6750 3.1);
* a token refused: 401 with ``error="invalid_token"`` (expired, wrong
  audience, bad signature...: the specification's
  [Token Handling](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization#token-handling));
* a token without the scopes needed: 403 with ``error="insufficient_scope"``,
  every scope the operation needs in one ``scope``
  ([Scope Challenge Handling](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization#scope-challenge-handling)).

Each parameter is a quoted-string whatever it is given: ``"`` and ``\\``
escaped, and any character a header may not carry (CR, LF, any control,
anything beyond ASCII) replaced by ``?``, so no input can end the header or
add one. ``offline_access`` never appears in ``scope``.

A browser reads ``WWW-Authenticate`` only when the response's
``Access-Control-Expose-Headers`` names it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mcp_schema.auth.scopes import OFFLINE_ACCESS
from mcp_schema.auth.verifier import SCOPE_TOKEN
from mcp_schema.http.rules import refusal
from mcp_schema.http.stream import Response

__all__ = ["MAX_DESCRIPTION", "challenge", "insufficient_scope", "quoted", "unauthorized"]

MAX_DESCRIPTION = 200
"""Characters of an ``error_description`` kept."""

# RFC 9110 5.6.4: qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text;
# obs-text (bytes beyond ASCII) is left out: its meaning depends on a charset.
_UNQUOTED = re.compile(r'[^\t !#-\[\]-~"\\]')
_PAIR = re.compile(r'(["\\])')


def quoted(value: str) -> str:
    """``value`` as an RFC 9110 quoted-string: ``"`` and ``\\`` escaped,
    every other character a header cannot carry replaced by ``?``."""
    return '"' + _PAIR.sub(r"\\\1", _UNQUOTED.sub("?", value)) + '"'


def _scope(scopes: Iterable[str]) -> str:
    return " ".join(
        sorted(s for s in set(scopes) if s != OFFLINE_ACCESS and SCOPE_TOKEN.fullmatch(s))
    )


def challenge(
    resource_metadata: str,
    *,
    error: str | None = None,
    scopes: Iterable[str] = (),
    description: str | None = None,
) -> str:
    """A ``WWW-Authenticate`` value: ``Bearer`` with ``error`` (and its
    ``error_description``), ``scope`` (the scope tokens of ``scopes`` but
    ``offline_access``, sorted; left out when none) and ``resource_metadata``."""
    params: list[tuple[str, str]] = []
    if error is not None:
        params.append(("error", error))
        if description:
            params.append(("error_description", description[:MAX_DESCRIPTION]))
    scope = _scope(scopes)
    if scope:
        params.append(("scope", scope))
    params.append(("resource_metadata", resource_metadata))
    return "Bearer " + ", ".join(f"{name}={quoted(value)}" for name, value in params)


def unauthorized(
    resource_metadata: str,
    *,
    scopes: Iterable[str] = (),
    description: str | None = None,
    request_id: str | int | None = None,
) -> Response:
    """401: without ``description``, the challenge to a request with no token;
    with it, to a token refused (``invalid_token``, saying why)."""
    error = None if description is None else "invalid_token"
    header = challenge(resource_metadata, error=error, scopes=scopes, description=description)
    why = "no access token" if description is None else description
    return refusal(401, f"Unauthorized: {why}", request_id, [("www-authenticate", header)])


def insufficient_scope(
    resource_metadata: str, scopes: Iterable[str], *, request_id: str | int | None = None
) -> Response:
    """403 with the step-up challenge: ``scopes``, all that the operation needs."""
    needed = _scope(scopes)
    description = f"the operation needs the scopes: {needed}"
    header = challenge(
        resource_metadata, error="insufficient_scope", scopes=scopes, description=description
    )
    return refusal(403, f"Forbidden: {description}", request_id, [("www-authenticate", header)])
