"""`CredentialSource`: how this package, acting as a client (the gateway's
upstream links and bridges, `mcp_schema.http.client`), gets the
``Authorization`` it sends. A front door never passes on the token its own
client presented: the specification forbids token passthrough
(https://modelcontextprotocol.io/specification/2026-07-28/basic/security_best_practices).

It lives outside `mcp_schema.auth` so that it needs no extra; the sources
that reach an authorization server (`mcp_schema.oauth.OAuth`, client
credentials among its grants: ``gateway --upstream-client-id``) live beside
the OAuth client, and answer the server's challenges (`ChallengedSource`). `StaticToken` is the
operator's own bearer token, from the environment or a file (``gateway
--upstream-token-env NAME``, ``--upstream-token-file PATH``).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

__all__ = ["MAX_TOKEN", "ChallengedSource", "CredentialSource", "StaticToken"]


@runtime_checkable
class CredentialSource(Protocol):
    """Where the credentials of an outgoing request come from."""

    async def authorization(self) -> str | None:
        """The ``Authorization`` header value to send (``"Bearer …"``), or
        None to send none."""
        ...

    def rejected(self, authorization: str) -> None:
        """The upstream refused ``authorization`` (401): forget it, so the
        next `authorization` gets a fresh one where the source can."""
        ...


@runtime_checkable
class ChallengedSource(CredentialSource, Protocol):
    """A `CredentialSource` that answers the server's challenges itself
    (`mcp_schema.oauth.OAuth` is one)."""

    async def challenged(
        self, status: int, www_authenticate: Sequence[str], authorization: str | None
    ) -> bool:
        """Whether to send the request again after this 401 or 403."""
        ...

    def settled(self) -> None:
        """A request carrying a credential was answered."""
        ...


_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")  # RFC 6750's b64token: nothing that splits a header
MAX_TOKEN = 16384
"""The longest static token taken, in characters."""


class StaticToken:
    """A bearer token of the operator's: from an environment variable
    (`from_env`) or a file (`from_file`, read again after the upstream
    rejected it, so that a rotated file is picked up). Its value is never
    in its repr, its errors or a log: only where it came from."""

    __slots__ = ("_path", "_value", "source")

    def __init__(self, token: str, *, source: str = "a token given") -> None:
        self.source = source
        """Where the token came from (``env:NAME``, ``file:PATH``), for messages."""
        self._path: Path | None = None
        self._value = _bearer(token, source)

    @classmethod
    def from_env(cls, name: str, environ: Mapping[str, str] | None = None) -> StaticToken:
        """The token in the environment variable ``name`` (``ValueError`` when unset or bad)."""
        value = (os.environ if environ is None else environ).get(name)
        if value is None:
            raise ValueError(f"the environment variable {name} is not set")
        return cls(value, source=f"env:{name}")

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> StaticToken:
        """The token in the file at ``path`` (surrounding whitespace dropped)."""
        where = Path(path)
        found = cls(_read(where), source=f"file:{where}")
        found._path = where
        return found

    async def authorization(self) -> str | None:
        return self._value

    def rejected(self, authorization: str) -> None:
        """A file's token is read again (it may have been rotated); an
        environment variable's cannot change."""
        if self._path is not None and authorization == self._value:
            with contextlib.suppress(ValueError):
                self._value = _bearer(_read(self._path), self.source)

    def __repr__(self) -> str:
        return f"StaticToken(source={self.source!r})"


def _read(path: Path) -> str:
    try:
        with path.open("rb") as file:
            data = file.read(MAX_TOKEN + 64)
    except OSError as exc:
        raise ValueError(f"cannot read the token file {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("ascii")
    except UnicodeDecodeError:
        raise ValueError(f"the token file {path} holds no token (not ASCII)") from None


def _bearer(token: str, source: str) -> str:
    if not isinstance(token, str):
        raise TypeError(f"token must be a string, not {type(token).__name__}")
    token = token.strip()
    if len(token) > MAX_TOKEN or not _TOKEN.fullmatch(token):
        raise ValueError(
            f"{source} holds no bearer token (RFC 6750 characters, at most {MAX_TOKEN})"
        )
    return f"Bearer {token}"
