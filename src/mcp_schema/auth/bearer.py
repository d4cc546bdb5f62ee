"""The access token of a request: RFC 6750 section 2.1's ``Authorization:
Bearer <token>``, the only way the specification lets a client send one
([Token Requirements](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization#token-requirements)):
never the query string, never the body.

Read in time linear in the header's length and bounded before anything
else: a token longer than `MAX_TOKEN` is refused unread.
"""

from __future__ import annotations

import re

from mcp_schema.auth.verifier import InvalidToken

__all__ = ["MAX_TOKEN", "bearer_credentials", "bearer_token", "checked_token"]

MAX_TOKEN = 16384
"""Longest access token taken, in characters (a JWT with many claims is a few kB)."""

_SCHEME = "bearer "
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")  # RFC 9110 11.2


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization`` value; None when it carries no
    Bearer credentials (none at all, or another scheme's); `InvalidToken`
    when it is too long or not a token68 (two ``Authorization`` fields,
    joined, are not)."""
    credentials = bearer_credentials(authorization)
    return None if credentials is None else checked_token(credentials)


def bearer_credentials(authorization: str | None) -> str | None:
    """What follows ``Bearer`` in an ``Authorization`` value, bounded
    (`InvalidToken` past `MAX_TOKEN`) but not yet read as a token68
    (`checked_token`): a resource server looks a token it verified before up
    first, and such a token passed that check already."""
    if authorization is None or authorization[: len(_SCHEME)].lower() != _SCHEME:
        return None
    token = authorization[len(_SCHEME) :].strip(" \t")
    if len(token) > MAX_TOKEN:
        raise InvalidToken(f"the token is longer than {MAX_TOKEN:,} characters")
    return token


def checked_token(credentials: str) -> str:
    """``credentials`` (`bearer_credentials`) when they are one token68;
    `InvalidToken` otherwise."""
    if not _TOKEN68.fullmatch(credentials):
        raise InvalidToken("the Authorization header is not Bearer and one token")
    return credentials
