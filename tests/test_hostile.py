"""Regression corpus of hostile inputs (issue 10): each finding, one or more inputs of our own.

Every public function that reads peer data must end in a result or a typed `McpError`
(a wrong argument type from the calling program: ``TypeError``), in linear cost, with
bounded error output and nothing silently lost.
"""

from __future__ import annotations

import errno
import io
import json
import os
import subprocess
import sys
from collections.abc import Sized
from pathlib import Path
from typing import Any

import pytest

from mcp_schema import codec, context, errors, http_headers
from mcp_schema.cli import main as cli_main
from mcp_schema.errors import HeaderMismatchError, InvalidParamsError, McpError
from mcp_schema.versions import PROTOCOL_VERSION_KEY

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
}


def call(meta: dict[str, Any] | None = None, **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"_meta": META if meta is None else meta, "name": "t", **params},
    }


def raw(message: Any) -> bytes:
    return json.dumps(message).encode()


# -- errors: escaped, cut, capped ----------------------------------------------------------


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


# -- context helpers ---------------------------------------------------------------------


def handshake_request(meta: dict[str, Any]) -> Any:
    return codec.decode(raw(call(meta)), version="2025-11-25")


@pytest.mark.parametrize(
    ("meta", "path"),
    [
        (
            {**META, "io.modelcontextprotocol/clientCapabilities": 5},
            '$.params._meta["io.modelcontextprotocol/clientCapabilities"]',
        ),
        (
            {**META, "io.modelcontextprotocol/clientCapabilities": [1]},
            '$.params._meta["io.modelcontextprotocol/clientCapabilities"]',
        ),
        (
            {**META, "io.modelcontextprotocol/clientCapabilities": {"sampling": 5}},
            '$.params._meta["io.modelcontextprotocol/clientCapabilities"]["sampling"]',
        ),
        (
            {**META, "io.modelcontextprotocol/clientInfo": 5},
            '$.params._meta["io.modelcontextprotocol/clientInfo"]',
        ),
        (
            {**META, "io.modelcontextprotocol/protocolVersion": 5},
            '$.params._meta["io.modelcontextprotocol/protocolVersion"]',
        ),
        (
            {**META, "io.modelcontextprotocol/logLevel": ["debug"]},
            '$.params._meta["io.modelcontextprotocol/logLevel"]',
        ),
    ],
)
def test_request_context_refuses_bad_meta_with_invalid_params(
    meta: dict[str, Any], path: str
) -> None:
    # A handshake-era request: decode does not read these keys, so they reach the helper.
    request = handshake_request(meta)
    with pytest.raises(InvalidParamsError) as info:
        context.RequestContext.from_request(request)
    assert info.value.errors[0]["path"] == path


def test_require_client_capabilities_refuses_non_object_capabilities() -> None:
    request = handshake_request({"io.modelcontextprotocol/clientCapabilities": 5})
    with pytest.raises(InvalidParamsError):
        context.require_client_capabilities(request, {"sampling": {}})


def test_context_helpers_refuse_wrong_caller_types() -> None:
    with pytest.raises(TypeError):
        context.RequestContext.from_request({"method": "x"})  # type: ignore[arg-type]
    note = codec.decode(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    with pytest.raises(TypeError):
        context.RequestContext.from_request(note)
    request = codec.decode(raw(call()))
    with pytest.raises(TypeError):
        context.require_client_capabilities(request, 5)  # type: ignore[arg-type]


def input_required() -> Any:
    response = codec.decode(
        raw(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {
                    "resultType": "input_required",
                    "requestState": "s",
                    "inputRequests": {
                        "q": {
                            "method": "elicitation/create",
                            "params": {
                                "message": "?",
                                "requestedSchema": {"type": "object", "properties": {}},
                            },
                        }
                    },
                },
            }
        ),
        version="2026-07-28",
        method="tools/call",
    )
    assert isinstance(response, codec.ResultResponse)
    return response.result


