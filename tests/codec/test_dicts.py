"""The plain-dict view: one TypedDict per definition, validated by the models' rules."""

from __future__ import annotations

import importlib
import json
import random
from pathlib import Path
from typing import Any, get_type_hints

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError
from typing_extensions import is_typeddict

from codegen.spec import pins
from mcp_schema import SUPPORTED_VERSIONS, codec, errors
from tests.engines import fuzz
from tests.engines.conformance import same_json

CAPTURES = sorted((Path(__file__).parents[1] / "data" / "captures").rglob("*.jsonl"))

PACKAGES = [f"mcp_schema.{pin.package}" for pin in pins().values()]


@pytest.mark.parametrize("package", PACKAGES)
def test_one_typeddict_per_model_under_the_same_name(package: str) -> None:
    models = importlib.import_module(f"{package}.models")
    dicts = importlib.import_module(f"{package}.dicts")
    assert dicts.__all__ == models.__all__
    for name in models.__all__:
        model: Any = getattr(models, name)
        view = getattr(dicts, name)
        if isinstance(model, type) and issubclass(model, BaseModel):
            assert is_typeddict(view), name
            wire = {f.serialization_alias or n for n, f in model.model_fields.items()}
            assert set(get_type_hints(view)) == wire, name


def check(name: str, value: Any, version: str = "v2026_07_28") -> Any:
    dicts = importlib.import_module(f"mcp_schema.{version}.dicts")
    return TypeAdapter(getattr(dicts, name)).validate_json(json.dumps(value))


TOOL = {"name": "t", "inputSchema": {"type": "object", "$schema": "x", "extra": [1, 2.5]}}


def test_valid_json_comes_back_as_the_same_plain_values() -> None:
    result = {
        "resultType": "complete",
        "tools": [TOOL],
        "nextCursor": "c",
        "cacheScope": "private",
        "ttlMs": 0,
        "_meta": {"io.x/y": {"z": None}},
        "unknown": {"deep": [True, None, 1e300]},
    }
    parsed = check("ListToolsResult", result)
    assert parsed == result
    assert type(parsed["tools"][0]["inputSchema"]) is dict
    assert parsed["unknown"]["deep"][2] == 1e300


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("Tool", {**TOOL, "title": None}),  # optional means absent, not null
        ("Tool", {**TOOL, "name": 5}),  # strict strings
        ("ProgressNotificationParams", {"progressToken": 1, "progress": "1"}),  # strict numbers
        ("ProgressNotificationParams", {"progressToken": 1, "progress": True}),
        ("TextContent", {"type": "image", "text": "x"}),  # discriminated by type
        ("ContentBlock", {"type": "nope"}),
        ("Tool", {"name": "t"}),  # required member missing
    ],
)
def test_the_models_rules_refuse(name: str, value: Any) -> None:
    with pytest.raises(ValidationError):
        check(name, value)


def test_integral_float_is_an_integer_and_result_type_selects_the_arm() -> None:
    assert check("ProgressNotificationParams", {"progressToken": 1, "progress": 5.0}) == {
        "progressToken": 1,
        "progress": 5,
    }
    # resultType "input_required" selects InputRequiredResult: CallToolResult's
    # required content is then not asked for.
    dicts = importlib.import_module("mcp_schema.v2026_07_28.dicts")
    response = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"resultType": "input_required", "inputRequests": {}},
    }
    assert TypeAdapter(dicts.CallToolResultResponse).validate_python(response) == response
    with pytest.raises(ValidationError):
        TypeAdapter(dicts.CallToolResultResponse).validate_python(
            {**response, "result": {"resultType": "complete"}}
        )


# -- decode_dict: the codec in the dict view -------------------------------------------------


def _outcome(decode: Any, raw: bytes, **options: Any) -> Any:
    try:
        return decode(raw, **options)
    except errors.McpError as err:
        return err


def _same_message(model: Any, plain: Any, raw: bytes) -> None:
    """A handler that wants the model converts the dict, with the same result
    (a response's payload, by the class of the decoded one)."""
    if isinstance(model, (codec.ResultResponse, codec.ErrorResponse)):
        member = "result" if isinstance(model, codec.ResultResponse) else "error"
        payload = getattr(model, member)
        assert type(payload).model_validate(plain[member]) == payload, raw
        assert same_json(json.loads(codec.encode(model)), plain), raw
    else:
        assert type(model).model_validate(plain) == model, raw


def _agree(raw: bytes, **options: Any) -> bool:
    """decode_dict and decode agree on ``raw``; True when it was decoded."""
    model = _outcome(codec.decode, raw, **options)
    plain = _outcome(codec.decode_dict, raw, **options)
    if isinstance(model, errors.McpError):
        assert isinstance(plain, errors.McpError), (raw, options, plain)
        assert (type(plain), plain.code, plain.message, plain.data) == (
            type(model),
            model.code,
            model.message,
            model.data,
        ), raw
        return False
    assert not isinstance(plain, errors.McpError), (raw, options, plain)
    assert same_json(plain, json.loads(raw)), raw
    _same_message(model, plain, raw)
    assert json.loads(codec.encode(plain)) == json.loads(raw)
    return True


NAMED = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}


