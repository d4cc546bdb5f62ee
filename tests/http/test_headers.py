"""Tests for mcp_schema.http_headers (MCP 2026-07-28 Streamable HTTP headers)."""

from __future__ import annotations

import copy
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field

from mcp_schema.errors import HeaderMismatchError, clip
from mcp_schema.http_headers import (
    InvalidToolHeaderError,
    _adds_none,
    _check_expected,
    _expected_headers,
    _mirrored,
    check_request_headers,
    decode_header_value,
    encode_header_value,
    received_headers,
    request_headers,
    validate_tool_headers,
)
from mcp_schema.tool_headers import tool_headers

VERSION = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": VERSION}

TOOL: dict[str, Any] = {
    "name": "deploy",
    "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "replicas": {"type": "integer", "x-mcp-header": "Replicas"},
            "dryRun": {"type": "boolean", "x-mcp-header": "Dry-Run"},
            "owner": {"type": "string", "x-mcp-header": "Owner"},
            "team": {"type": "string", "x-mcp-header": "Team"},
            "target": {
                "type": "object",
                "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}},
            },
            "note": {"type": "string"},
        },
    },
}


def call(arguments: dict[str, Any], name: str = "deploy") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": dict(META)},
    }


ARGS: dict[str, Any] = {
    "region": "us-west1",
    "replicas": 3,
    "dryRun": False,
    "team": None,  # null: no header
    "target": {"zone": "Zürich"},
    "note": "not mirrored",
}  # "owner" absent: no header

EXPECTED_HEADERS = {
    "MCP-Protocol-Version": VERSION,
    "Mcp-Method": "tools/call",
    "Mcp-Name": "deploy",
    "Mcp-Param-Region": "us-west1",
    "Mcp-Param-Replicas": "3",
    "Mcp-Param-Dry-Run": "false",
    "Mcp-Param-Zone": "=?base64?WsO8cmljaA==?=",
}


def plain_safe(value: str) -> bool:
    """Independent statement of the spec's plain-value rule."""
    chars_ok = all(0x21 <= ord(c) <= 0x7E or c in " \t" for c in value)
    edges_ok = value[:1] not in (" ", "\t") and value[-1:] not in (" ", "\t")
    looks_encoded = value.startswith("=?base64?") and value.endswith("?=")
    return chars_ok and edges_ok and not looks_encoded


# -- encoding ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "wire"),
    [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ],
)
def test_spec_encoding_examples(value: str, wire: str) -> None:
    assert encode_header_value(value) == wire
    assert decode_header_value(wire) == value


@pytest.mark.parametrize("value", ["", "a b", "tab\tinside", "!~", "=?base64?x", "x?="])
def test_plain_values_are_unchanged(value: str) -> None:
    assert encode_header_value(value) == value
    assert decode_header_value(value) == value


@pytest.mark.parametrize(
    "value", ["trailing\t", "\tleading", "del\x7f", "nul\x00", "é", "=?base64?="]
)
def test_unsafe_values_are_encoded(value: str) -> None:
    wire = encode_header_value(value)
    assert wire.startswith("=?base64?") and wire.endswith("?=")
    assert decode_header_value(wire) == value


def test_encoded_empty_payload_decodes_to_empty_string() -> None:
    assert decode_header_value("=?base64??=") == ""


@pytest.mark.parametrize(
    "wire",
    [
        "héllo",  # raw non-ASCII
        "a\nb",  # raw control character
        "bell\x07",
        " leading-space",  # would have been stripped by HTTP; an encoder never sends it
        "=?base64?not base64!?=",
        "=?base64?SGk?=",  # missing padding
        "=?base64?/w==?=",  # valid base64, invalid UTF-8
        "=?base64?=",  # the markers overlap: no payload at all
        "=?base64?SGVsbG8=\n?=",
    ],
)
def test_decode_rejects_invalid_values(wire: str) -> None:
    with pytest.raises(HeaderMismatchError) as info:
        decode_header_value(wire)
    assert info.value.code == -32020
    # The raw value, escaped onto one line and cut (it is a peer's text).
    assert info.value.data == {"reason": "invalid", "received": clip(wire)}


def test_encode_rejects_lone_surrogate() -> None:
    with pytest.raises(UnicodeEncodeError):
        encode_header_value("\ud800")