def test_retry_with_a_bad_action_is_invalid_params() -> None:
    request = codec.decode(raw(call()))
    with pytest.raises(InvalidParamsError) as info:
        context.retry_with_input(request, input_required(), {"q": {"action": "maybe"}})
    assert any("inputResponses" in e["path"] for e in info.value.errors)
    with pytest.raises(TypeError):
        context.retry_with_input(request, input_required(), {"q": 5})  # type: ignore[dict-item]


# -- HTTP headers ------------------------------------------------------------------------

TOOL = {
    "name": "t",
    "inputSchema": {
        "type": "object",
        "properties": {"city": {"type": "string", "x-mcp-header": "City"}},
    },
}


def test_asgi_byte_pairs_are_read_like_a_mapping() -> None:
    request = call(arguments={"city": "Oslo"})
    mapping = http_headers.request_headers(request, TOOL)
    pairs = [(k.lower().encode(), v.encode()) for k, v in mapping.items()]
    http_headers.check_request_headers(pairs, request, TOOL)
    bad = [(k, b"Bergen" if k == b"mcp-param-city" else v) for k, v in pairs]
    with pytest.raises(HeaderMismatchError) as info:
        http_headers.check_request_headers(bad, request, TOOL)
    assert info.value.data["header"] == "Mcp-Param-City"


def test_non_ascii_header_bytes_are_an_invalid_header() -> None:
    request = call()
    pairs = [
        (b"mcp-protocol-version", b"2026-07-28"),
        (b"mcp-method", b"tools/call"),
        (b"mcp-name", "t\u00e9".encode()),
    ]
    with pytest.raises(HeaderMismatchError) as info:
        http_headers.check_request_headers(pairs, request)
    assert info.value.data["reason"] == "invalid"


@pytest.mark.parametrize(
    "headers",
    [{"MCP-Protocol-Version": 5}, ["Mcp-Method"], "Mcp-Method: x", 5, [(b"a", b"b", b"c")]],
)
def test_wrong_header_types_are_type_errors(headers: Any) -> None:
    with pytest.raises(TypeError):
        http_headers.check_request_headers(headers, call())
    with pytest.raises(TypeError):
        http_headers.decode_header_value(b"x")  # type: ignore[arg-type]


def test_many_case_variants_of_one_header_are_joined_once() -> None:
    variants = [
        ("".join(c.upper() if (i >> j) & 1 else c for j, c in enumerate("mcp-name")), "t")
        for i in range(256)
    ]
    assert http_headers.received_headers(variants)["mcp-name"] == ", ".join(["t"] * 256)


def test_tool_headers_are_read_once_and_reused() -> None:
    properties = {f"p{i}": {"type": "string", "x-mcp-header": f"H{i}"} for i in range(5000)}
    tool = {"name": "t", "inputSchema": {"type": "object", "properties": properties}}
    compiled = http_headers.ToolHeaders(tool)
    assert len(compiled.headers) == 5000
    request = call(arguments={"p4999": "v"})
    headers = http_headers.request_headers(request, compiled)
    assert headers["Mcp-Param-H4999"] == "v" and len(headers) == 4
    http_headers.check_request_headers(headers, request, compiled)
    assert http_headers.validate_tool_headers(compiled) == compiled.headers


def test_cyclic_and_deep_input_schemas_are_invalid_tool_headers() -> None:
    cyclic: dict[str, Any] = {"type": "object"}
    cyclic["properties"] = {"self": cyclic}
    with pytest.raises(http_headers.InvalidToolHeaderError, match="contains itself"):
        http_headers.validate_tool_headers({"name": "t", "inputSchema": cyclic})
    deep: Any = {"type": "string"}
    for _ in range(5000):
        deep = {"type": "object", "properties": {"a": deep}}
    with pytest.raises(http_headers.InvalidToolHeaderError, match="nested deeper"):
        http_headers.validate_tool_headers({"name": "t", "inputSchema": deep})
    listed: Any = []
    for _ in range(5000):
        listed = [listed]
    with pytest.raises(http_headers.InvalidToolHeaderError, match="nested deeper"):
        http_headers.validate_tool_headers({"name": "t", "inputSchema": {"anyOf": listed}})


