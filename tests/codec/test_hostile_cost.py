"""Hostile input against the one decode pipeline: what a peer sends costs it
a bounded answer, and nothing it sends stays behind in memory."""

from __future__ import annotations

import functools
import gc
import json
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

from mcp_schema import codec, errors
from mcp_schema._codec import catalog, schemas, views
from mcp_schema.errors import McpError
from mcp_schema.versions import PROTOCOL_VERSION_KEY

ESCAPED_KEY = PROTOCOL_VERSION_KEY.replace("/", "\\/")


def call(named: str, key: str = PROTOCOL_VERSION_KEY) -> bytes:
    meta = f'{{"{key}": "{named}", "io.modelcontextprotocol/clientCapabilities": {{}}}}'
    return (
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", '
        f'"params": {{"name": "t", "_meta": {meta}}}}}'
    ).encode()


@pytest.mark.parametrize("view", ["decode", "decode_dict"])
def test_an_escaped_version_key_is_the_version_key(view: str) -> None:
    # Escaping a "/" is another spelling of the same member: the Correlator and
    # decode read the version it names, whichever way it is written.
    for body in (call("1999-01-01"), call("1999-01-01", ESCAPED_KEY)):
        with pytest.raises(errors.UnsupportedProtocolVersionError):
            getattr(codec, view)(body)
        session = codec.Correlator(version="2025-11-25")
        with pytest.raises(errors.UnsupportedProtocolVersionError):
            getattr(session, view)(body)
        assert session.version == "2025-11-25" and session.pending == 0
    stateless = codec.Correlator()
    getattr(stateless, view)(call("2026-07-28", ESCAPED_KEY))
    assert stateless.version == "2026-07-28" and stateless.pending == 1


def test_invented_extension_sets_build_nothing() -> None:
    body = call("2026-07-28")

    def decode_with(invented: list[str]) -> None:
        codec.decode(body, extensions=invented)
        codec.decode_dict(body, extensions=invented[:2])
        codec.Correlator(extensions=invented).decode(body)

    decode_with(["vendor.example/first", "other.example/first", "io.modelcontextprotocol/tasks"])
    before = (len(catalog._catalog), len(views._build_model_validator), len(schemas._compiled))
    tracemalloc.start()
    for i in range(300):
        invented = [
            f"vendor.example/ext-{i}",
            f"other.example/{i}",
            "io.modelcontextprotocol/tasks",
        ]
        codec.decode(body, extensions=invented)
        codec.decode_dict(body, extensions=invented[:2])
        codec.Correlator(extensions=invented).decode(body)
    gc.collect()
    grown, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    after = (len(catalog._catalog), len(views._build_model_validator), len(schemas._compiled))
    assert after == before
    assert grown < 200_000  # nothing kept per set


def _kept_error(body: bytes, **options: Any) -> McpError:
    try:
        codec.decode(body, **options)
    except McpError as err:
        return err
    raise AssertionError("decoded")


@pytest.mark.parametrize(
    "read",
    [
        functools.partial(codec.decode, version="2025-11-25"),
        functools.partial(codec.decode_dict, version="2025-11-25"),
        codec.Decoder(version="2025-11-25").decode,
        codec.Decoder(version="2025-11-25").decode_dict,
    ],
    ids=["decode", "decode_dict", "Decoder.decode", "Decoder.decode_dict"],
)
def test_a_kept_error_holds_neither_the_input_nor_the_validator_error(
    read: Callable[[bytes], object],
) -> None:
    items = ",".join(["1"] * 200_000)
    body = (
        '{"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": '
        '{"maxTokens": 1, "messages": [{"role": "user", "content": [' + items + "]}]}}"
    ).encode()
    _kept_error(body, version="2025-11-25")  # what a first use builds is not a leak
    gc.collect()
    tracemalloc.start()
    try:
        read(body)
    except McpError as err:
        kept = err
    del body
    gc.collect()
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert kept.code == -32602 and kept.__context__ is None and kept.__cause__ is None
    assert held < 50_000, held  # the input was 400 KB, its parse several MB
    assert len(json.dumps(kept.to_response())) <= errors.MAX_RESPONSE_BYTES


@pytest.mark.parametrize("length", [1024, 1025, 100_000])
def test_every_error_answer_stays_small_whatever_the_id(length: int) -> None:
    rid = "i" * length
    for body in (
        b'{"jsonrpc": "2.0", "id": "%s", "method": "nope"}' % rid.encode(),
        b'{"jsonrpc": "2.0", "id": "%s", "method": "tools/call", "params": {}}' % rid.encode(),
    ):
        err = _kept_error(body, version="2025-11-25")
        answer = json.dumps(err.to_response())
        assert len(answer) <= errors.MAX_RESPONSE_BYTES
        assert err.to_response()["id"] == (rid if length <= 1024 else None)


def _peak(decode: Any, body: bytes) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        decode(body, version="2025-11-25")
    except McpError:
        pass
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def _sampling(items: str, count: int) -> bytes:
    return (
        '{"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": '
        '{"maxTokens": 1, "messages": [{"role": "user", "content": ['
        + ",".join([items] * count)
        + "]}]}}"
    ).encode()


@pytest.mark.parametrize("view", ["decode", "decode_dict"])
def test_invalid_input_costs_no_more_memory_than_valid_input_of_its_size(view: str) -> None:
    # make stress measures the peak resident size at 1.6 and 8 MB; this is the
    # same comparison in Python objects, small enough for every run.
    valid_item = '{"type": "text", "text": "' + "x" * 38 + '"}'
    valid = _sampling(valid_item, 3_000)
    invalid = _sampling("1", len(valid) // 2)
    assert abs(len(invalid) - len(valid)) < len(valid) // 10
    decode = getattr(codec, view)
    assert _peak(decode, invalid) <= 2 * _peak(decode, valid)


@pytest.mark.parametrize("opening", [b"[", b'{"a":'])
def test_the_deepest_message_decode_reads_is_written_back(opening: bytes) -> None:
    closing = b"]" if opening == b"[" else b"}"
    deepest = None
    for depth in range(190, 210):
        raw = (
            b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"deep": '
            + opening * depth
            + b"1"
            + closing * depth
            + b"}}"
        )
        try:
            codec.decode_dict(raw)
        except errors.ParseError:
            break
        deepest = raw
    assert deepest is not None
    for view in (codec.decode, codec.decode_dict):
        assert json.loads(codec.encode(view(deepest))) == json.loads(deepest)