# Strings near the edges of the rule, which plain st.text() would rarely produce.
tricky_text = st.lists(
    st.sampled_from(["=?base64?", "?=", " ", "\t", "\n", "\x7f", "a", "=", "?", "é", "世", "~"]),
    max_size=6,
).map("".join)
any_text = st.text() | tricky_text


@given(any_text)
def test_round_trip_property(value: str) -> None:
    wire = encode_header_value(value)
    assert decode_header_value(wire) == value
    assert (wire == value) == plain_safe(value)
    # What goes on the wire is always itself a plain, transmittable value.
    assert all(0x20 <= ord(c) <= 0x7E or c == "\t" for c in wire)


# -- request_headers -------------------------------------------------------------------------


def test_tools_call_headers() -> None:
    assert request_headers(call(ARGS), TOOL) == EXPECTED_HEADERS


def test_tools_call_without_tool_has_no_param_headers() -> None:
    assert request_headers(call(ARGS)) == {
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "deploy",
    }


def test_param_values_are_rendered_and_encoded() -> None:
    headers = request_headers(
        call({"region": "Hello, 世界", "replicas": 42.0, "dryRun": True, "owner": ""}), TOOL
    )
    assert headers["Mcp-Param-Region"] == "=?base64?SGVsbG8sIOS4lueVjA==?="
    assert headers["Mcp-Param-Replicas"] == "42"
    assert headers["Mcp-Param-Dry-Run"] == "true"
    assert headers["Mcp-Param-Owner"] == ""  # empty is present, not absent
    assert "Mcp-Param-Team" not in headers
    assert "Mcp-Param-Zone" not in headers  # parent object absent


def test_non_scalar_argument_is_refused() -> None:
    with pytest.raises(ValueError, match="Mcp-Param-Region"):
        request_headers(call({"region": ["a", "b"]}), TOOL)


def test_prompts_get_name() -> None:
    request = {
        "jsonrpc": "2.0",
        "id": "p",
        "method": "prompts/get",
        "params": {"name": "summarize", "_meta": dict(META)},
    }
    assert request_headers(request) == {
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": "prompts/get",
        "Mcp-Name": "summarize",
    }


def test_resources_read_name_is_uri_and_encoded_when_non_ascii() -> None:
    request: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "resources/read",
        "params": {"uri": "file:///tmp/世界.txt", "_meta": dict(META)},
    }
    headers = request_headers(request)
    assert headers["Mcp-Name"] == "=?base64?ZmlsZTovLy90bXAv5LiW55WMLnR4dA==?="
    assert decode_header_value(headers["Mcp-Name"]) == "file:///tmp/世界.txt"
    request["params"]["uri"] = "file:///tmp/a.txt"
    assert request_headers(request)["Mcp-Name"] == "file:///tmp/a.txt"


def test_other_methods_have_no_name() -> None:
    request = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": META}}
    assert request_headers(request) == {"MCP-Protocol-Version": VERSION, "Mcp-Method": "tools/list"}


def test_notification_headers() -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/initialized", "params": {"_meta": META}}
    assert request_headers(note) == {
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": "notifications/initialized",
    }


@pytest.mark.parametrize("params", [None, {}, {"_meta": {}}, {"_meta": {"other": 1}}])
def test_no_protocol_version_in_body_omits_header(params: dict[str, Any] | None) -> None:
    note: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/cancelled"}
    if params is not None:
        note["params"] = params
    assert request_headers(note) == {"Mcp-Method": "notifications/cancelled"}
    check_request_headers({"Mcp-Method": "notifications/cancelled"}, note)


