"""`mcp_schema.server.tools` through a `Server`'s handler: definitions from
the type hints, arguments checked against the published ``inputSchema``
before the function runs, results and failures as the tools page says."""

from __future__ import annotations

import datetime
import json
import logging
from typing import Annotated, Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from mcp_schema import v2026_07_28 as mcp
from mcp_schema.errors import InvalidParamsError
from mcp_schema.http_headers import request_headers
from mcp_schema.server import Header, Server, ToolError, ToolResult
from mcp_schema.tool_headers import InvalidToolHeaderError
from tests.server.serving import Stateless, message, text


class Point(BaseModel):
    x: int
    y: int


class Weather(TypedDict):
    city: str
    degrees: float


def trial() -> tuple[Server, list[Any]]:
    """A server whose tools record what they were called with."""
    server = Server("tools-test")
    calls: list[Any] = []

    @server.tool()
    def lookup(
        city: Annotated[str, Field(description="Where"), Header("City")], days: int = 1
    ) -> Weather:
        """The weather of a city."""
        calls.append((city, days))
        return {"city": city, "degrees": 12.5}

    @server.tool()
    def when(at: datetime.date, point: Point) -> str:
        calls.append((at, point))
        return f"{at.isoformat()} at {point.x},{point.y}"

    @server.tool()
    def fail(why: str) -> str:
        if why == "tool":
            raise ToolError("told the model")
        if why == "protocol":
            raise InvalidParamsError("refused as a protocol error")
        raise RuntimeError(f"broke on {why}")

    @server.tool()
    def wrong() -> int:
        return "not an int"  # type: ignore[return-value]

    @server.tool()
    def chosen() -> ToolResult[Weather]:
        return ToolResult("12.5 in Oslo", {"city": "Oslo", "degrees": 12.5})

    @server.tool()
    def blocks() -> list[mcp.TextContent]:
        return [mcp.TextContent(text="one"), mcp.TextContent(text="two")]

    return server, calls


def test_a_tools_definition_comes_from_its_type_hints_and_docstring() -> None:
    server, _ = trial()
    lookup, when = server.tools.listed["tools"][:2]
    assert lookup["description"] == "The weather of a city."
    schema = lookup["inputSchema"]
    assert schema["required"] == ["city"] and schema["additionalProperties"] is False
    assert schema["properties"]["city"] == {
        "description": "Where",
        "title": "City",
        "type": "string",
        "x-mcp-header": "City",
    }
    assert schema["properties"]["days"]["default"] == 1
    assert lookup["outputSchema"]["required"] == ["city", "degrees"]  # the TypedDict, as it is
    assert when["inputSchema"]["properties"]["at"]["format"] == "date"
    assert "description" not in when
    assert when["outputSchema"]["properties"] == {"result": {"title": "Result", "type": "string"}}


def test_a_header_annotation_clients_would_refuse_stops_the_decoration() -> None:
    server = Server("bad-header")
    with pytest.raises(InvalidToolHeaderError, match="number"):

        @server.tool()
        def weigh(grams: Annotated[float, Header("Grams")]) -> None: ...


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"city": 42}, 'city: 42 is not of type "string"'),
        ({}, '"city" is a required property'),
        ({"city": "Oslo", "days": "abc"}, 'days: "abc" is not of type "integer"'),
        ({"city": "Oslo", "zone": "x"}, "'zone' was unexpected"),
    ],
)
def test_arguments_the_input_schema_refuses_are_a_tool_error_naming_them(
    arguments: dict[str, Any], named: str
) -> None:
    server, calls = trial()
    result = Stateless(server).call("lookup", **arguments)
    assert result["isError"] is True and named in text(result)
    assert text(result).startswith("Invalid arguments for tool lookup: ")
    assert calls == []  # the function never ran