@pytest.mark.parametrize(
    "message",
    [
        # A notification's method with an id, in a self-naming message: -32601.
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "notifications/progress",
            "params": {**NAMED, "progressToken": 1, "progress": 1},
        },
        # A draft-07 request: the envelope's id and jsonrpc are checked too.
        {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 2.0, "method": "ping"},
    ],
)
@pytest.mark.parametrize("version", [None, *SUPPORTED_VERSIONS])
def test_decode_dict_agrees_with_decode_on_edge_cases(
    message: dict[str, Any], version: str | None
) -> None:
    raw = json.dumps(message).encode()
    _agree(raw, version=version)
    session, plain = codec.Correlator(version=version), codec.Correlator(version=version)
    _agree_outcomes(_outcome(session.decode, raw), _outcome(plain.decode_dict, raw), raw)


def _agree_outcomes(model: Any, plain: Any, raw: bytes) -> None:
    if isinstance(model, errors.McpError):
        assert isinstance(plain, errors.McpError), raw
        assert (type(plain), plain.message) == (type(model), model.message), raw
    else:
        assert same_json(plain, json.loads(raw)), raw
        _same_message(model, plain, raw)


@pytest.mark.parametrize(
    "result",
    [
        b'{"content":[{"type":"text","text":"hi"}]}',
        b'{"content":[],"task":{"taskId":"t","status":"working"}}',
        b'{"content":[],"task":{"taskId":7}}',  # told apart by "task", and invalid as a task
        b'{"content":[],"\\u0074ask":{"taskId":7}}',  # the same member, one letter escaped
        b'{"content":[],"structuredContent":{"task":1}}',  # the word, not the member
        b'{"task":{"taskId":"t","status":"working","createdAt":"2025-01-01T00:00:00Z",'
        b'"lastUpdatedAt":"2025-01-01T00:00:00Z","ttl":null}}',
    ],
)
def test_the_dict_view_reads_a_result_told_by_a_member_as_decode_does(result: bytes) -> None:
    """Handshake-era tools/call results: one naming no telling member skips the
    union's Python discriminator in the dict view; the outcome is the same."""
    raw = b'{"jsonrpc":"2.0","id":1,"result":%s}' % result
    _agree(raw, version="2025-11-25", method="tools/call")


def test_decode_dict_agrees_with_decode_on_fuzzed_input() -> None:
    rng = random.Random(20261130)
    seeds = fuzz.corpus()
    decoded = 0
    for _ in range(3000):
        raw = fuzz.mutate(rng.choice(seeds), rng) if rng.random() < 0.6 else rng.choice(seeds)
        options = {
            "version": rng.choice([None, *SUPPORTED_VERSIONS, "1999-01-01"]),
            "method": rng.choice([None, "tools/call", "tools/list", "initialize", "tasks/get"]),
            "extensions": rng.choice([(), (codec.TASKS_EXTENSION,)]),
            "assume_complete": rng.random() < 0.2,
            "allow_unknown_methods": rng.random() < 0.2,
            "lenient_newer": rng.random() < 0.2,
            "headers": fuzz.header_map(rng) if rng.random() < 0.1 else None,
        }
        decoded += _agree(raw, **options)
    assert decoded > 300  # the mix reaches the success paths, not only the errors


@pytest.mark.parametrize("capture", CAPTURES, ids=[c.stem for c in CAPTURES])
def test_correlator_dict_view_follows_real_sessions(capture: Path) -> None:
    models, plain = codec.Correlator(), codec.Correlator()
    errors_seen = decoded = 0
    for line in capture.read_text().splitlines():
        record = json.loads(line)
        if "message" not in record:
            continue  # deliberately unparsable probe bytes
        raw = json.dumps(record["message"]).encode()
        model = _outcome(models.decode, raw)
        message = _outcome(plain.decode_dict, raw)
        if isinstance(model, errors.McpError):  # the sessions probe a few errors too
            assert (type(message), message.message) == (type(model), model.message)
            errors_seen += 1
        else:
            assert message == json.loads(raw)
            _same_message(model, message, raw)
            decoded += 1
        assert (plain.version, plain.pending) == (models.version, models.pending)
    assert decoded > errors_seen


def test_correlator_views_agree_on_fuzzed_sessions() -> None:
    rng = random.Random(20261131)
    seeds = fuzz.corpus()
    decoded = 0
    for _ in range(300):
        version = rng.choice([None, *SUPPORTED_VERSIONS])
        lenient = rng.random() < 0.2
        models = codec.Correlator(version=version, max_pending=4, lenient_newer=lenient)
        plain = codec.Correlator(version=version, max_pending=4, lenient_newer=lenient)
        for raw, sender in fuzz.session(seeds, rng):
            model = _outcome(models.decode, raw, sender=sender)
            message = _outcome(plain.decode_dict, raw, sender=sender)
            if isinstance(model, errors.McpError):
                assert isinstance(message, errors.McpError), raw
                assert (type(message), message.message) == (type(model), model.message), raw
            else:
                assert same_json(message, json.loads(raw)), raw
                _same_message(model, message, raw)
                decoded += 1
            assert (plain.version, plain.pending) == (models.version, models.pending), raw
    assert decoded > 300
