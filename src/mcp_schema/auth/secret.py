"""`Secret`: a credential this server holds (a client secret), read from
the environment or a file and kept out of every ``repr``, ``str`` and
error: only `Secret.reveal` gives it, where it is sent."""

from __future__ import annotations

import os
from pathlib import Path

from mcp_schema._args import check

__all__ = ["MAX_SECRET", "Secret"]

MAX_SECRET = 4096
"""Longest secret, in characters."""


class Secret:
    """A credential; ``repr`` and ``str`` never show it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        check(value, str, "a secret")
        if not 0 < len(value) <= MAX_SECRET or not value.isprintable():
            raise ValueError(f"a secret must be 1 to {MAX_SECRET} printable characters")
        self._value = value

    @classmethod
    def from_env(cls, name: str) -> Secret:
        """The secret in environment variable ``name``; ``ValueError`` when unset."""
        check(name, str, "name")
        value = os.environ.get(name)
        if value is None:
            raise ValueError(f"the environment variable {name} is not set")
        return cls(value)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Secret:
        """The secret in the file at ``path`` (UTF-8, one line: a final line
        break is not part of it)."""
        with Path(path).open(encoding="utf-8") as file:
            text = file.read(MAX_SECRET + 3)
        return cls(text.removesuffix("\n").removesuffix("\r"))

    def reveal(self) -> str:
        """The secret itself, to send where it belongs."""
        return self._value

    def __repr__(self) -> str:
        return "Secret(...)"

    __str__ = __repr__

    def __reduce__(self) -> str | tuple[object, ...]:
        raise TypeError("a Secret is not pickled")