# -- CLI -----------------------------------------------------------------------------------


def run_cli(*args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_schema", "validate", *args],
        capture_output=True,
        text=True,
        timeout=60,
        **kw,
    )


def assert_one_line_failure(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 2, result
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr


def test_cli_missing_file_and_directory_exit_2(tmp_path: Path) -> None:
    assert_one_line_failure(run_cli(str(tmp_path / "absent.jsonl")))
    assert_one_line_failure(run_cli(str(tmp_path)))


def test_cli_closed_stdin_exits_2() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, sys; os.close(0); sys.stdin = None; "
            "from mcp_schema.cli import main; sys.exit(main(['validate', '-']))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert_one_line_failure(result)


def test_cli_unsupported_version_on_an_empty_file_exits_2(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert_one_line_failure(run_cli(str(empty), "--version", "2099-01-01"))
    assert_one_line_failure(run_cli())  # usage


def test_cli_full_disk_exits_2(tmp_path: Path) -> None:
    sample = tmp_path / "one.jsonl"
    sample.write_bytes(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n' * 10)

    class FullDisk(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    err = io.StringIO()
    assert cli_main(["validate", str(sample)], stdout=FullDisk(), stderr=err) == 2
    assert err.getvalue() == "error: I/O error: No space left on device\n"
    if Path("/dev/full").exists():  # the real thing, through a subprocess
        with open("/dev/full", "w") as full:
            assert_one_line_failure(
                subprocess.run(
                    [sys.executable, "-m", "mcp_schema", "validate", str(sample)],
                    stdout=full,
                    stderr=subprocess.PIPE,
                    text=True,
                    timeout=60,
                )
            )


def test_cli_escapes_peer_text_on_an_ascii_stdout(tmp_path: Path) -> None:
    sample = tmp_path / "inject.jsonl"
    sample.write_text(
        json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "x\nline 2: -32602 $: forged \u00e9" + "m" * 500}
        )
        + "\n"
    )
    result = run_cli(str(sample), env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and lines[-1] == "0 valid, 1 invalid"
    assert lines[0].startswith("line 1: -32601 ") and len(lines[0]) < 600


def test_cli_reports_an_overlong_line_and_goes_on(tmp_path: Path) -> None:
    sample = tmp_path / "long.jsonl"
    ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    sample.write_bytes(b"[" * 5000 + b"\n" + ping + b"\n")
    out, err = io.StringIO(), io.StringIO()
    assert (
        cli_main(["validate", str(sample), "--max-line-bytes", "1000"], stdout=out, stderr=err) == 1
    )
    assert out.getvalue().splitlines() == [
        "line 1: -32700 $: line of 5,000 bytes is longer than 1,000, not read",
        "1 valid, 1 invalid",
    ]


def test_cli_on_dev_zero_stays_small() -> None:
    # An endless line: the CLI keeps skipping it in bounded chunks instead of growing.
    script = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)); "
        "from mcp_schema.cli import main; sys.exit(main(['validate', '/dev/zero']))"
    )
    process = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(timeout=3)
    finally:
        process.kill()
        _, stderr = process.communicate()
    assert b"MemoryError" not in stderr and b"Traceback" not in stderr


# -- codec: input types, depth, numbers, members ------------------------------------------

PING = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'


def decode_error(raw: Any, **kw: Any) -> McpError:
    with pytest.raises(McpError) as info:
        codec.decode(raw, **kw)
    return info.value


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview, lambda b: b.decode()])
def test_every_bytes_like_input_and_str_decode_alike(kind: Any) -> None:
    message = codec.decode(kind(raw(call())))
    assert codec.encode(message) == codec.encode(codec.decode(raw(call())))
    session = codec.Correlator()
    assert codec.encode(session.decode(kind(raw(call())))) == codec.encode(message)


