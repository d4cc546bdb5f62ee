"""Peer text as it may appear in a message, an error or a report line:
escaped onto one line and cut (hand-written runtime module; `mcp_schema.errors`
re-exports it)."""

from __future__ import annotations

import json
import unicodedata

MAX_QUOTED = 200
"""Characters of peer-supplied text kept where a message or an error entry quotes it."""

MAX_MESSAGE = 1000
"""Characters kept of a whole ``message`` (several quoted values and the prose around them)."""

# Characters that end a line for str.splitlines() or a terminal, plus the ones
# UTF-8 cannot encode (lone surrogates): a peer must not be able to start a
# fake report line or make printing the message fail.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})


def _escape_char(char: str) -> str:
    if unicodedata.category(char) not in _UNSAFE_CATEGORIES:
        return char
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char, f"\\u{ord(char):04x}")


def clip(text: str, limit: int = MAX_QUOTED) -> str:
    """``text`` escaped onto one line and cut to at most ``limit`` characters."""
    if len(text) <= limit and text.isprintable():  # the common case: one C-level scan
        return text
    units = [_escape_char(char) for char in text[:limit]]
    if len(text) <= limit and sum(map(len, units)) <= limit:
        return "".join(units)
    kept: list[str] = []
    used = 0
    for unit in units:  # whole escapes only: a cut "\\" could swallow a closing quote
        if used + len(unit) > limit - 1:
            break
        kept.append(unit)
        used += len(unit)
    return "".join(kept) + "…"


def quote(value: object) -> str:
    """Peer-supplied ``value`` as it may appear inside a message or report line.

    Strings are quoted, other values written as JSON (``repr`` when they are not
    JSON); the text is cut to `MAX_QUOTED` characters and characters that could
    end a line (or that UTF-8 cannot carry) are escaped.
    """
    if isinstance(value, str):
        return '"' + clip(value, MAX_QUOTED) + '"'
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return clip(text, MAX_QUOTED)