class Params(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    name: str
    arguments: dict[str, Any] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class Request(BaseModel):
    jsonrpc: str = "2.0"
    id: int
    method: str
    params: Params


class Tool(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    name: str
    input_schema: dict[str, Any] = Field(alias="inputSchema")


def test_pydantic_models_are_accepted() -> None:
    request = Request(
        id=1, method="tools/call", params=Params(name="deploy", arguments=ARGS, meta=dict(META))
    )
    tool = Tool(name="deploy", input_schema=TOOL["inputSchema"])
    assert request_headers(request, tool) == EXPECTED_HEADERS
    assert validate_tool_headers(tool) == validate_tool_headers(TOOL)
    check_request_headers(EXPECTED_HEADERS, request, tool)


def test_request_headers_validates_the_tool() -> None:
    bad = copy.deepcopy(TOOL)
    bad["inputSchema"]["properties"]["note"]["x-mcp-header"] = "region"
    with pytest.raises(InvalidToolHeaderError):
        request_headers(call(ARGS), bad)
    # Even when the method does not use the tool's parameters.
    with pytest.raises(InvalidToolHeaderError):
        request_headers({"jsonrpc": "2.0", "method": "tools/list"}, bad)


def test_tool_must_be_the_one_called() -> None:
    with pytest.raises(ValueError, match="not the one called"):
        request_headers(call(ARGS, name="other"), TOOL)
    with pytest.raises(ValueError, match="not the one called"):
        check_request_headers(EXPECTED_HEADERS, call(ARGS, name="other"), TOOL)


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "result": {}},  # a response, no method
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {}}},
        {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": 5}},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1]},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/list",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": 2026}},
        },
    ],
)
def test_malformed_body_raises_value_error(message: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        request_headers(message)
    with pytest.raises(ValueError):
        check_request_headers({}, message)


def test_non_model_request_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        request_headers(cast(Any, 42))


# -- check_request_headers: accepted ---------------------------------------------------------


def test_round_trip_headers_are_accepted() -> None:
    check_request_headers(request_headers(call(ARGS), TOOL), call(ARGS), TOOL)


@pytest.mark.parametrize("case", [str.lower, str.upper])
def test_header_names_are_case_insensitive(case: Any) -> None:
    headers = {case(name): value for name, value in EXPECTED_HEADERS.items()}
    check_request_headers(headers, call(ARGS), TOOL)


@pytest.mark.parametrize(
    ("header", "argument"), [("42", 42.0), ("42.0", 42), ("4.2e1", 42), ("42", 42), ("-0", 0)]
)
def test_integer_params_compare_numerically(header: str, argument: Any) -> None:
    headers = {**EXPECTED_HEADERS, "Mcp-Param-Replicas": header}
    check_request_headers(headers, call({**ARGS, "replicas": argument}), TOOL)


def test_unrelated_and_base64_headers_are_accepted() -> None:
    headers = {
        **EXPECTED_HEADERS,
        "Mcp-Name": "=?base64?ZGVwbG95?=",  # "deploy", needlessly but validly encoded
        "Content-Type": "application/json",
        "Mcp-Param-Unknown": "whatever",
    }
    check_request_headers(headers, call(ARGS), TOOL)


def test_version_header_is_optional_when_body_has_none() -> None:
    request = call(ARGS)
    del request["params"]["_meta"]
    headers = {k: v for k, v in EXPECTED_HEADERS.items() if k != "MCP-Protocol-Version"}
    check_request_headers(headers, request, TOOL)
    check_request_headers({**headers, "MCP-Protocol-Version": "2025-11-25"}, request, TOOL)


# -- check_request_headers: rejected ---------------------------------------------------------


def without(name: str) -> dict[str, str]:
    return {k: v for k, v in EXPECTED_HEADERS.items() if k != name}


def data(header: str, reason: str, expected: str | None, received: str | None) -> dict[str, Any]:
    return {"header": header, "reason": reason, "expected": expected, "received": received}


REJECTED: list[tuple[str, dict[str, str], dict[str, Any], dict[str, Any]]] = [
    (
        "missing version",
        without("MCP-Protocol-Version"),
        ARGS,
        data("MCP-Protocol-Version", "missing", VERSION, None),
    ),
    (
        "version mismatch",
        {**EXPECTED_HEADERS, "MCP-Protocol-Version": "2025-11-25"},
        ARGS,
        data("MCP-Protocol-Version", "mismatch", VERSION, "2025-11-25"),
    ),
    (
        "missing method",
        without("Mcp-Method"),
        ARGS,
        data("Mcp-Method", "missing", "tools/call", None),
    ),
    (
        "method case",
        {**EXPECTED_HEADERS, "Mcp-Method": "Tools/Call"},
        ARGS,
        data("Mcp-Method", "mismatch", "tools/call", "Tools/Call"),
    ),
    ("missing name", without("Mcp-Name"), ARGS, data("Mcp-Name", "missing", "deploy", None)),
    (
        "wrong name",
        {**EXPECTED_HEADERS, "Mcp-Name": "destroy"},
        ARGS,
        data("Mcp-Name", "mismatch", "deploy", "destroy"),
    ),
    (
        "missing param",
        without("Mcp-Param-Region"),
        ARGS,
        data("Mcp-Param-Region", "missing", "us-west1", None),
    ),
    (
        "missing nested param",
        without("Mcp-Param-Zone"),
        ARGS,
        data("Mcp-Param-Zone", "missing", "Zürich", None),
    ),
    (
        "mismatched param",
        {**EXPECTED_HEADERS, "Mcp-Param-Region": "eu-west1"},
        ARGS,
        data("Mcp-Param-Region", "mismatch", "us-west1", "eu-west1"),
    ),
    (
        "mismatched integer",
        {**EXPECTED_HEADERS, "Mcp-Param-Replicas": "4"},
        ARGS,
        data("Mcp-Param-Replicas", "mismatch", "3", "4"),
    ),
    (
        "non-numeric integer",
        {**EXPECTED_HEADERS, "Mcp-Param-Replicas": "three"},
        ARGS,
        data("Mcp-Param-Replicas", "mismatch", "3", "three"),
    ),
    (
        "mismatched boolean",
        {**EXPECTED_HEADERS, "Mcp-Param-Dry-Run": "False"},
        ARGS,
        data("Mcp-Param-Dry-Run", "mismatch", "false", "False"),
    ),
    (
        "param for null argument",
        {**EXPECTED_HEADERS, "Mcp-Param-Team": "core"},
        ARGS,
        data("Mcp-Param-Team", "unexpected", None, "core"),
    ),
    (
        "param for absent argument",
        {**EXPECTED_HEADERS, "Mcp-Param-Owner": "me"},
        ARGS,
        data("Mcp-Param-Owner", "unexpected", None, "me"),
    ),
    (
        "raw non-ASCII",
        {**EXPECTED_HEADERS, "Mcp-Param-Zone": "Zürich"},
        ARGS,
        data("Mcp-Param-Zone", "invalid", "Zürich", "Zürich"),
    ),
    (
        "raw control char",
        {**EXPECTED_HEADERS, "Mcp-Name": "deploy\r\n"},
        ARGS,
        data("Mcp-Name", "invalid", "deploy", "deploy\\r\\n"),  # escaped onto one line
    ),
    (
        "malformed base64",
        {**EXPECTED_HEADERS, "Mcp-Param-Zone": "=?base64?WsO8cmljaA=?="},
        ARGS,
        data("Mcp-Param-Zone", "invalid", "Zürich", "=?base64?WsO8cmljaA=?="),
    ),
    (
        "repeated field lines",
        {**EXPECTED_HEADERS, "mcp-name": "deploy"},
        ARGS,
        data("Mcp-Name", "mismatch", "deploy", "deploy, deploy"),
    ),
]


@pytest.mark.parametrize(
    ("headers", "arguments", "expected_data"),
    [case[1:] for case in REJECTED],
    ids=[case[0] for case in REJECTED],
)
def test_rejected_headers(
    headers: dict[str, str], arguments: dict[str, Any], expected_data: dict[str, Any]
) -> None:
    with pytest.raises(HeaderMismatchError) as info:
        check_request_headers(headers, call(arguments), TOOL)
    error = info.value
    assert error.code == -32020
    assert error.data == expected_data
    assert error.message.startswith(expected_data["header"])
    assert error.to_response(1)["error"]["code"] == -32020


# -- validate_tool_headers -------------------------------------------------------------------


def test_validate_tool_headers_maps_header_to_property_path() -> None:
    assert validate_tool_headers(TOOL) == {
        "Mcp-Param-Region": ("region",),
        "Mcp-Param-Replicas": ("replicas",),
        "Mcp-Param-Dry-Run": ("dryRun",),
        "Mcp-Param-Owner": ("owner",),
        "Mcp-Param-Team": ("team",),
        "Mcp-Param-Zone": ("target", "zone"),
    }


def test_valid_tokens_and_non_annotations() -> None:
    tool = {
        "name": "t",
        "inputSchema": {
            "type": "object",
            "properties": {
                "a": {"type": "string", "x-mcp-header": "!#$%&'*+-.^_`|~09azAZ"},
                # A property *named* x-mcp-header, and x-mcp-header inside instance data.
                "x-mcp-header": {"type": "string", "default": {"x-mcp-header": "Nope"}},
                "properties": {
                    "type": "object",
                    "properties": {"b": {"type": "boolean", "x-mcp-header": "B"}},
                },
                "c": {
                    "type": "object",
                    "const": {"x-mcp-header": "C"},
                    "enum": [{"x-mcp-header": "C"}],
                    "examples": [{"x-mcp-header": "C"}],
                },
            },
        },
    }
    assert validate_tool_headers(tool) == {
        "Mcp-Param-!#$%&'*+-.^_`|~09azAZ": ("a",),
        "Mcp-Param-B": ("properties", "b"),
    }


@pytest.mark.parametrize("tool", [{"name": "t"}, {"name": "t", "inputSchema": {"type": "object"}}])
def test_tool_without_annotations(tool: dict[str, Any]) -> None:
    assert validate_tool_headers(tool) == {}


def prop(schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": "t", "inputSchema": {"type": "object", "properties": {"p": schema}}}


def nested(where: dict[str, Any]) -> dict[str, Any]:
    return {"name": "t", "inputSchema": {"type": "object", **where}}


ANNOTATED = {"type": "string", "x-mcp-header": "Hidden"}

INVALID: list[tuple[str, dict[str, Any], str, str]] = [
    ("empty", prop({"type": "string", "x-mcp-header": ""}), "/properties/p", "is empty"),
    (
        "space",
        prop({"type": "string", "x-mcp-header": "a b"}),
        "/properties/p",
        "not an RFC 9110 token",
    ),
    (
        "colon",
        prop({"type": "string", "x-mcp-header": "a:b"}),
        "/properties/p",
        "not an RFC 9110 token",
    ),
    (
        "non-ASCII letter",
        prop({"type": "string", "x-mcp-header": "Région"}),
        "/properties/p",
        "not an RFC 9110 token",
    ),
    (
        "tab",
        prop({"type": "string", "x-mcp-header": "a\tb"}),
        "/properties/p",
        "control characters",
    ),
    (
        "newline",
        prop({"type": "string", "x-mcp-header": "a\n"}),
        "/properties/p",
        "control characters",
    ),
    (
        "DEL",
        prop({"type": "string", "x-mcp-header": "a\x7f"}),
        "/properties/p",
        "control characters",
    ),
    (
        "not a string",
        prop({"type": "string", "x-mcp-header": 5}),
        "/properties/p",
        "must be a string",
    ),
    (
        "number type",
        prop({"type": "number", "x-mcp-header": "N"}),
        "/properties/p",
        "it has type 'number'",
    ),
    (
        "object type",
        prop({"type": "object", "x-mcp-header": "N"}),
        "/properties/p",
        "it has type 'object'",
    ),
    (
        "type list",
        prop({"type": ["string", "null"], "x-mcp-header": "N"}),
        "/properties/p",
        "it has type ['string', 'null']",
    ),
    ("missing type", prop({"x-mcp-header": "N"}), "/properties/p", "it has no type"),
    (
        "duplicate",
        nested(
            {
                "properties": {
                    "a": {"type": "string", "x-mcp-header": "Region"},
                    "b": {"type": "string", "x-mcp-header": "REGION"},
                }
            }
        ),
        "/properties/b",
        "duplicates (case-insensitively) the one of property 'a'",
    ),
    (
        "nested duplicate",
        nested(
            {
                "properties": {
                    "a": {"type": "string", "x-mcp-header": "Region"},
                    "b": {
                        "type": "object",
                        "properties": {"c": {"type": "string", "x-mcp-header": "region"}},
                    },
                }
            }
        ),
        "/properties/b/properties/c",
        "duplicates",
    ),
    ("root", nested({"x-mcp-header": "Root"}), "", "root schema is not a property"),
    (
        "items",
        prop({"type": "array", "items": ANNOTATED}),
        "/properties/p/items",
        "through 'properties' alone",
    ),
    (
        "items object property",
        prop({"type": "array", "items": {"type": "object", "properties": {"q": ANNOTATED}}}),
        "/properties/p/items/properties/q",
        "through 'properties' alone",
    ),
    (
        "prefixItems",
        prop({"type": "array", "prefixItems": [ANNOTATED]}),
        "/properties/p/prefixItems/0",
        "through 'properties' alone",
    ),
    (
        "anyOf",
        prop({"anyOf": [ANNOTATED, {"type": "null"}]}),
        "/properties/p/anyOf/0",
        "through 'properties' alone",
    ),
    (
        "oneOf",
        nested({"oneOf": [{"properties": {"q": ANNOTATED}}]}),
        "/oneOf/0/properties/q",
        "through 'properties' alone",
    ),
    (
        "allOf",
        nested({"allOf": [{"properties": {"q": ANNOTATED}}]}),
        "/allOf/0/properties/q",
        "through 'properties' alone",
    ),
    (
        "not",
        prop({"type": "string", "not": ANNOTATED}),
        "/properties/p/not",
        "through 'properties' alone",
    ),
    (
        "if",
        nested({"if": {"properties": {"q": ANNOTATED}}}),
        "/if/properties/q",
        "through 'properties' alone",
    ),
    (
        "then",
        nested({"then": {"properties": {"q": ANNOTATED}}}),
        "/then/properties/q",
        "through 'properties' alone",
    ),
    (
        "else",
        nested({"else": {"properties": {"q": ANNOTATED}}}),
        "/else/properties/q",
        "through 'properties' alone",
    ),
    (
        "$defs",
        nested({"$defs": {"D": ANNOTATED}, "properties": {"p": {"$ref": "#/$defs/D"}}}),
        "/$defs/D",
        "through 'properties' alone",
    ),
    (
        "$ref sibling",
        prop({"$ref": {"x-mcp-header": "H", "type": "string"}}),
        "/properties/p/$ref",
        "through 'properties' alone",
    ),
    (
        "definitions",
        nested({"definitions": {"D": ANNOTATED}}),
        "/definitions/D",
        "through 'properties' alone",
    ),
    (
        "additionalProperties",
        nested({"additionalProperties": ANNOTATED}),
        "/additionalProperties",
        "through 'properties' alone",
    ),
    (
        "patternProperties",
        nested({"patternProperties": {"^a/b~": ANNOTATED}}),
        "/patternProperties/^a~1b~0",
        "through 'properties' alone",
    ),
    (
        "dependentSchemas",
        nested({"dependentSchemas": {"p": {"properties": {"q": ANNOTATED}}}}),
        "/dependentSchemas/p/properties/q",
        "through 'properties' alone",
    ),
    (
        "unknown keyword",
        nested({"x-vendor": {"deep": [ANNOTATED]}}),
        "/x-vendor/deep/0",
        "through 'properties' alone",
    ),
]


@pytest.mark.parametrize(
    ("tool", "pointer", "reason"), [case[1:] for case in INVALID], ids=[case[0] for case in INVALID]
)
def test_invalid_tool_annotations(tool: dict[str, Any], pointer: str, reason: str) -> None:
    with pytest.raises(InvalidToolHeaderError) as info:
        validate_tool_headers(tool)
    error = info.value
    assert error.path == pointer
    assert reason in error.reason
    assert str(error).startswith(f"invalid x-mcp-header at inputSchema{pointer}: ")
    assert isinstance(error, ValueError)


# -- issue 19: hostile header text -----------------------------------------------------------

HUGE_EXPONENT = "1e9999999999999999999"


@pytest.mark.parametrize("sent", [HUGE_EXPONENT, encode_header_value(HUGE_EXPONENT) + ""])
def test_an_integer_header_beyond_decimal_is_a_mismatch(sent: str) -> None:
    tool = {
        "name": "t",
        "inputSchema": {
            "type": "object",
            "properties": {"n": {"type": "integer", "x-mcp-header": "N"}},
        },
    }
    body = {"method": "tools/call", "params": {"name": "t", "arguments": {"n": 5}}}
    headers = {"Mcp-Method": "tools/call", "Mcp-Name": "t", "Mcp-Param-N": sent}
    with pytest.raises(HeaderMismatchError) as caught:
        check_request_headers(headers, body, tool)
    assert caught.value.data["reason"] == "mismatch"
    based = {**headers, "Mcp-Param-N": "=?base64?MWU5OTk5OTk5OTk5OTk5OTk5OTk5OQ==?="}
    with pytest.raises(HeaderMismatchError):
        check_request_headers(based, body, tool)


@pytest.mark.parametrize("name", ["lone \ud800 surrogate", "line\nbreak", "x" * 1_000_000])
def test_header_text_in_the_error_is_escaped_and_cut(name: str) -> None:
    from mcp_schema.codec import encode
    from mcp_schema.errors import MAX_QUOTED

    body = {"method": "tools/call", "params": {"name": name}}
    headers = {"Mcp-Method": "tools/call", "Mcp-Name": name + "?"}
    with pytest.raises(HeaderMismatchError) as caught:
        check_request_headers(headers, body)
    data = caught.value.data
    for key in ("expected", "received"):
        assert len(data[key]) <= MAX_QUOTED
        assert data[key].isprintable()
    assert b'"code":-32020' in encode(caught.value.to_response(1))


def test_a_lone_surrogate_in_a_decoded_header_value_can_be_answered() -> None:
    from mcp_schema.codec import encode

    with pytest.raises(HeaderMismatchError) as caught:
        decode_header_value("bad \udc00")
    assert caught.value.data["received"] == "bad \\udc00"
    encode(caught.value.to_response(None))


HEADER_VALUES = st.one_of(
    st.sampled_from(
        ["tools/call", "prompts/get", "ping", VERSION, "echo", " echo", "=?base64?eA==?="]
    ),
    st.text(max_size=6),
)
BODY_VALUES = st.one_of(HEADER_VALUES, st.none(), st.integers(), st.lists(st.none(), max_size=1))


@given(
    st.dictionaries(
        st.sampled_from(["mcp-protocol-version", "mcp-method", "mcp-name"]), HEADER_VALUES
    ),
    BODY_VALUES,
    st.one_of(st.none(), st.dictionaries(st.sampled_from(["name", "uri", "_meta"]), BODY_VALUES)),
    BODY_VALUES,
    st.booleans(),
)
def test_the_quick_agreement_check_agrees_with_the_full_one(
    received: dict[str, str], method: Any, params: Any, version: Any, required: bool
) -> None:
    # The common case is told without the list of expected headers: whatever
    # it lets through, the full check lets through too.
    if isinstance(params, dict) and version is not None:
        params = {**params, "_meta": {"io.modelcontextprotocol/protocolVersion": version}}
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    if _mirrored(received, message):
        _check_expected(received, _expected_headers(message, None), required)


@given(
    st.dictionaries(
        st.sampled_from(["mcp-protocol-version", "mcp-method", "mcp-name"]), HEADER_VALUES
    ),
    st.sampled_from(["tools/call", "prompts/get", "ping"]),
    st.sampled_from(["echo", " echo", "other"]),
    st.sampled_from(["echo", "other"]),
    st.booleans(),
)
def test_a_tool_without_param_headers_leaves_the_quick_check_whole(
    changed: dict[str, str], method: str, called: str, listed: str, required: bool
) -> None:
    # A tool read already, with no Mcp-Param-* header, adds nothing the quick
    # check misses: what both let through, the full check with the tool does too
    # (which refuses another tool's annotations: never let through quickly).
    tool = tool_headers({"name": listed, "inputSchema": {"type": "object"}})
    params = {"name": called, "_meta": META}
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    mirrored = {"mcp-protocol-version": VERSION, "mcp-method": method, "mcp-name": called}
    received = {**mirrored, **changed}  # the body's own headers, some sent otherwise
    if _adds_none(tool, message) and _mirrored(received, message):
        _check_expected(received, _expected_headers(message, tool), required)


class _Bytes(bytes):
    def decode(self, *args: Any, **kwargs: Any) -> str:
        return "overridden"


_FIELD = st.one_of(
    st.binary(max_size=4),
    st.sampled_from([b"Host", b"host", b"MCP-Name", b"mcp-name"]),
    st.binary(max_size=4).map(_Bytes),
)


@given(st.lists(st.tuples(_FIELD, _FIELD), max_size=6))
def test_asgi_header_pairs_are_read_as_the_walk_reads_them(
    pairs: list[tuple[bytes, bytes]],
) -> None:
    # The quick read of a server's pairs agrees with the walk of the same
    # pairs (given as a mapping's items), repeated names joined, subclasses
    # read by what they hold.
    walked: dict[str, str] = {}
    for name, value in pairs:
        key, text = bytes(name).decode("latin-1").lower(), bytes(value).decode("latin-1")
        walked[key] = text if key not in walked else f"{walked[key]}, {text}"
    assert received_headers(pairs) == walked