def test_other_input_types_are_type_errors() -> None:
    for wrong in (5, None, [PING], {"jsonrpc": "2.0"}):
        with pytest.raises(TypeError):
            codec.decode(wrong)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            codec.Correlator().decode(wrong)  # type: ignore[arg-type]


@pytest.mark.parametrize("depth", [300, 1000, 100_000])
def test_deep_nesting_with_nan_text_is_a_parse_error(depth: int) -> None:
    inner = b'{"a":' * depth + b'"NaN"' + b"}" * depth
    err = decode_error(b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": ' + inner + b"}")
    assert err.code == -32700 and "nested deeper than 200 levels" in err.message
    assert decode_error(b"[" * depth + b'"NaN"' + b"]" * depth).code == -32600


def test_batches_are_refused_from_the_first_byte() -> None:
    # Unterminated and 8 MB long: refused without reading (or building) the array.
    err = decode_error(b"  \n[" + b"1," * 4_000_000)
    assert err.code == -32600 and "a batch" in err.message


@pytest.mark.parametrize(
    "number", [b"1e400", b"-1E+400", b"1" * 400 + b".5", b"0.5e00400", b"NaN", b"-Infinity"]
)
def test_numbers_that_cannot_be_kept_are_refused(number: bytes) -> None:
    for where in (b'"x": %s', b'"_meta": {"k": [%s]}'):
        body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {' + where % number + b"}}"
        assert decode_error(body).code == -32700
        padded = body.replace(b'"params"', b'"pad": "' + b"p" * 40_000 + b'", "params"')
        assert decode_error(padded).code == -32700  # the large-message route


def test_numbers_that_can_be_kept_round_trip() -> None:
    for number in (b"1e15", b"123456789012345678901234567890", b"-0.0", b"2.5e-300"):
        body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": %s}}' % number
        assert json.loads(codec.encode(codec.decode(body))) == json.loads(body)


def test_mass_non_finite_values_cost_one_short_error() -> None:
    values = b",".join(b'"k%d": 1e400' % i for i in range(50_000))
    body = raw(
        call(
            dict(
                META, **{"io.modelcontextprotocol/clientCapabilities": {"experimental": {"x": {}}}}
            )
        )
    )
    body = body.replace(b'"x": {}', b'"x": {' + values + b"}")
    err = decode_error(body)
    assert err.code == -32700 and len(json.dumps(err.to_response(1))) < 1000


@pytest.mark.parametrize(
    "number", [b"1e308", b"-1e300", b"9007199254740994.0", b"9007199254740993.0", b"1e16"]
)
def test_integral_floats_never_grow_on_re_encode(number: bytes) -> None:
    # A float of 2**53 or more no longer holds every integer: the parse
    # refuses it (9007199254740993.0 would read as 9007199254740992).
    for body in (
        b'{"jsonrpc": "2.0", "id": %s, "method": "ping"}' % number,
        b'{"jsonrpc": "2.0", "id": %s, "result": {}}' % number,
    ):
        assert decode_error(body, method="ping").code == -32700
    # An integer member too, wherever it is.
    sampled = raw(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "sampling/createMessage",
            "params": {"messages": [], "maxTokens": 0},
        }
    ).replace(b'"maxTokens": 0', b'"maxTokens": ' + number)
    assert decode_error(sampled, version="2025-11-25").code == -32700


def test_small_integral_floats_are_one_id_rule_for_requests_and_responses() -> None:
    request = codec.decode(b'{"jsonrpc": "2.0", "id": 5.0, "method": "ping"}')
    response = codec.decode(b'{"jsonrpc": "2.0", "id": 5.0, "result": {}}', method="ping")
    assert request.id == 5 and response.id == 5  # type: ignore[attr-defined]
    assert len(codec.encode(response)) <= len(b'{"jsonrpc": "2.0", "id": 5.0, "result": {}}')
    for bad in (b"5.5", b"true", b"[5]"):
        for body in (
            b'{"jsonrpc": "2.0", "id": %s, "method": "ping"}' % bad,
            b'{"jsonrpc": "2.0", "id": %s, "result": {}}' % bad,
        ):
            assert decode_error(body, method="ping").code == -32600


