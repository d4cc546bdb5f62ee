"""``encode`` is exact or refuses (issue 19): what it writes reads back as the
same JSON value, members come out in the conventional order, and a value with
no exact JSON text is a ``ValueError`` naming its path."""

from __future__ import annotations

import datetime
import decimal
import json
import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import mcp_schema.v2024_11_05 as v2024
import mcp_schema.v2025_11_25 as old
import mcp_schema.v2026_07_28 as new
from mcp_schema._codec.encoding import encode_answer
from mcp_schema.builders import log_message, progress
from mcp_schema.codec import Correlator, ErrorResponse, ResultResponse, decode, encode, reply
from mcp_schema.errors import InvalidParamsError, MethodNotFoundError
from mcp_schema.negotiation import discover_result

NAN, INF = float("nan"), float("inf")
HUGE = 10**4300  # 4,301 digits: decode refuses it, so encode does too


def refused_when_built(build: Callable[[], Any], path: str) -> None:
    """Refused when built (an unknown member given from Python) or when encoded."""
    try:
        message = build()
    except ValueError as err:
        assert path in str(err), err
        return
    with pytest.raises(ValueError) as caught:
        encode(message)
    assert path in str(caught.value), caught.value


def refused(message: Any, path: str) -> str:
    with pytest.raises(ValueError) as caught:
        encode(message)
    text = str(caught.value)
    assert text.startswith(path), text
    return text


def call(arguments: dict[str, Any]) -> old.CallToolRequest:
    return old.CallToolRequest(id=1, params={"name": "t", "arguments": arguments})


# -- non-finite numbers -------------------------------------------------------------------


@pytest.mark.parametrize("value", [NAN, INF, -INF])
def test_a_non_finite_number_in_a_model_is_refused(value: float) -> None:
    refused(call({"x": value}), "$.params.arguments.x")
    refused(call({"deep": [{"x": [1, value]}]}), "$.params.arguments.deep[0].x[1]")


@pytest.mark.parametrize("value", [NAN, INF, -INF])
def test_a_non_finite_number_in_a_mapping_is_refused(value: float) -> None:
    refused({"result": {"v": value}}, "$.result.v")
    refused({"jsonrpc": "2.0", "id": 1, "result": {"a b": [value]}}, '$.result["a b"][0]')


def test_reply_with_a_non_finite_number_is_refused() -> None:
    refused(reply(1, {"x": NAN}), "$.result.x")
    refused(
        reply(1, old.CallToolResult(content=[], structured_content={"t": INF})),
        "$.result.structuredContent.t",
    )


def test_builders_with_a_non_finite_number_are_refused() -> None:
    refused(log_message("2025-11-25", "info", {"x": NAN}), "$.params.data.x")
    info = {"name": "s", "version": "1", "load": INF}
    refused_when_built(
        lambda: discover_result({}, server_info=info),
        '$._meta["io.modelcontextprotocol/serverInfo"].load',
    )


def test_a_non_finite_number_assigned_to_a_number_member_is_refused() -> None:
    note = progress("2025-11-25", "tok", 0.5)
    with pytest.raises(ValueError):
        note.params.progress = NAN
    with pytest.raises(ValueError):
        note.params.model_copy(update={"progress": INF})
    assert json.loads(encode(note))["params"]["progress"] == 0.5
    # model_construct trusts its input: encode still refuses.
    params = type(note.params).model_construct(progress_token="tok", progress=NAN)
    refused(params, "$.progress")


def test_correlator_request_with_a_non_finite_number_is_refused() -> None:
    session = Correlator(version="2025-11-25")
    with pytest.raises(ValueError, match=r"\$\.params\.arguments\.x"):
        session.request("tools/call", {"name": "t", "arguments": {"x": NAN}}, sender="client")


def test_a_refused_correlator_request_leaves_nothing_pending() -> None:
    session = Correlator(version="2025-11-25")
    with pytest.raises(ValueError):
        session.request("tools/call", {"name": "t", "arguments": {"x": NAN}}, sender="client")
    assert session.pending == 0


# -- other values with no exact JSON text ------------------------------------------------

NOT_JSON = [
    pytest.param({1, 2}, id="set"),
    pytest.param(frozenset(), id="frozenset"),
    pytest.param(b"bytes", id="bytes"),
    pytest.param(datetime.date(2026, 7, 28), id="date"),
    pytest.param(decimal.Decimal("1.5"), id="decimal"),
    pytest.param(object(), id="object"),
    pytest.param(1 + 2j, id="complex"),
    pytest.param(HUGE, id="4301 digits"),
    pytest.param(-HUGE, id="-4301 digits"),
    pytest.param("lone \ud800 surrogate", id="lone surrogate"),
]