def test_arguments_are_converted_by_their_annotations_once_checked() -> None:
    server, calls = trial()
    result = Stateless(server).call("when", at="2026-07-28", point={"x": 1, "y": 2})
    assert text(result) == "2026-07-28 at 1,2"
    assert calls == [(datetime.date(2026, 7, 28), Point(x=1, y=2))]
    assert Stateless(server).call("lookup", city="Oslo", days=2.0) == {
        "content": [{"type": "text", "text": '{"city":"Oslo","degrees":12.5}'}],
        "structuredContent": {"city": "Oslo", "degrees": 12.5},
        "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "tools-test", "version": "0.1.0"}},
    }
    assert calls[-1] == ("Oslo", 2) and isinstance(calls[-1][1], int)


def test_a_tool_chooses_its_content_beside_its_structured_value() -> None:
    server, _ = trial()
    chosen = Stateless(server).call("chosen")
    assert chosen["content"] == [{"type": "text", "text": "12.5 in Oslo"}]
    assert chosen["structuredContent"] == {"city": "Oslo", "degrees": 12.5}
    blocks = Stateless(server).call("blocks")
    assert [b["text"] for b in blocks["content"]] == ["one", "two"]
    assert (
        "structuredContent" not in blocks
        and "outputSchema" not in server.tools.tools["blocks"].definition
    )


def test_failures_are_error_results_and_unexpected_ones_are_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server, _ = trial()
    served = Stateless(server)
    told = served.call("fail", why="tool")
    assert (told["isError"], text(told)) == (True, "told the model")
    assert caplog.records == []  # a ToolError is the tool's answer, not a fault
    with caplog.at_level(logging.ERROR, logger="mcp_schema.server"):
        broke = served.call("fail", why="disk")
    assert text(broke) == "The tool fail failed: RuntimeError: broke on disk"
    (record,) = caplog.records
    assert record.getMessage() == "tool fail failed on request 7" and record.exc_info
    (refused,) = served.send(
        message("tools/call", {"name": "fail", "arguments": {"why": "protocol"}})
    )
    assert refused["error"]["code"] == -32602  # an McpError is the JSON-RPC error it is


def test_mask_errors_tells_the_client_only_that_the_tool_failed() -> None:
    server = Server("masked", mask_errors=True)

    @server.tool()
    def leak() -> str:
        raise RuntimeError("the password is hunter2")

    assert text(Stateless(server).call("leak")) == "The tool leak failed"


def test_a_value_the_output_schema_refuses_is_an_error_result() -> None:
    server, _ = trial()
    result = Stateless(server).call("wrong")
    assert result["isError"] is True and "outputSchema" in text(result)


def test_an_unknown_tool_is_invalid_params() -> None:
    server, _ = trial()
    (refused,) = Stateless(server).send(message("tools/call", {"name": "nope", "arguments": {}}))
    assert refused["error"]["code"] == -32602 and refused["error"]["data"] == {"name": "nope"}


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(st.dictionaries(st.sampled_from(["city", "days", "other"]), JSON, max_size=3))
def test_the_function_runs_exactly_when_the_published_schema_accepts(
    arguments: dict[str, Any],
) -> None:
    server, calls = trial()
    schema = server.tools.listed["tools"][0]["inputSchema"]
    accepted = jsonschema.Draft202012Validator(schema).is_valid(arguments)
    result = Stateless(server).call("lookup", **arguments)
    assert bool(calls) is accepted
    assert result.get("isError", False) is not accepted


def test_a_calls_mcp_param_headers_are_checked_against_its_arguments() -> None:
    server, calls = trial()
    served = server.asgi(env={}).endpoint
    tool = server.tools.tools["lookup"].definition
    value = message("tools/call", {"name": "lookup", "arguments": {"city": "Oslo"}})
    base = {"content-type": "application/json", "accept": "application/json"}

    def sent(**changed: str) -> dict[str, Any]:
        headers = {**base, **request_headers(value, tool), **changed}
        answer = served.handle("POST", "/mcp", headers, json.dumps(value).encode())
        found: dict[str, Any] = json.loads(answer.body)
        return found

    assert request_headers(value, tool)["Mcp-Param-City"] == "Oslo"
    assert text(sent()["result"]) == '{"city":"Oslo","degrees":12.5}'
    assert sent(**{"Mcp-Param-City": "Bergen"})["error"]["code"] == -32020
    assert calls == [("Oslo", 1)]  # the mismatch never reached the function