def test_nullable_member_beside_its_snake_case_twin_round_trips() -> None:
    body = (
        b'{"jsonrpc": "2.0", "id": 1, "result": {"content": [], "resultType": "complete", '
        b'"structuredContent": null, "structured_content": 1}}'
    )
    message = codec.decode(body, version="2026-07-28", method="tools/call")
    assert json.loads(codec.encode(message)) == json.loads(body)
    absent = body.replace(b'"structuredContent": null, ', b"")
    assert json.loads(
        codec.encode(codec.decode(absent, version="2026-07-28", method="tools/call"))
    ) == json.loads(absent)


@pytest.mark.parametrize("escape", [b"\\ud800", b"\\udfff", b"\\ud800\\u0041", b"\\ud800\\ud800"])
def test_lone_surrogate_escapes_are_refused_saying_so(escape: bytes) -> None:
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "%s"}}' % escape
    err = decode_error(body)
    assert err.code == -32700 and "lone surrogate" in err.message
    paired = body.replace(escape, b"\\ud83d\\ude00")
    assert json.loads(codec.encode(codec.decode(paired))) == json.loads(paired)


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "method": "ping"}',
        b'{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "ping"}',
        b'{"jsonrpc": "2.0", "jsonrpc": "2.0", "id": 1, "method": "ping"}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}, "params": {}}',
        b'{"jsonrpc": "2.0", "id": 1, "result": {}, "result": {}}',
        b'{"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "a"}, '
        b'"error": {"code": 1, "message": "b"}}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "m\\u0065thod": "ping"}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "'
        + b"y" * 40_000
        + b'"}, "method": "tools/list"}',
    ],
)
def test_repeated_envelope_members_are_invalid_requests(body: bytes) -> None:
    for decoder in (lambda b: codec.decode(b, method="ping"), codec.Correlator().decode):
        with pytest.raises(errors.InvalidRequestError) as info:
            decoder(body)
        assert "more than once" in info.value.message


@pytest.mark.parametrize(
    "params",
    [
        b'{"name": "evil", "name": "safe"}',
        b'{"name": "evil", "n\\u0061me": "safe"}',
        b'{"name": "t", "arguments": {"x": 1}, "arguments": {"x": 2}}',
        b'{"name": "t", "_meta": {"%s": "2025-11-25", "%s": "2026-07-28"}}'
        % (PROTOCOL_VERSION_KEY.encode(), PROTOCOL_VERSION_KEY.encode()),
        b'{"name": "t", "arguments": {"deep": [{"a": {"b": 1, "b": 2}}]}}',
    ],
)
def test_repeated_members_at_any_depth_are_refused(params: bytes) -> None:
    # Parsers differ on which of two members wins: a proxy that checked
    # "safe" while its backend calls "evil" is message smuggling.
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": %s}' % params
    for decoder in (
        codec.decode,
        codec.decode_dict,
        codec.Correlator().decode,
        codec.Correlator().decode_dict,
    ):
        with pytest.raises(errors.InvalidRequestError) as info:
            decoder(body)
        assert "more than once" in info.value.message
        assert info.value.request_id == 1 and info.value.answerable  # answered by its id


