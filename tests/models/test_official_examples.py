"""Every official example of every compiled version validates as its def,
losslessly, by plain pydantic calls and (for messages) through the codec."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic import TypeAdapter

from codegen.spec import spec_dir
from mcp_schema import SUPPORTED_VERSIONS, codec, versions
from tests.engines.conformance import same_json

EXAMPLES = [
    (version, path)
    for version in SUPPORTED_VERSIONS
    for path in sorted((spec_dir() / version / "examples").glob("*/*.json"))
]


def _package(version: str) -> ModuleType:
    compiled = versions.protocol(version)
    assert compiled is not None
    return importlib.import_module(compiled.package)


def _id(case: tuple[str, Path]) -> str:
    version, path = case
    return f"{version}:{path.parent.name}/{path.name}"


def test_all_examples_are_found() -> None:
    found = {version for version, _ in EXAMPLES}
    assert "2026-07-28" in found
    assert sum(1 for version, _ in EXAMPLES if version == "2026-07-28") == 129


@pytest.mark.parametrize("case", EXAMPLES, ids=_id)
def test_example_round_trips(case: tuple[str, Path]) -> None:
    version, path = case
    instance = json.loads(path.read_bytes())
    adapter: TypeAdapter[Any] = TypeAdapter(getattr(_package(version), path.parent.name))
    model = adapter.validate_python(instance)
    dumped = adapter.dump_python(model, mode="json", by_alias=True, exclude_unset=True)
    assert same_json(dumped, instance)
    assert same_json(
        json.loads(adapter.dump_json(model, by_alias=True, exclude_unset=True)), instance
    )


MESSAGES = [(v, p) for v, p in EXAMPLES if "jsonrpc" in json.loads(p.read_bytes())]


@pytest.mark.parametrize("case", MESSAGES, ids=_id)
def test_example_message_through_codec(case: tuple[str, Path]) -> None:
    version, path = case
    requests = _package(version).REQUESTS
    method_of_result = {entry.result.__name__: method for method, entry in requests.items()}
    raw = path.read_bytes()
    name = path.parent.name
    method = method_of_result.get(name.removesuffix("Response"))
    message = codec.decode(raw, version=version, method=method)
    assert same_json(json.loads(codec.encode(message)), json.loads(raw))
    if method is not None:
        result = getattr(message, "result")  # noqa: B009
        assert type(result) is requests[method].result  # never read as input-required
    elif name.endswith(("Request", "Notification")):
        assert type(message).__name__ == name
    else:
        assert codec.message_kind(message) == "error"
