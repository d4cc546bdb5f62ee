"""Errors built from peer text: escaped, cut to size, capped in count, every answer bounded.

Each must end in a result or a typed `McpError` (a wrong argument type from the
calling program: ``TypeError``), in linear cost, with bounded error output.
"""

from __future__ import annotations

import json

from mcp_schema import errors
from mcp_schema.errors import HeaderMismatchError, McpError


def test_quote_escapes_line_breaks_and_cuts_long_text() -> None:
    quoted = errors.quote("a\nline 2: -32602 fake\u2028" + "x" * 1000)
    assert quoted.startswith('"a\\nline 2: -32602 fake\\u2028x')
    assert len(quoted) <= errors.MAX_QUOTED + 2  # the two quote marks
    assert quoted.splitlines() == [quoted] and quoted.endswith('…"')


def test_quote_never_cuts_an_escape_in_half() -> None:
    quoted = errors.quote("\n" * 500)
    assert quoted == '"' + "\\n" * ((errors.MAX_QUOTED - 1) // 2) + '…"'


def test_lone_surrogate_in_a_message_is_escaped() -> None:
    err = McpError("bad \ud800 value")
    assert err.message == "bad \\ud800 value"
    err.message.encode("utf-8")  # printable everywhere


def test_message_is_one_line_and_bounded() -> None:
    err = McpError("x\r\n" * 100_000)
    assert len(err.message) <= errors.MAX_MESSAGE and "\n" not in err.message


def test_error_list_is_capped_with_a_total() -> None:
    entries = [{"path": f"$.params[{i}]", "reason": "bad\n" + "y" * 500} for i in range(5000)]
    data = errors.error_list(entries)
    assert len(data["errors"]) == errors.MAX_ERRORS and data["total"] == 5000
    assert all(len(e["reason"]) <= errors.MAX_QUOTED for e in data["errors"])
    assert "\n" not in json.loads(json.dumps(data))["errors"][0]["reason"]
    assert errors.error_list(entries[:3]) == {
        "errors": [{"path": e["path"], "reason": errors.clip(e["reason"])} for e in entries[:3]]
    }


def test_error_response_never_exceeds_64_kb() -> None:
    huge = HeaderMismatchError("mismatch", {"received": "z" * 1_000_000})
    response = json.dumps(huge.to_response(1)).encode()
    assert len(response) <= errors.MAX_RESPONSE_BYTES
    assert huge.to_response(1)["error"]["data"] == {"truncated": True}
    small = HeaderMismatchError("mismatch", {"received": "z"})
    assert small.to_response(1)["error"]["data"] == {"received": "z"}