def test_a_repeated_error_code_is_refused_in_a_response() -> None:
    body = b'{"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "code": 1, "message": "x"}}'
    err = decode_error(body, method="ping")
    assert err.code == -32600 and not err.answerable


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}}',
        b'{"jsonrpc": "2.0", "id": 1, "params": {}}',
        b'{"jsonrpc": "2.0", "id": 1}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "result": {}}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "error": {"code": 1, "message": "x"}}',
        b'{"jsonrpc": "2.0", "method": "notifications/initialized", "result": {}}',
        b'{"jsonrpc": "2.0", "id": 1.5, "error": {"code": 1, "message": "x"}}',
    ],
)
def test_envelopes_mixing_or_lacking_kinds_are_invalid_requests(body: bytes) -> None:
    for version in (None, "2025-11-25", "2026-07-28"):
        assert decode_error(body, version=version, method="ping").code == -32600


@pytest.mark.parametrize("named", [b"null", b"5", b"{}"])
def test_a_meta_version_that_is_not_a_string_is_a_typed_error(named: bytes) -> None:
    body = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": '
        b'{"io.modelcontextprotocol/protocolVersion": %s}}}' % named
    )
    err = decode_error(body)
    assert err.code == -32022 and err.data["requested"] == named.decode()


def test_extensions_must_not_be_a_str() -> None:
    with pytest.raises(TypeError):
        codec.decode(raw(call()), extensions="io.modelcontextprotocol/tasks")
    with pytest.raises(TypeError):
        codec.Correlator(extensions="io.modelcontextprotocol/tasks")


def test_attacker_text_in_codec_messages_is_escaped_and_cut() -> None:
    err = decode_error(raw({"jsonrpc": "2.0", "id": 1, "method": "x\nline 2: ok" + "z" * 100_000}))
    assert err.code == -32601 and "\n" not in err.message and len(err.message) < 300
    body = raw(call(arguments={f"k\n{i}": 1 for i in range(3)}))
    many = raw({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": 5}] * 5000}})
    err = decode_error(many, version="2025-11-25", method="tools/list")
    assert len(err.data["errors"]) == errors.MAX_ERRORS and err.data["total"] >= 5000
    assert len(json.dumps(err.to_response(1))) <= errors.MAX_RESPONSE_BYTES
    assert codec.decode(body)


# -- codec: headers must agree with the body ------------------------------------------------

GOOD_HEADERS = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "t"}


@pytest.mark.parametrize(
    ("change", "header"),
    [
        ({"MCP-Protocol-Version": "2025-11-25"}, "MCP-Protocol-Version"),
        ({"Mcp-Method": "tools/list"}, "Mcp-Method"),
        ({"Mcp-Name": "evil"}, "Mcp-Name"),
    ],
)
def test_headers_that_disagree_with_the_body_are_refused(
    change: dict[str, str], header: str
) -> None:
    err = decode_error(raw(call()), headers={**GOOD_HEADERS, **change})
    assert err.code == -32020 and err.data["header"] == header
    pairs = [(k.encode(), v.encode()) for k, v in {**GOOD_HEADERS, **change}.items()]
    assert decode_error(raw(call()), headers=pairs).code == -32020
    with pytest.raises(HeaderMismatchError):
        codec.Correlator().decode(raw(call()), headers={**GOOD_HEADERS, **change})


def test_agreeing_headers_give_the_message_decoded_without_them() -> None:
    plain = codec.encode(codec.decode(raw(call())))
    assert codec.encode(codec.decode(raw(call()), headers=GOOD_HEADERS)) == plain
    assert codec.encode(codec.Correlator().decode(raw(call()), headers=GOOD_HEADERS)) == plain


def test_handshake_era_headers_that_are_present_must_agree() -> None:
    assert codec.decode(PING, headers={"MCP-Protocol-Version": "2025-11-25"})
    assert (
        decode_error(
            PING, version="2025-11-25", headers={"MCP-Protocol-Version": "2026-07-28"}
        ).code
        == -32020
    )
    assert decode_error(PING, headers={"Mcp-Method": "tools/list"}).code == -32020
    session = codec.Correlator(version="2025-11-25")
    assert decode_error_of(session, PING, headers={"MCP-Protocol-Version": "2026-07-28"}) == -32020


def test_header_values_of_wrong_types_are_type_errors() -> None:
    with pytest.raises(TypeError):
        codec.decode(raw(call()), headers={"MCP-Protocol-Version": 5})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        codec.decode(raw(call()), headers=["MCP-Protocol-Version"])  # type: ignore[list-item]


def decode_error_of(session: codec.Correlator, body: bytes, **kw: Any) -> int:
    with pytest.raises(McpError) as info:
        session.decode(body, **kw)
    return info.value.code


# -- Correlator -----------------------------------------------------------------------------


def j(message: Any) -> bytes:
    return json.dumps(message).encode()


CLIENT_CALL = j({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}})
SERVER_ROOTS = j({"jsonrpc": "2.0", "id": 1, "method": "roots/list"})
CALL_RESULT = j({"jsonrpc": "2.0", "id": 1, "result": {"content": []}})
ROOTS_RESULT = j({"jsonrpc": "2.0", "id": 1, "result": {"roots": []}})


