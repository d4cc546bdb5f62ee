"""Every official 2026-07-28 example validates as its def, losslessly, by
plain pydantic calls and (for messages) through the codec."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

import mcp_schema.v2026_07_28 as v
from codegen.spec import spec_dir
from mcp_schema import codec
from tests.engines.conformance import same_json

EXAMPLES = sorted((spec_dir() / "2026-07-28" / "examples").glob("*/*.json"))
METHOD_OF_RESULT = {entry.result.__name__: method for method, entry in v.REQUESTS.items()}


def test_all_examples_are_found() -> None:
    assert len(EXAMPLES) == 129


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_example_round_trips(path: Path) -> None:
    instance = json.loads(path.read_bytes())
    adapter: TypeAdapter[Any] = TypeAdapter(getattr(v, path.parent.name))
    model = adapter.validate_python(instance)
    dumped = adapter.dump_python(model, mode="json", by_alias=True, exclude_unset=True)
    assert same_json(dumped, instance)
    assert same_json(json.loads(adapter.dump_json(model, by_alias=True, exclude_unset=True)),
                     instance)


MESSAGES = [p for p in EXAMPLES if "jsonrpc" in json.loads(p.read_bytes())]


@pytest.mark.parametrize("path", MESSAGES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_example_message_through_codec(path: Path) -> None:
    raw = path.read_bytes()
    name = path.parent.name
    method = METHOD_OF_RESULT.get(name.removesuffix("Response"))
    message = codec.decode(raw, version="2026-07-28", method=method)
    assert same_json(json.loads(codec.encode(message)), json.loads(raw))
    if method is not None:
        result = getattr(message, "result")  # noqa: B009
        assert type(result) is v.REQUESTS[method].result  # never read as input-required
    elif name.endswith(("Request", "Notification")):
        assert type(message).__name__ == name
    else:
        assert codec.message_kind(message) == "error"
