"""``mcp_schema.project``: a message as a model of another protocol version."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import mcp_schema
from mcp_schema import v2024_11_05
from mcp_schema.codec import Correlator, decode, encode
from mcp_schema.diff import diff
from mcp_schema.projection import ProjectionError, Session, project

CAPTURES = sorted((Path(__file__).parents[1] / "data" / "captures").glob("*2025-11-25.jsonl"))
SESSION = Session(
    client_capabilities={"roots": {"listChanged": True}},
    client_info={"name": "c", "version": "1"},
    log_level="info",
)


def _json(message: BaseModel) -> Any:
    return json.loads(encode(message))


def _result(result: dict[str, Any], method: str, version: str) -> BaseModel:
    raw = json.dumps({"jsonrpc": "2.0", "id": 1, "result": result})
    return decode(raw, version=version, method=method)


def _without(value: Any, path: str) -> None:
    steps = path.removeprefix("$").replace("[", ".").replace("]", "").split(".")[1:]
    for step in steps[:-1]:
        value = value[int(step)] if isinstance(value, list) else value[step]
    last = steps[-1]
    del value[int(last) if isinstance(value, list) else last]


def _captured_results() -> list[tuple[str, dict[str, Any], BaseModel]]:
    found: list[tuple[str, dict[str, Any], BaseModel]] = []
    for capture in CAPTURES:
        correlator = Correlator()
        for number, line in enumerate(capture.read_text().splitlines(), start=1):
            record = json.loads(line)
            if "message" not in record:
                continue
            try:
                message = correlator.decode(json.dumps(record["message"]))
            except mcp_schema.errors.McpError:
                continue  # the captures' deliberately invalid frames
            if "result" in record["message"]:
                found.append((f"{capture.name}:{number}", record["message"], message))
    return found


def test_import_mcp_schema_loads_no_pydantic() -> None:
    script = (
        "import sys, mcp_schema\n"
        "assert 'pydantic' not in sys.modules\n"
        "from mcp_schema import project, ProjectionError\n"
        "assert project.__module__ == 'mcp_schema.projection'\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


def test_to_the_same_version_is_the_identity() -> None:
    message = _result({"tools": []}, "tools/list", "2025-11-25")
    projected = project(message, "2025-11-25")
    assert projected.message is message and projected.removed == ()


def test_captured_results_round_trip_through_2026() -> None:
    """2025-11-25 → 2026-07-28 → 2025-11-25 gives back the original JSON, less
    exactly the members reported removed; results without a 2026 equivalent raise."""
    exact = lossy = refused = 0
    for where, original, message in _captured_results():
        try:
            up = project(message, "2026-07-28")
        except ProjectionError:
            name = type(getattr(message, "result", message)).__name__
            assert name in diff("2025-11-25", "2026-07-28").removed, where
            assert name == "InitializeResult" or "Task" in name, where
            refused += 1
            continue
        assert _json(up.message)["result"]["resultType"] == "complete", where
        back = project(up.message, "2025-11-25")
        assert back.removed == (), where
        expected = json.loads(json.dumps(original))
        for path in up.removed:
            _without(expected, path)
        assert _json(back.message) == expected, where
        exact += not up.removed
        lossy += bool(up.removed)
    assert exact > 100 and refused > 0, (exact, lossy, refused)


def test_result_type_and_list_results_into_2026() -> None:
    message = _result({"tools": [], "vendor": 1}, "tools/list", "2025-11-25")
    up = _json(project(message, "2026-07-28").message)["result"]
    assert up == {
        "tools": [],
        "vendor": 1,
        "resultType": "complete",
        "cacheScope": "private",
        "ttlMs": 0,
    }
    down = project(project(message, "2026-07-28").message, "2025-11-25")
    assert _json(down.message)["result"] == {"tools": [], "vendor": 1}
    assert down.removed == ()


def test_results_without_older_equivalent_raise() -> None:
    message = _result(
        {"resultType": "input_required", "inputRequests": {}}, "tools/call", "2026-07-28"
    )
    with pytest.raises(ProjectionError, match="input_required"):
        project(message, "2025-11-25")


def test_members_the_target_lacks_are_removed_or_refused_when_strict() -> None:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}
    tool = {
        "name": "t",
        "title": "T",
        "icons": [],
        "inputSchema": schema,
        "x-vendor": 2,
    }
    message = _result({"tools": [tool]}, "tools/list", "2025-11-25")
    down = project(message, "2024-11-05")
    assert down.removed == ("$.result.tools[0].icons", "$.result.tools[0].title")
    assert _json(down.message)["result"]["tools"][0] == {
        "name": "t",
        "inputSchema": schema,
        "x-vendor": 2,
    }
    with pytest.raises(ProjectionError) as refused:
        project(message, "2024-11-05", strict=True)
    assert refused.value.paths == down.removed


@pytest.mark.parametrize(
    ("block", "version"),
    [
        ({"type": "audio", "data": "AA==", "mimeType": "audio/wav"}, "2024-11-05"),
        ({"type": "resource_link", "uri": "file:///a", "name": "a"}, "2025-03-26"),
    ],
)
def test_content_blocks_a_version_lacks_are_removed(block: dict[str, Any], version: str) -> None:
    text = {"type": "text", "text": "hi"}
    message = _result({"content": [block, text]}, "tools/call", "2025-11-25")
    down = project(message, version)
    assert down.removed == ("$.result.content[0]",)
    assert _json(down.message)["result"]["content"] == [text]


def test_structured_content_and_output_schema_the_older_version_cannot_carry() -> None:
    message = _result(
        {"content": [], "structuredContent": [1, 2], "resultType": "complete"},
        "tools/call",
        "2026-07-28",
    )
    down = project(message, "2025-11-25")
    assert down.removed == ("$.result.structuredContent",)
    tool = {"name": "t", "inputSchema": {"type": "object"}, "outputSchema": {"type": "array"}}
    listed = _result(
        {"tools": [tool], "resultType": "complete", "cacheScope": "public", "ttlMs": 5},
        "tools/list",
        "2026-07-28",
    )
    down = project(listed, "2025-11-25")
    assert down.removed == (
        "$.result.cacheScope",
        "$.result.tools[0].outputSchema",
        "$.result.ttlMs",
    )
    assert "outputSchema" not in _json(down.message)["result"]["tools"][0]


def test_request_session_facts_move_between_eras() -> None:
    raw = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}}
    older = decode(json.dumps(raw), version="2025-11-25")
    with pytest.raises(TypeError, match="session"):
        project(older, "2026-07-28")
    up = project(older, "2026-07-28", session=SESSION)
    meta = _json(up.message)["params"]["_meta"]
    assert meta == {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": True}},
        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
        "io.modelcontextprotocol/logLevel": "info",
    }
    down = project(up.message, "2025-11-25")
    assert down.session == SESSION
    assert _json(down.message) == raw


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_captured_2026_results_project_into_every_handshake_version(version: str) -> None:
    correlator = Correlator()
    projected = 0
    capture = CAPTURES[0].parent / "python-2026-07-28.jsonl"
    for line in capture.read_text().splitlines():
        message = json.loads(line).get("message")
        if not message:
            continue
        try:
            decoded = correlator.decode(json.dumps(message))
        except mcp_schema.errors.McpError:
            continue
        if "result" not in message:
            continue
        try:
            down = project(decoded, version)
        except ProjectionError as refused:
            kind = message["result"].get("resultType")
            assert kind == "input_required" or "DiscoverResult" in str(refused), refused
            continue
        result = _json(down.message)["result"]
        assert "resultType" not in result
        for path in down.removed:
            assert path.startswith("$.result."), path
        projected += 1
    assert projected >= 20, projected


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2026-07-28"])
def test_error_responses_take_the_target_versions_error_model(version: str) -> None:
    raw = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no", "data": [1]}}
    message = decode(json.dumps(raw), version="2025-11-25")
    projected = project(message, version)
    assert _json(projected.message) == raw and projected.removed == ()
    assert type(projected.message.error).__module__.startswith(  # type: ignore[attr-defined]
        f"mcp_schema.v{version.replace('-', '_')}"
    )


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18"])
def test_json_rpc_members_stay_in_draft_07_versions(version: str) -> None:
    raw = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": 1, "progress": 2},
    }
    request = {"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {}}
    for message in (raw, request):
        projected = project(decode(json.dumps(message), version="2025-11-25"), version)
        assert _json(projected.message) == message and projected.removed == ()


@pytest.mark.parametrize(
    ("source", "target", "whole"),
    [
        ("2025-06-18", "2025-11-25", "CallToolRequest"),
        ("2025-06-18", "2024-11-05", "JSONRPCCallToolRequest"),
        ("2025-11-25", "2025-03-26", "JSONRPCCallToolRequest"),
    ],
)
def test_a_request_projects_by_its_definition_into_the_targets_whole_message(
    source: str, target: str, whole: str
) -> None:
    # A draft-07 request decodes as its JSONRPC<Name>; it projects as the
    # definition it extends, into what the target decodes the method as.
    raw = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "t"}}
    projected = project(decode(json.dumps(raw), version=source), target)
    assert type(projected.message).__name__ == whole
    assert type(projected.message).__module__.startswith(f"mcp_schema.v{target.replace('-', '_')}")
    assert _json(projected.message) == raw and projected.removed == ()


def test_members_a_whole_draft_07_message_has_and_the_target_lacks_are_removed() -> None:
    # Implementation.title is 2025-06-18's, not 2024-11-05's: found through
    # the whole message's params, which are walked like their definition's.
    info = {"name": "c", "version": "1", "title": "C"}
    params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": info}
    raw = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    down = project(decode(json.dumps(raw), version="2025-06-18"), "2024-11-05")
    assert type(down.message) is v2024_11_05.JSONRPCInitializeRequest
    assert down.removed == ("$.params.clientInfo.title",)


# -- issue 19 --------------------------------------------------------------------------------

META_2026 = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


@pytest.mark.parametrize("target", ["2025-06-18", "2025-03-26", "2024-11-05"])
@pytest.mark.parametrize("source", ["2025-11-25", "2026-07-28"])
def test_request_params_meta_survives_into_every_version(source: str, target: str) -> None:
    meta: dict[str, Any] = {"progressToken": "tok", "vendor.example/trace": {"id": 7}}
    if source == "2026-07-28":
        meta |= META_2026
    raw = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "_meta": meta}}
    )
    projected = project(decode(raw, version=source), target, strict=True)
    assert projected.removed == ()
    params = _json(projected.message)["params"]
    assert params["_meta"] == {"progressToken": "tok", "vendor.example/trace": {"id": 7}}
    # and it reads back in the target version as it was written
    assert _json(decode(encode(projected.message), version=target)) == _json(projected.message)


@pytest.mark.parametrize("target", ["2025-06-18", "2024-11-05"])
def test_notification_params_meta_survives(target: str) -> None:
    raw = (
        b'{"jsonrpc": "2.0", "method": "notifications/progress", "params": '
        b'{"progressToken": 1, "progress": 0.5, "_meta": {"vendor/x": 1}}}'
    )
    projected = project(decode(raw, version="2025-11-25"), target, strict=True)
    assert _json(projected.message)["params"]["_meta"] == {"vendor/x": 1}


def test_projection_error_quotes_peer_text_cut() -> None:
    long_kind = "x" * 1_500_000
    raw = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"resultType": long_kind}})
    message = decode(raw, version="2026-07-28", method="ping")
    with pytest.raises(ProjectionError) as caught:
        project(message, "2025-11-25")
    assert len(str(caught.value)) <= 1000
    assert "\n" not in str(caught.value)


def test_projection_error_lists_a_bounded_number_of_paths() -> None:
    paths = tuple(f'$.params["{"k" * 300}{i}"]' for i in range(1000))
    error = ProjectionError("cannot carry these members", paths)
    assert error.paths == paths
    assert len(str(error)) <= 1000
