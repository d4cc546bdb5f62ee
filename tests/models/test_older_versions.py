"""Protocol versions 2024-11-05, 2025-03-26 and 2025-06-18: decoding by the
negotiated version, the option that reads a peer's newer shapes, real SDK
sessions at each version, batches and negotiation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from mcp_schema import (
    SUPPORTED_VERSIONS,
    codec,
    errors,
    negotiation,
    v2024_11_05,
    v2025_03_26,
    v2025_06_18,
    v2025_11_25,
)
from mcp_schema.base import McpModel
from mcp_schema.versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS

OLDER = {"2024-11-05": v2024_11_05, "2025-03-26": v2025_03_26, "2025-06-18": v2025_06_18}
CAPTURES = sorted((Path(__file__).parents[1] / "data" / "captures" / "older").glob("*.jsonl"))
# The peer rig asks for a method nobody defines, in every session.
NOBODY_DEFINES = "tools/frobnicate"


def raw(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode()


def version_of(message: McpModel) -> str:
    """The protocol version whose package defines the decoded model."""
    inner = getattr(message, "result", getattr(message, "error", message))
    model = inner if isinstance(inner, McpModel) else message
    package = type(model).__module__.split(".")[1]
    return package.removeprefix("v").replace("_", "-")


def session(version: str) -> codec.Correlator:
    """A Correlator that saw an initialize negotiate ``version``."""
    correlator = codec.Correlator()
    correlator.decode(
        raw(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "c", "version": "1"},
                },
            }
        )
    )
    correlator.decode(
        raw(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "result": {
                    "protocolVersion": version,
                    "capabilities": {},
                    "serverInfo": {"name": "s", "version": "1"},
                },
            }
        )
    )
    return correlator


# -- real sessions of the official SDKs ---------------------------------------------


def test_every_older_version_has_captures_of_both_sdks() -> None:
    names = {p.stem for p in CAPTURES}
    assert names == {f"{sdk}-{v}" for sdk in ("python", "typescript") for v in OLDER}


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_captured_session_strictly_and_leniently(path: Path) -> None:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    version = records[0]["version"]
    strict = codec.Correlator()
    lenient = codec.Correlator(lenient_newer=True)
    requests = OLDER[version].REQUESTS
    asked: dict[tuple[str, str], str] = {}  # (sender, id) -> method
    in_version = newer = 0
    for record in records:
        message = record["message"]
        data = raw(message)
        if "method" in message and "id" in message:
            asked[(record["dir"], json.dumps(message["id"]))] = message["method"]
        answering = None
        if "result" in message:
            other = "c2s" if record["dir"] == "s2c" else "s2c"
            answering = asked.get((other, json.dumps(message["id"])))
        try:
            out: McpModel | None = strict.decode(data)
        except errors.McpError as err:
            assert err.code in (-32601, -32602), (err, message)
            out = None
            if "method" in message and "id" in message:  # a refused request is not pending
                del asked[(record["dir"], json.dumps(message["id"]))]
        try:
            read = lenient.decode(data)
        except errors.MethodNotFoundError:
            assert message.get("method") == NOBODY_DEFINES
            assert out is None
            continue
        assert json.loads(codec.encode(read)) == message
        if out is None:
            # Refused only for a shape of a later version, which the option reads.
            assert version_of(read) == codec.HANDSHAKE_VERSION, message
            newer += 1
            continue
        assert json.loads(codec.encode(out)) == message
        assert json.loads(codec.encode(read)) == json.loads(codec.encode(out))
        # The handshake is read in the newest handshake-era version; after it
        # the session's own version applies.
        handshake = message.get("method") == "initialize" or "protocolVersion" in message.get(
            "result", {}
        )
        assert version_of(out) == (codec.HANDSHAKE_VERSION if handshake else version), message
        if answering in requests and not handshake:
            # Paired by id and typed as the method's result.
            assert type(out.result) is requests[answering].result, message  # type: ignore[attr-defined]
        in_version += 1
    assert strict.version == lenient.version == version
    assert in_version >= 60
    assert newer >= 1


def test_captured_newer_shapes_are_the_ones_the_version_lacks() -> None:
    """Which frames need the option, per capture: methods the version lacks
    (elicitation before 2025-06-18, tasks), URL-mode elicitation at 2025-06-18,
    task-created results."""
    refused: dict[str, set[str]] = {}
    for path in CAPTURES:
        strict = codec.Correlator()
        pending: dict[Any, str] = {}
        for line in path.read_text().splitlines():
            message = json.loads(line)["message"]
            if "method" in message and "id" in message:
                pending[json.dumps(message["id"])] = message["method"]
            try:
                strict.decode(raw(message))
            except errors.McpError:
                what = message.get("method") or f"result of {pending[json.dumps(message['id'])]}"
                if message.get("params", {}).get("mode") == "url":
                    what += " (url)"
                refused.setdefault(path.stem, set()).add(what)
    elicit = {"elicitation/create", "elicitation/create (url)"}
    tasks = {"tasks/get", "tasks/list", "tasks/cancel", "tasks/result", "result of tools/call"}
    assert refused == {
        "python-2024-11-05": elicit | {NOBODY_DEFINES},
        "python-2025-03-26": elicit | {NOBODY_DEFINES},
        "python-2025-06-18": {"elicitation/create (url)", NOBODY_DEFINES},
        "typescript-2024-11-05": elicit | tasks | {NOBODY_DEFINES},
        "typescript-2025-03-26": elicit | tasks | {NOBODY_DEFINES},
        "typescript-2025-06-18": {"elicitation/create (url)"} | tasks | {NOBODY_DEFINES},
    }


# -- decoding by version ------------------------------------------------------------------


@pytest.mark.parametrize("version", sorted(OLDER))
def test_decode_by_an_older_version(version: str) -> None:
    package = OLDER[version]
    call = raw(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "t", "arguments": {"x": 0.5}, "vendor": [1]},
        }
    )
    message: Any = codec.decode(call, version=version)
    assert isinstance(message, package.CallToolRequest) and message.id == 3
    assert message.params.model_extra == {"vendor": [1]}
    assert json.loads(codec.encode(message)) == json.loads(call)
    answer: Any = codec.decode(
        raw(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "result": {"content": [{"type": "text", "text": "ok", "title": "newer member"}]},
            }
        ),
        version=version,
        method="tools/call",
    )
    assert type(answer.result) is package.CallToolResult
    assert answer.result.content[0].model_extra == {"title": "newer member"}
    error = codec.decode(
        raw({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}),
        version=version,
    )
    assert isinstance(error, codec.ErrorResponse) and type(error.error) is package.ERROR_MODEL


def test_unsupported_version_lists_all_five() -> None:
    with pytest.raises(errors.UnsupportedProtocolVersionError) as info:
        codec.decode(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}', version="2024-10-07")
    assert info.value.data["supported"] == list(SUPPORTED_VERSIONS)
    assert SUPPORTED_VERSIONS == (*HANDSHAKE_VERSIONS, *STATELESS_VERSIONS)
    assert set(OLDER) < set(HANDSHAKE_VERSIONS)


AUDIO = {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}
LINK = {"type": "resource_link", "uri": "file:///a.txt", "name": "a"}


@pytest.mark.parametrize(
    ("version", "block"),
    [("2024-11-05", AUDIO), ("2024-11-05", LINK), ("2025-03-26", LINK)],
    ids=["2024-11-05-audio", "2024-11-05-resource_link", "2025-03-26-resource_link"],
)
def test_a_content_block_the_version_lacks(version: str, block: dict[str, Any]) -> None:
    result = raw({"jsonrpc": "2.0", "id": 5, "result": {"content": [block]}})
    correlator = session(version)
    correlator.decode(
        raw({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "t"}})
    )
    with pytest.raises(errors.InvalidParamsError) as info:
        correlator.decode(result)  # strict by default: the session's version decides
    assert info.value.errors[0]["path"].startswith("$.result.content[0]")

    lenient = session(version)
    lenient.lenient_newer = True
    lenient.decode(
        raw({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "t"}})
    )
    read: Any = lenient.decode(result)
    assert type(read.result) is v2025_11_25.CallToolResult
    assert json.loads(codec.encode(read)) == json.loads(result)


def test_the_newer_arm_in_the_version_that_has_it_needs_no_option() -> None:
    result = raw({"jsonrpc": "2.0", "id": 5, "result": {"content": [AUDIO, LINK]}})
    message: Any = codec.decode(result, version="2025-06-18", method="tools/call")
    assert type(message.result) is v2025_06_18.CallToolResult


def test_lenient_keeps_the_strict_error_when_the_newest_refuses_too() -> None:
    bad = raw({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 5}})
    with pytest.raises(errors.InvalidParamsError) as info:
        codec.decode(bad, version="2024-11-05", lenient_newer=True)
    assert info.value.errors == [
        {"path": "$.params.name", "reason": "Input should be a valid string"}
    ]
    with pytest.raises(errors.MethodNotFoundError) as missing:
        codec.decode(
            raw({"jsonrpc": "2.0", "id": 1, "method": "tasks/frob"}),
            version="2025-03-26",
            lenient_newer=True,
        )
    assert missing.value.data == {"method": "tasks/frob", "version": "2025-03-26"}


def test_lenient_reads_only_older_handshake_versions() -> None:
    # 2025-11-25 is the newest handshake-era version: nothing newer to read it as.
    with pytest.raises(errors.MethodNotFoundError):
        codec.decode(
            raw({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}),
            version="2025-11-25",
            lenient_newer=True,
        )
    url = raw(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "elicitation/create",
            "params": {
                "mode": "url",
                "message": "m",
                "url": "https://x.test",
                "elicitationId": "e",
            },
        }
    )
    with pytest.raises(errors.InvalidParamsError):
        codec.decode(url, version="2025-06-18")
    assert type(codec.decode(url, version="2025-06-18", lenient_newer=True)) is (
        v2025_11_25.ElicitRequest
    )


def test_session_that_negotiated_an_older_version_decodes_by_it() -> None:
    for version, package in OLDER.items():
        correlator = session(version)
        assert correlator.version == version
        ping = correlator.decode(raw({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        assert isinstance(ping, package.PingRequest) and codec.message_kind(ping) == "request"
        answer: Any = correlator.decode(raw({"jsonrpc": "2.0", "id": 1, "result": {"extra": []}}))
        assert type(answer.result) is package.EmptyResult
        assert answer.result.model_extra == {"extra": []}
        assert correlator.pending == 0


# -- 2025-03-26 batches ---------------------------------------------------------------------


def test_a_batch_is_refused_by_decode_and_validated_by_the_batch_models() -> None:
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    with pytest.raises(errors.InvalidRequestError, match="batch"):
        codec.decode(json.dumps(batch), version="2025-03-26")
    adapter: TypeAdapter[Any] = TypeAdapter(v2025_03_26.JSONRPCBatchRequest)
    validated = adapter.validate_python(batch)
    assert adapter.dump_python(validated, mode="json", by_alias=True, exclude_unset=True) == batch
    assert [
        codec.decode(json.dumps(m), version="2025-03-26").model_dump(
            by_alias=True, exclude_unset=True
        )
        for m in batch
    ] == batch
    assert not hasattr(v2025_06_18, "JSONRPCBatchRequest")  # removed again in 2025-06-18


# -- negotiation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("requested", "answer"),
    [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("2023-01-01", "2025-11-25"),
        (None, "2025-11-25"),
        (20241105, "2025-11-25"),
    ],
)
def test_initialize_version(requested: object, answer: str) -> None:
    assert negotiation.initialize_version(requested) == answer


def test_discover_result_announces_every_supported_version() -> None:
    result = negotiation.discover_result(
        {"tools": {"listChanged": True}},
        server_info={"name": "s", "version": "1"},
        instructions="Be brief.",
    )
    wire = json.loads(codec.encode(result))
    assert wire == {
        "resultType": "complete",
        "supportedVersions": list(reversed(SUPPORTED_VERSIONS)),
        "capabilities": {"tools": {"listChanged": True}},
        "instructions": "Be brief.",
        "ttlMs": 0,
        "cacheScope": "private",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}},
    }
    answer: Any = codec.decode(
        raw({"jsonrpc": "2.0", "id": 1, "result": wire}),
        version="2026-07-28",
        method="server/discover",
    )
    assert answer.result == result
    with pytest.raises(ValueError, match="1999-01-01"):
        negotiation.discover_result({}, versions=["1999-01-01"])
    assert json.loads(codec.encode(negotiation.discover_result({}, versions=["2025-11-25"])))[
        "supportedVersions"
    ] == ["2025-11-25"]


def test_discover_result_takes_models_of_any_version_and_raises_no_foreign_error() -> None:
    from mcp_schema import v2025_11_25

    result = negotiation.discover_result(
        v2025_11_25.ServerCapabilities.model_validate({"tools": {}, "logging": {}}),
        server_info=v2025_11_25.Implementation(name="s", version="1", title="S"),
    )
    wire = json.loads(codec.encode(result))
    assert wire["capabilities"] == {"tools": {}, "logging": {}}
    assert wire["_meta"]["io.modelcontextprotocol/serverInfo"] == {
        "name": "s",
        "version": "1",
        "title": "S",
    }
    with pytest.raises(ValueError) as refused:
        negotiation.discover_result({}, server_info={"name": 7})
    assert type(refused.value) is ValueError  # not pydantic's ValidationError
    assert "version" in str(refused.value)
    with pytest.raises(TypeError):
        negotiation.discover_result(["not", "capabilities"])  # type: ignore[arg-type]
