"""The generated strategies of ``mcp_schema.testing`` against the oracle and the codec.

Every definition's draws are judged by the oracle in the CI conformance slice
(tests/package/test_conformance.py draws from these strategies). Here: that every
definition and model class has a strategy, that whole messages decode as
stated and are valid under the oracle, that hostile variants are invalid and
get their stated code, Hypothesis registration, and the import boundary.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from codegen.registry import ERROR_RESPONSES, RESULT_RESPONSES
from mcp_schema.base import McpModel
from mcp_schema.codec import TASKS_EXTENSION, decode, encode
from mcp_schema.errors import McpError
from mcp_schema.json_strategies import MAX_JSON_DEPTH, integers, numbers
from mcp_schema.testing import (
    InvalidMessage,
    WireMessage,
    definitions,
    instances,
    invalid_messages,
    messages,
    models,
)
from mcp_schema.v2026_07_28 import Annotations, CallToolRequest, CallToolResult
from tests.engines import conformance as c

pytestmark = pytest.mark.slow  # draws thousands of messages

CHECKED = settings(
    max_examples=10,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
KEY_OF_PACKAGE = {c.package_of(key): key for key in c.SCHEMA_KEYS}
CORE_KEYS = [key for key in c.SCHEMA_KEYS if "/" not in key]
# (version, extensions) pairs messages() is drawn for, from the schema keys.
SESSIONS = [(key.split("/")[0], (TASKS_EXTENSION,) if "/" in key else ()) for key in c.SCHEMA_KEYS]


class _Found(Exception):
    """Ends a search at its first find: Hypothesis stops at the first failure."""


def drawn(strategy: st.SearchStrategy[Any], condition: Any, examples: int = 300) -> Any:
    """The first of ``examples`` fixed-seed draws that satisfies ``condition``.

    Unlike ``hypothesis.find`` it does not shrink, which on whole messages
    costs far more than the search; and it draws no more once it found one.
    """
    found: list[Any] = []

    @settings(CHECKED, max_examples=examples, phases=[Phase.generate])
    @given(strategy)
    def search(value: Any) -> None:
        if condition(value):
            found.append(value)
            raise _Found

    with contextlib.suppress(_Found):
        search()
    assert found, f"no draw of {examples} satisfies the condition"
    return found[0]


def strategies_of(key: str) -> Any:
    return importlib.import_module(c.package_of(key) + ".strategies")


def key_of(cls: type) -> str:
    return KEY_OF_PACKAGE[cls.__module__.rsplit(".", 1)[0]]


# -- coverage ---------------------------------------------------------------------------


@pytest.mark.parametrize("key", c.SCHEMA_KEYS)
def test_every_definition_has_a_strategy(key: str) -> None:
    assert sorted(strategies_of(key).DEFINITIONS) == c.def_names(key)


@pytest.mark.parametrize("key", c.SCHEMA_KEYS)
def test_every_model_class_has_a_strategy(key: str) -> None:
    module = importlib.import_module(c.package_of(key) + ".models")
    classes = {
        obj
        for obj in vars(module).values()
        if isinstance(obj, type) and issubclass(obj, McpModel) and obj.__module__ == module.__name__
    }
    assert set(strategies_of(key).BY_MODEL) == classes
    assert all(instances(cls) is strategies_of(key).BY_MODEL[cls] for cls in classes)


def test_definitions_by_version_and_extension() -> None:
    assert definitions("2026-07-28") is strategies_of("2026-07-28").DEFINITIONS
    tasks = definitions("2026-07-28", TASKS_EXTENSION)
    assert tasks is strategies_of("2026-07-28/tasks").DEFINITIONS
    with pytest.raises(ValueError, match="unsupported"):
        definitions("1999-01-01")
    with pytest.raises(TypeError):
        instances(McpModel)


# -- messages -------------------------------------------------------------------------


def _methods(version: str, extensions: tuple[str, ...]) -> list[str]:
    keys = [version, *(f"{version}/tasks" for _ in extensions)]
    modules = [strategies_of(key) for key in keys]
    return sorted({m for module in modules for m in (*module.REQUESTS, *module.NOTIFICATIONS)})


MESSAGE_CASES = [
    (version, extensions, method)
    for version, extensions in SESSIONS
    for method in _methods(version, extensions)
]


def check_message(message: WireMessage) -> McpModel:
    """Decodes as stated, round-trips, and every part is valid under the oracle."""
    decoded = decode(
        message.raw,
        version=message.version,
        method=message.method,
        extensions=message.extensions,
    )
    assert c.same_json(json.loads(encode(decoded)), message.value)
    version = message.version
    if message.kind in ("request", "notification"):
        judged = [(type(decoded), message.value)]
        assert decoded.method == message.method  # type: ignore[attr-defined]
    else:
        member = "result" if message.kind == "result" else "error"
        part = getattr(decoded, member)
        judged = [(type(part), message.value[member])]
        names = RESULT_RESPONSES if member == "result" else ERROR_RESPONSES
        envelope = next(name for name in names if name in c.def_names(version))
        assert c.oracle(version, envelope).is_valid(message.value)
    for cls, value in judged:
        key = key_of(cls)
        # Inline objects are judged within their envelope; a draft-07 message
        # (JSONRPC<Name>) by allOf of its envelope and <Name>.
        if cls.__name__ in c.def_names(key) + c.derived_names(key):
            assert c.oracle(key, cls.__name__).is_valid(value), (cls.__name__, value)
    return decoded


@pytest.mark.parametrize(
    ("version", "extensions", "method"),
    MESSAGE_CASES,
    ids=[f"{v}{'+tasks' if e else ''}:{m}" for v, e, m in MESSAGE_CASES],
)
def test_messages_decode_round_trip_and_satisfy_the_oracle(
    version: str, extensions: tuple[str, ...], method: str
) -> None:
    kinds: set[str] = set()

    @CHECKED
    @given(messages(version, method=method, extensions=extensions))
    def check(message: WireMessage) -> None:
        assert message.method == method and message.version == version
        kinds.add(message.kind)
        check_message(message)

    check()
    assert kinds & {"request", "notification"}


@pytest.mark.parametrize(
    ("version", "method", "extensions", "tag", "answer"),
    [
        ("2026-07-28", "tools/call", (), "input_required", "InputRequiredResult"),
        ("2026-07-28", "prompts/get", (TASKS_EXTENSION,), "task", "CreateTaskResult"),
        ("2025-11-25", "sampling/createMessage", (), None, "CreateTaskResult"),
    ],
)
def test_every_result_arm_is_drawn(
    version: str, method: str, extensions: tuple[str, ...], tag: str | None, answer: str
) -> None:
    def alternative(message: WireMessage) -> bool:
        result = message.value["result"]
        return result.get("resultType") == tag if tag else "task" in result

    found = drawn(
        messages(version, method=method, kind="result", extensions=extensions), alternative
    )
    decoded = check_message(found)
    assert type(decoded.result).__name__ == answer  # type: ignore[attr-defined]


@pytest.mark.parametrize("version", CORE_KEYS)
def test_error_responses_carry_every_code(version: str) -> None:
    codes = set(strategies_of(version).ERRORS)
    seen: set[int] = set()

    @settings(CHECKED, max_examples=300, phases=[Phase.generate])
    @given(messages(version, kind="error"))
    def check(message: WireMessage) -> None:
        seen.add(message.value["error"]["code"])
        check_message(message)
        if seen == codes:
            raise _Found  # every code drawn: no need for the rest of the 300

    with contextlib.suppress(_Found):
        check()
    assert seen == codes


def test_narrowing_that_matches_nothing_is_an_error() -> None:
    with pytest.raises(ValueError, match="no notification"):
        messages("2026-07-28", method="tools/call", kind="notification")
    with pytest.raises(ValueError, match="no extension"):
        messages("2025-11-25", extensions=[TASKS_EXTENSION])


# -- hostile variants -----------------------------------------------------------------------


def _typed_messages(key: str) -> list[str]:
    unions = ("ClientRequest", "ServerRequest", "ClientNotification", "ServerNotification")
    return [name for name in unions if name in c.def_names(key)]


def _refuse(token: str) -> None:
    raise ValueError(token)


@pytest.mark.parametrize("version", CORE_KEYS)
def test_invalid_messages_are_invalid_and_get_their_code(version: str) -> None:
    unions = _typed_messages(version)
    codes: set[int] = set()

    @settings(CHECKED, max_examples=200)
    @given(invalid_messages(version))
    def check(bad: InvalidMessage) -> None:
        codes.add(bad.code)
        with pytest.raises(McpError) as raised:
            decode(bad.raw, version=bad.version)
        assert raised.value.code == bad.code, (bad.defect, raised.value)
        try:
            value = json.loads(bad.raw, parse_constant=_refuse)
        except ValueError:
            return  # not JSON: invalid under any schema

        # A message is valid when its JSON-RPC envelope is and its typed union
        # is (the draft-07 schemas define the two apart; later ones nest them).
        def valid_as(envelope: str, kind: str) -> bool:
            return c.oracle(version, envelope).is_valid(value) and any(
                c.oracle(version, u).is_valid(value) for u in unions if kind in u
            )

        assert not valid_as("JSONRPCRequest", "Request"), bad.defect
        assert not valid_as("JSONRPCNotification", "Notification"), bad.defect

    check()
    assert codes == {-32700, -32600, -32601, -32602}


# -- registration and building blocks ---------------------------------------------------------


@CHECKED
@given(st.from_type(CallToolRequest), models(CallToolResult))
def test_from_type_and_models_give_validated_models(
    request: CallToolRequest, result: CallToolResult
) -> None:
    assert isinstance(request, CallToolRequest) and isinstance(result, CallToolResult)
    assert CallToolRequest.model_validate_json(encode(request)) == request


def test_open_objects_sometimes_have_unknown_members() -> None:
    declared = strategies_of("2026-07-28").MEMBER_NAMES
    wire_names = {"audience", "lastModified", "priority"}
    found = drawn(instances(Annotations), lambda v: bool(set(v) - wire_names))
    extra = set(found) - wire_names
    assert extra and not extra & declared
    # Neither the wire name nor the attribute name of any member is ever drawn as unknown.
    assert {"lastModified", "last_modified", "_meta", "meta"} <= declared


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def test_recursive_json_nests_and_is_bounded() -> None:
    json_value = definitions("2026-07-28")["JSONValue"]
    assert _depth(drawn(json_value, lambda v: _depth(v) >= 3)) >= 3

    @settings(CHECKED, max_examples=200)
    @given(json_value)
    def bounded(value: Any) -> None:
        assert _depth(value) <= MAX_JSON_DEPTH

    bounded()


def test_number_kinds_are_strict() -> None:
    assert drawn(integers(ge=0.5, le=3), lambda v: isinstance(v, float)) in (1.0, 2.0, 3.0)
    assert isinstance(drawn(numbers(ge=0, le=1), lambda v: 0 < v < 1), float)

    @settings(CHECKED, max_examples=100)
    @given(integers(ge=-2.5, le=7), numbers())
    def strict(integer: Any, number: Any) -> None:
        assert not isinstance(integer, bool) and not isinstance(number, bool)
        assert float(integer).is_integer() and -2 <= integer <= 7
        assert isinstance(number, (int, float))

    strict()


def test_importing_the_package_does_not_import_hypothesis() -> None:
    code = (
        "import sys, mcp_schema, mcp_schema.codec, mcp_schema.http_headers, mcp_schema.cli\n"
        "import mcp_schema.v2025_11_25, mcp_schema.v2026_07_28, mcp_schema.v2026_07_28.tasks\n"
        "assert 'hypothesis' not in sys.modules, 'hypothesis imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