@pytest.mark.parametrize("value", NOT_JSON)
def test_a_non_json_value_is_refused_in_a_model(value: Any) -> None:
    refused(call({"x": value}), "$.params.arguments.x")
    result = old.CallToolResult(content=[], structured_content={"k": [value]})
    refused(reply(3, result), "$.result.structuredContent.k[0]")
    # Unknown members given from Python are checked when given (pydantic keeps
    # them as they are), by construction, validation and assignment alike.
    refused_when_built(lambda: old.PingRequest(id=1, params={"extra": value}), "$.params.extra")
    refused_when_built(
        lambda: old.PingRequest.model_validate(
            {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"extra": value}}
        ),
        "$.params.extra",
    )
    ping = old.PingRequest(id=1, params={})

    def assign() -> old.PingRequest:
        ping.params.extra = value  # type: ignore[union-attr]
        return ping

    refused_when_built(assign, "extra")


@pytest.mark.parametrize("value", NOT_JSON)
def test_a_non_json_value_is_refused_in_a_mapping(value: Any) -> None:
    refused({"jsonrpc": "2.0", "id": 1, "result": {"x": value}}, "$.result.x")


def test_a_non_string_key_is_refused() -> None:
    refused(call({"counts": {1: 2}}), "$.params.arguments.counts")
    refused({"result": {"counts": {None: 2}}}, "$.result.counts")


def test_a_typed_member_assigned_a_wrong_value_is_refused() -> None:
    request = call({})
    with pytest.raises(ValueError):
        request.params.name = {"a", "b"}  # type: ignore[assignment]
    # pydantic's model_copy validates no update; the models' own validates each.
    with pytest.raises(ValueError):
        request.params.model_copy(update={"name": b"t"})
    # model_construct trusts its input, but untyped members are still checked.
    built = old.CallToolRequestParams.model_construct(name="t", arguments={"x": {1}})
    refused(built, "$.arguments.x")


def test_an_integer_of_4300_digits_is_written() -> None:
    largest = 10**4300 - 1
    assert json.loads(encode({"result": {"n": largest}})) == {"result": {"n": largest}}
    refused({"result": {"n": largest + 1}}, "$.result.n")
    note = progress("2025-11-25", "tok", 1)
    note.params.progress = largest + 1
    refused(note, "$.params.progress")


def test_nesting_beyond_the_decode_limit_is_refused() -> None:
    deep: Any = "leaf"
    for _ in range(300):
        deep = [deep]
    assert "nested deeper than 201 levels" in refused({"result": {"x": deep}}, "$.result.x[0]")


def test_a_cycle_is_refused() -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    with pytest.raises(ValueError):
        encode({"result": loop})
    with pytest.raises(ValueError):
        encode(call({"x": loop}))


def test_tuples_and_subclasses_are_written_as_their_json() -> None:
    class Text(str):
        pass

    assert json.loads(encode(call({"x": (1, Text("a")), "y": True}))) == {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "t", "arguments": {"x": [1, "a"], "y": True}},
    }


def test_models_inside_a_mapping_are_written_by_their_own_rules() -> None:
    result = old.CallToolResult(content=[old.TextContent(text="hi")])
    written = json.loads(encode({"jsonrpc": "2.0", "id": 2, "result": result}))
    assert written == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {"content": [{"type": "text", "text": "hi"}]},
    }
    refused(
        {"result": old.CallToolResult(content=[], structured_content={"x": NAN})},
        "$.result.structuredContent.x",
    )


# -- Omittable members set to None -------------------------------------------------------


def test_an_omittable_member_set_to_none_is_left_out() -> None:
    tool = old.Tool(name="t", title="T", input_schema={"type": "object"})
    tool.title = None
    assert "title" not in json.loads(encode(tool))
    assert "title" not in tool.model_fields_set
    tool.title = "again"
    assert json.loads(encode(tool))["title"] == "again"


def test_an_omittable_member_given_none_by_copy_or_construct_is_left_out() -> None:
    tool = old.Tool(name="t", title="T", input_schema={"type": "object"})
    copied = tool.model_copy(update={"title": None})
    assert "title" not in json.loads(encode(copied))
    result = old.ListToolsResult(tools=[copied])
    assert "title" not in json.loads(encode(reply(1, result)))["result"]["tools"][0]


def test_a_nullable_member_keeps_its_null() -> None:
    assert json.loads(encode(reply(None, MethodNotFoundError())))["id"] is None
    answer = ErrorResponse[dict[str, Any]](id=None, error={"code": 1, "message": "m", "data": None})
    assert json.loads(encode(answer))["error"]["data"] is None
    assert json.loads(encode(call({"x": None})))["params"]["arguments"] == {"x": None}


