"""Where the OAuth client keeps its tokens: the `TokenStore` protocol, keyed
by `TokenKey` (the canonical resource and the authorization server's
issuer, so that a token only ever goes to the resource it was granted for,
and a refresh token only to the server that issued it), and
`MemoryTokenStore`, the default. A store holds secrets: one that persists
them keeps them confidential (the specification's
[Token Theft](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/security-considerations#token-theft)).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from mcp_schema.oauth.grants import Tokens

__all__ = ["MemoryTokenStore", "TokenKey", "TokenStore"]


@dataclass(frozen=True)
class TokenKey:
    """Whose tokens: the resource they are for, the issuer that granted them."""

    resource: str
    issuer: str


class TokenStore(Protocol):
    """Tokens by `TokenKey`."""

    async def get(self, key: TokenKey) -> Tokens | None: ...

    async def put(self, key: TokenKey, tokens: Tokens) -> None: ...

    async def drop(self, key: TokenKey) -> None: ...


class MemoryTokenStore:
    """A `TokenStore` in this process's memory (gone when it ends)."""

    def __init__(self) -> None:
        self._tokens: dict[TokenKey, Tokens] = {}

    def __repr__(self) -> str:
        return f"MemoryTokenStore({len(self._tokens)} kept)"

    async def get(self, key: TokenKey) -> Tokens | None:
        return self._tokens.get(key)

    async def put(self, key: TokenKey, tokens: Tokens) -> None:
        self._tokens[key] = tokens

    async def drop(self, key: TokenKey) -> None:
        self._tokens.pop(key, None)