def test_each_peer_has_its_own_id_space() -> None:
    session = codec.Correlator(version="2025-11-25")
    session.decode(CLIENT_CALL)  # a client method: the client's id 1
    session.decode(SERVER_ROOTS)  # a server method: the server's id 1
    assert session.pending == 2
    assert decode_error_of(session, CALL_RESULT) == -32600  # which id 1? nothing forgotten
    assert session.pending == 2
    call = session.decode(CALL_RESULT, sender="server")
    roots = session.decode(ROOTS_RESULT, sender="client")
    assert type(call.result).__name__ == "CallToolResult"  # type: ignore[attr-defined]
    assert type(roots.result).__name__ == "ListRootsResult"  # type: ignore[attr-defined]
    assert session.pending == 0


def test_explicit_senders_keep_both_directions_apart() -> None:
    session = codec.Correlator(version="2025-11-25")
    ping = j({"jsonrpc": "2.0", "id": 7, "method": "ping"})
    session.decode(ping, sender="client")
    session.decode(ping, sender="server")  # the same id, the other peer's space
    assert session.pending == 2
    session.decode(j({"jsonrpc": "2.0", "id": 7, "result": {}}), sender="server")
    session.decode(j({"jsonrpc": "2.0", "id": 7, "result": {}}), sender="client")
    assert session.pending == 0
    with pytest.raises(TypeError):
        session.decode(ping, sender="proxy")  # type: ignore[arg-type]