# -- reply ---------------------------------------------------------------------------------


def test_reply_with_none_is_refused() -> None:
    with pytest.raises(TypeError, match="None"):
        reply(1, None)  # type: ignore[call-overload]


@pytest.mark.parametrize("to", [1.5, True, b"1", [1], object()])
def test_reply_to_something_that_is_no_request_or_id_is_a_type_error(to: Any) -> None:
    with pytest.raises(TypeError):
        reply(to, old.Result())
    with pytest.raises(TypeError):
        reply(to, InvalidParamsError())


@pytest.mark.parametrize("answer", [5, "text", [1], True])
def test_a_result_that_is_no_object_is_a_type_error(answer: Any) -> None:
    with pytest.raises(TypeError):
        reply(1, answer)


# -- member order ----------------------------------------------------------------------------


def keys(raw: bytes) -> list[str]:
    return list(json.loads(raw))


@pytest.mark.parametrize(
    "message",
    [
        old.PingRequest(id=1),
        old.CallToolRequest(id="a\\b", params={"name": "t"}),
        new.CallToolRequest(
            id=7,
            params={
                "name": "t",
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        ),
        v2024.ListRootsRequest(id=2),
        v2024.CallToolRequest(id='q"uote', params={"name": "t"}),
        v2024.ToolListChangedNotification(),
        v2024.ProgressNotification(params={"progressToken": 1, "progress": 1}),
        old.ProgressNotification(params={"progressToken": 1, "progress": 1}),
        reply(3, old.Result()),
        reply(3, InvalidParamsError()),
        old.PingRequest(id=4, vendor={"x": 1}),
    ],
    ids=lambda m: type(m).__name__,
)
def test_members_come_out_in_the_conventional_order(message: Any) -> None:
    written = keys(encode(message))
    expected = [k for k in ("jsonrpc", "id", "method", "params", "result", "error") if k in written]
    assert written[: len(expected)] == expected
    assert json.loads(encode(message)) == json.loads(
        type(message).__pydantic_serializer__.to_json(message, by_alias=True, exclude_unset=True)
    )


def test_a_decoded_message_comes_out_in_the_conventional_order() -> None:
    raw = b'{"params": {"name": "t"}, "method": "tools/call", "id": 1, "jsonrpc": "2.0", "x": 2}'
    assert keys(encode(decode(raw, version="2025-11-25"))) == [
        "jsonrpc",
        "id",
        "method",
        "params",
        "x",
    ]
    for version in ("2024-11-05", "2025-03-26", "2025-06-18"):
        assert keys(encode(decode(raw, version=version))) == [
            "jsonrpc",
            "id",
            "method",
            "params",
            "x",
        ]


def test_a_mapping_comes_out_in_the_conventional_order() -> None:
    raw = {"error": {"code": 1, "message": "m"}, "x": 1, "id": 2, "jsonrpc": "2.0"}
    assert keys(encode(raw)) == ["jsonrpc", "id", "error", "x"]
    assert keys(encode(InvalidParamsError().to_response(3))) == ["jsonrpc", "id", "error"]


def test_encode_takes_a_model_or_a_mapping() -> None:
    for value in (None, 5, "text", [1], b"{}"):
        with pytest.raises(TypeError):
            encode(value)  # type: ignore[arg-type]


def test_result_response_of_a_plain_result_is_checked() -> None:
    refused(ResultResponse(id=1, result={"x": {1}}), "$.result.x")


def test_nan_never_reads_back_as_null() -> None:
    # The symptom of the issue: before, NaN was written as null.
    for message in (call({"x": NAN}), reply(1, {"x": NAN})):
        with pytest.raises(ValueError):
            encode(message)
    assert not math.isnan(json.loads(encode(call({"x": 1.5})))["params"]["arguments"]["x"])


@pytest.mark.parametrize(
    "data", [{"text": "lone \ud800"}, {1: "int key"}, {"x": NAN}, {"s": {1, 2}}]
)
def test_an_error_response_is_always_writable(data: Any) -> None:
    response = InvalidParamsError("m", data).to_response(1)
    assert json.loads(encode(response))["error"]["data"] == {"truncated": True}


# -- subclasses that lie about their value ------------------------------------------------


class LyingFloat(float):
    """A NaN that says it is an ordinary number."""

    def __le__(self, other: object) -> bool:
        return True

    def __ge__(self, other: object) -> bool:
        return True

    def __lt__(self, other: object) -> bool:
        return True

    def __gt__(self, other: object) -> bool:
        return True

    def __float__(self) -> float:
        return 1.0


class HidingDict(dict):  # type: ignore[type-arg]
    """A dict whose Python-level views show nothing of what it holds."""

    def items(self) -> Any:
        return iter(())

    def values(self) -> Any:
        return iter(())

    def keys(self) -> Any:
        return iter(())

    def __iter__(self) -> Any:
        return iter(())


class HidingList(list):  # type: ignore[type-arg]
    def __iter__(self) -> Any:
        return iter(())


class UnhashableKey(str):
    armed = False

    def __hash__(self) -> int:
        if UnhashableKey.armed:
            raise RuntimeError("hash")
        return str.__hash__(self)

    def __eq__(self, other: object) -> bool:
        return str.__eq__(self, other)


class LyingStr(str):
    def encode(self, *args: Any, **kwargs: Any) -> bytes:
        return b"fine"

    def isidentifier(self) -> bool:
        raise RuntimeError("isidentifier")


class FakeFloat:
    """Not a float at all, though isinstance() says it is."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return float


def _liars() -> list[tuple[str, Any]]:
    hidden = HidingDict(x=NAN)
    key = UnhashableKey("k")
    keyed = {key: 1}
    return [
        ("float", LyingFloat(NAN)),
        ("infinite float", LyingFloat(INF)),
        ("hidden NaN", hidden),
        ("hidden set", HidingDict(s={1, 2})),
        ("hidden list item", HidingList([NAN])),
        (
            "hidden tuple item",
            type("HidingTuple", (tuple,), {"__iter__": lambda s: iter(())})((NAN,)),
        ),
        ("raising hash", keyed),
        ("lone surrogate", LyingStr("\ud800")),
        ("fake float", FakeFloat()),
    ]


@pytest.mark.parametrize("name", [name for name, _ in _liars()])
def test_a_lying_subclass_is_refused_or_written_as_its_real_value(name: str) -> None:
    value = dict(_liars())[name]
    for message in (
        lambda: {"jsonrpc": "2.0", "id": 1, "result": {"v": value}},
        lambda: call({"v": value}),
    ):
        UnhashableKey.armed = False
        try:
            built = message()
        except ValueError:
            continue  # refused when built: never reaches the wire
        UnhashableKey.armed = True
        try:
            out = encode(built)
        except ValueError as err:  # the typed refusal, naming where
            assert "$." in str(err), err
            continue
        finally:
            UnhashableKey.armed = False
        # Written: then it is JSON that decodes, and says what the value holds.
        assert b"NaN" not in out and b"Infinity" not in out and b"null" not in out, out
        decoded = json.loads(out)
        assert decoded == json.loads(encode(json.loads(out)))


def test_a_str_subclass_key_is_written_as_its_text() -> None:
    key = UnhashableKey("name")
    message = {"jsonrpc": "2.0", "id": 1, "result": {key: "x"}}
    UnhashableKey.armed = True
    try:
        out = encode(message)
    finally:
        UnhashableKey.armed = False
    assert json.loads(out) == {"jsonrpc": "2.0", "id": 1, "result": {"name": "x"}}


def test_an_int_subclass_is_written_as_its_int() -> None:
    class LyingInt(int):
        def __lt__(self, other: object) -> bool:
            return True

        def __gt__(self, other: object) -> bool:
            return True

    assert refused({"jsonrpc": "2.0", "id": 1, "result": {"v": LyingInt(HUGE)}}, "$.result.v")
    assert encode({"jsonrpc": "2.0", "id": 1, "result": {"v": LyingInt(7)}}).endswith(b'{"v":7}}')


def test_a_hiding_dict_as_the_message_is_written_as_what_it_holds() -> None:
    message = HidingDict(jsonrpc="2.0", id=1, result={})
    assert json.loads(encode(message)) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    refused(HidingDict(jsonrpc="2.0", id=1, result={"v": NAN}), "$.result.v")


_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),  # NaN and infinities among them: no JSON text
        st.text(max_size=4),
        st.sampled_from(["\ud800", b"x", {1}, datetime.date(2026, 7, 28)]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(st.text(max_size=3), st.integers()), inner, max_size=3),
    ),
    max_leaves=12,
)


@given(st.one_of(st.integers(), st.text(max_size=4)), _VALUES)
def test_a_composed_answer_is_written_as_encode_writes_it(rid: Any, result: Any) -> None:
    # The session's own envelope is not walked again: the bytes, and the
    # refusals, are encode's all the same.
    message = {"jsonrpc": "2.0", "id": rid, "result": result}
    try:
        expected: bytes | type[ValueError] = encode(message)
    except ValueError:
        expected = ValueError
    try:
        written: bytes | type[ValueError] = encode_answer(message)
    except ValueError:
        written = ValueError
    assert written == expected
