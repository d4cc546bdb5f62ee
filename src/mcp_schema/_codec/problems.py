"""Pydantic validation errors as JSON-RPC errors: each location becomes the
JSON path of the document it points into."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from mcp_schema.errors import InvalidParamsError, InvalidRequestError, McpError


def _member(step: str) -> str:
    return f".{step}" if step.isidentifier() else f"[{json.dumps(step)}]"


def json_path(loc: tuple[int | str, ...], document: Any, missing: bool = False) -> str:
    """``$.params.content[0].text`` from a pydantic location.

    Union tags and validator names also appear in locations; only the steps
    that exist in the document are part of its path, and for a missing
    member the member itself (the last step).
    """
    path = "$"
    node = document
    if missing and loc and isinstance(loc[-1], str):
        return json_path(loc[:-1], document) + _member(loc[-1])
    for step in loc:
        if isinstance(node, dict) and isinstance(step, str) and step in node:
            path += _member(step)
            node = node[step]
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            path += f"[{step}]"
            node = node[step]
    return path


def invalid(exc: ValidationError, raw: bytes | str, what: str) -> McpError:
    """The error to answer ``raw`` with: invalid params (or result) when every
    problem lies in the payload, else an invalid request."""
    try:
        document = json.loads(raw)
    except ValueError:
        document = None
    errors = [
        {"path": json_path(tuple(e["loc"]), document, e["type"] == "missing"), "reason": e["msg"]}
        for e in exc.errors(include_url=False)
    ]
    # Both arms of a union may report the same place for the same reason.
    errors = [dict(pair) for pair in dict.fromkeys(tuple(e.items()) for e in errors)]
    in_payload = all(e["path"].startswith(("$.params", "$.result", "$.error")) for e in errors)
    summary = "; ".join(f"{e['path']}: {e['reason']}" for e in errors[:3])
    if not in_payload:
        return InvalidRequestError(f"Invalid Request: {summary}", {"errors": errors})
    return InvalidParamsError(f"Invalid {what}: {summary}", {"errors": errors})