def test_a_duplicate_in_flight_id_is_refused_and_the_pending_request_kept() -> None:
    session = codec.Correlator(version="2025-11-25")
    session.decode(CLIENT_CALL)
    list_tools = j({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert decode_error_of(session, list_tools) == -32600
    reply = session.decode(CALL_RESULT)
    assert type(reply.result).__name__ == "CallToolResult"  # type: ignore[attr-defined]


def test_a_malformed_response_does_not_consume_the_pending_request() -> None:
    session = codec.Correlator(version="2025-11-25")
    session.decode(CLIENT_CALL)
    for bad in (
        b'{"id": 1, "result": {}}',
        b'{"jsonrpc": "2.0", "id": 1, "result": {"content": 5}}',
    ):
        with pytest.raises(McpError):
            session.decode(bad)
        assert session.pending == 1
    reply = session.decode(CALL_RESULT)
    assert type(reply.result).__name__ == "CallToolResult"  # type: ignore[attr-defined]


def test_cancelled_and_forgotten_requests_leave_the_table() -> None:
    session = codec.Correlator(version="2025-11-25")
    session.decode(CLIENT_CALL)
    session.decode(
        j({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    )
    assert session.pending == 0
    session.decode(CLIENT_CALL)
    assert session.forget(1) and not session.forget(1) and session.pending == 0


def test_a_server_feeding_its_own_replies_sees_them_answered() -> None:
    server = codec.Correlator(version="2025-11-25")
    server.decode(CLIENT_CALL)  # in
    server.decode(CALL_RESULT)  # out: answers the client's request
    assert server.pending == 0


def test_the_pending_table_is_bounded() -> None:
    session = codec.Correlator(version="2025-11-25", max_pending=100)
    for i in range(100):
        session.decode(j({"jsonrpc": "2.0", "id": i, "method": "ping"}), sender="client")
    assert (
        decode_error_of(
            session, j({"jsonrpc": "2.0", "id": 100, "method": "ping"}), sender="client"
        )
        == -32600
    )
    assert session.pending == 100
    session.decode(j({"jsonrpc": "2.0", "id": 0, "method": "ping"}), sender="server")
    assert session.pending == 101  # the other peer's table has room of its own


def test_only_validated_requests_and_initialize_results_change_the_session_version() -> None:
    session = codec.Correlator(version="2025-11-25")
    other = j(
        {
            "jsonrpc": "2.0",
            "method": "notifications/whatever",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
        }
    )
    assert decode_error_of(session, other) == -32022  # this session speaks 2025-11-25
    assert session.version == "2025-11-25"
    handshake = codec.Correlator()
    handshake.decode(
        j(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "c", "version": "1"},
                },
            }
        )
    )
    assert (
        decode_error_of(
            handshake,
            j(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "result": {
                        "protocolVersion": "2099-01-01",
                        "capabilities": {},
                        "serverInfo": {"name": "s", "version": "1"},
                    },
                }
            ),
        )
        == -32022
    )
    assert handshake.version is None and handshake.pending == 0
    assert handshake.decode(PING)  # later traffic still decodes


def test_a_long_unsupported_version_is_cut_in_the_message_and_data() -> None:
    body = raw(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "ping",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "v\n" * 500_000}},
        }
    )
    err = decode_error(body)
    assert err.code == -32022 and "\n" not in err.message and len(err.message) < 300
    assert len(err.data["requested"]) <= errors.MAX_QUOTED
    assert len(json.dumps(err.to_response(1))) < 1000


def test_a_long_version_negotiated_by_initialize_is_cut_in_the_error() -> None:
    # The initialize result is peer text too: its -32022 stays small.
    session = codec.Correlator()
    session.decode(
        j(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "c", "version": "1"},
                },
            }
        )
    )
    answer = {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {
            "protocolVersion": "9\n" * 500_000,
            "capabilities": {},
            "serverInfo": {"name": "s", "version": "1"},
        },
    }
    with pytest.raises(McpError) as info:
        session.decode(j(answer))
    err = info.value
    assert err.code == -32022 and "\n" not in err.message and len(err.message) < 300
    assert len(err.data["requested"]) <= errors.MAX_QUOTED
    assert len(json.dumps(err.to_response(0))) < 1000


def test_method_names_a_peer_makes_up_build_no_validator_each() -> None:
    """With allow_unknown_methods, a peer may name a new method in every request;
    the responses are all read as the generic result, by one validator."""
    from mcp_schema._codec import catalog, schemas, views

    def cached() -> int:
        builders: tuple[Sized, ...] = (
            views.model_of,
            views._build_model_validator,
            catalog._catalog,
            schemas._compiled,
        )
        return sum(map(len, builders))

    correlator = codec.Correlator(version="2025-11-25", allow_unknown_methods=True)
    for i in range(40):
        view = correlator.decode if i % 2 else correlator.decode_dict
        view(b'{"jsonrpc":"2.0","id":%d,"method":"made/up/%d"}' % (i, i), sender="client")
        decoded = view(b'{"jsonrpc":"2.0","id":%d,"result":{"k":%d}}' % (i, i), sender="server")
        assert codec.encode(decoded) == b'{"jsonrpc":"2.0","id":%d,"result":{"k":%d}}' % (i, i)
        if i == 1:
            first = cached()
    assert cached() == first
    assert not any(m.startswith("made/") for m in catalog.catalog("2025-11-25", ())._results)
