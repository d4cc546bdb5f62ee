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
from pathlib import Path
from typing import Any

import pytest

from mcp_schema import codec, context, errors, http_headers
from mcp_schema.cli import main as cli_main
from mcp_schema.errors import HeaderMismatchError, InvalidParamsError, McpError

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
        ({**META, "io.modelcontextprotocol/clientCapabilities": 5},
         '$.params._meta["io.modelcontextprotocol/clientCapabilities"]'),
        ({**META, "io.modelcontextprotocol/clientCapabilities": [1]},
         '$.params._meta["io.modelcontextprotocol/clientCapabilities"]'),
        ({**META, "io.modelcontextprotocol/clientCapabilities": {"sampling": 5}},
         '$.params._meta["io.modelcontextprotocol/clientCapabilities"]["sampling"]'),
        ({**META, "io.modelcontextprotocol/clientInfo": 5},
         '$.params._meta["io.modelcontextprotocol/clientInfo"]'),
        ({**META, "io.modelcontextprotocol/protocolVersion": 5},
         '$.params._meta["io.modelcontextprotocol/protocolVersion"]'),
        ({**META, "io.modelcontextprotocol/logLevel": ["debug"]},
         '$.params._meta["io.modelcontextprotocol/logLevel"]'),
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
    return codec.decode(raw({"jsonrpc": "2.0", "id": 1, "result": {
        "resultType": "input_required", "requestState": "s",
        "inputRequests": {"q": {"method": "elicitation/create", "params": {
            "message": "?", "requestedSchema": {"type": "object", "properties": {}}}}}}}),
        version="2026-07-28", method="tools/call").result


def test_retry_with_a_bad_action_is_invalid_params() -> None:
    request = codec.decode(raw(call()))
    with pytest.raises(InvalidParamsError) as info:
        context.retry_with_input(request, input_required(), {"q": {"action": "maybe"}})
    assert any("inputResponses" in e["path"] for e in info.value.errors)
    with pytest.raises(TypeError):
        context.retry_with_input(request, input_required(), {"q": 5})  # type: ignore[dict-item]


# -- HTTP headers ------------------------------------------------------------------------

TOOL = {"name": "t", "inputSchema": {"type": "object", "properties": {
    "city": {"type": "string", "x-mcp-header": "City"}}}}


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
    pairs = [(b"mcp-protocol-version", b"2026-07-28"), (b"mcp-method", b"tools/call"),
             (b"mcp-name", "t\u00e9".encode())]
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
    variants = [("".join(c.upper() if (i >> j) & 1 else c for j, c in enumerate("mcp-name")), "t")
                for i in range(256)]
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
    return subprocess.run([sys.executable, "-m", "mcp_schema", "validate", *args],
                          capture_output=True, text=True, timeout=60, **kw)


def assert_one_line_failure(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 2, result
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr


def test_cli_missing_file_and_directory_exit_2(tmp_path: Path) -> None:
    assert_one_line_failure(run_cli(str(tmp_path / "absent.jsonl")))
    assert_one_line_failure(run_cli(str(tmp_path)))


def test_cli_closed_stdin_exits_2() -> None:
    result = subprocess.run(
        [sys.executable, "-c", "import os, sys; os.close(0); sys.stdin = None; "
         "from mcp_schema.cli import main; sys.exit(main(['validate', '-']))"],
        capture_output=True, text=True, timeout=60)
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
            assert_one_line_failure(subprocess.run(
                [sys.executable, "-m", "mcp_schema", "validate", str(sample)],
                stdout=full, stderr=subprocess.PIPE, text=True, timeout=60))


def test_cli_escapes_peer_text_on_an_ascii_stdout(tmp_path: Path) -> None:
    sample = tmp_path / "inject.jsonl"
    sample.write_text(json.dumps({"jsonrpc": "2.0", "id": 1,
                                  "method": "x\nline 2: -32602 $: forged \u00e9" + "m" * 500}) + "\n")
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
    assert cli_main(["validate", str(sample), "--max-line-bytes", "1000"],
                    stdout=out, stderr=err) == 1
    assert out.getvalue().splitlines() == [
        "line 1: -32700 $: line of 5,000 bytes is longer than 1,000, not read",
        "1 valid, 1 invalid",
    ]


def test_cli_on_dev_zero_stays_small() -> None:
    # An endless line: the CLI keeps skipping it in bounded chunks instead of growing.
    script = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)); "
              "from mcp_schema.cli import main; sys.exit(main(['validate', '/dev/zero']))")
    process = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(timeout=3)
    finally:
        process.kill()
        _, stderr = process.communicate()
    assert b"MemoryError" not in stderr and b"Traceback" not in stderr
