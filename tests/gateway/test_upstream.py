"""`mcp_schema.gateway.monitor.upstream.Upstream`, through the `ExchangeValidator`
that holds it: what the validator learns of its upstream (the extensions it
declares, the versions it serves per request) from its probe and from the
answers it reads, and what that decides: whether a task answers a call,
what a refusal of an unknown version lists, which of a ``tasks/update``'s
answers are not the gateway's to refuse."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_schema.codec import TASKS_EXTENSION
from mcp_schema.gateway import Exchange, ExchangeValidator
from mcp_schema.gateway.probe import Served
from mcp_schema.versions import STATELESS_VERSIONS, SUPPORTED_VERSIONS
from tests.hostile import META, raw

HEADERS = {"content-type": "application/json", "mcp-protocol-version": "2026-07-28"}
JSON = [("content-type", "application/json")]
TASKS: dict[str, Any] = {"extensions": {TASKS_EXTENSION: {}}}
DECLARING = {**META, "io.modelcontextprotocol/clientCapabilities": TASKS}
TASK = {
    "resultType": "task",
    "taskId": "t1",
    "status": "working",
    "createdAt": "2026-01-01T00:00:00Z",
    "lastUpdatedAt": "2026-01-01T00:00:00Z",
    "ttlMs": None,
}
COMPLETE = {"resultType": "complete", "content": [{"type": "text", "text": "done"}]}


def posted(
    validator: ExchangeValidator, method: str, params: dict[str, Any], rid: Any = 1
) -> Exchange:
    message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    headers = {**HEADERS, "mcp-method": method}
    if method == "tools/call":
        headers["mcp-name"] = params["name"]
    elif method.startswith("tasks/"):
        headers["mcp-name"] = str(params["taskId"])
    return validator.request("POST", headers, raw(message))


def answered(exchange: Exchange, result: Any, rid: Any = 1) -> dict[str, Any] | None:
    exchange.head(200, JSON)
    report = exchange.answer(raw({"jsonrpc": "2.0", "id": rid, "result": result}))
    return None if report is None else dict(report)


def discovered(validator: ExchangeValidator, result: dict[str, Any]) -> None:
    """The upstream's ``server/discover`` answer, read by ``validator``."""
    exchange = posted(validator, "server/discover", {"_meta": META}, rid=100)
    assert exchange.refusal is None, exchange.reports
    assert answered(exchange, {"resultType": "complete", **result}, rid=100) is None


def discover_result(capabilities: dict[str, Any], versions: list[str]) -> dict[str, Any]:
    return {
        "supportedVersions": versions,
        "capabilities": capabilities,
        "cacheScope": "public",
        "ttlMs": 0,
    }


def call(validator: ExchangeValidator, meta: dict[str, Any] = DECLARING) -> Exchange:
    exchange = posted(validator, "tools/call", {"_meta": meta, "name": "slow", "arguments": {}})
    assert exchange.refusal is None, exchange.reports
    return exchange


# -- the Tasks extension ----------------------------------------------------------------


def test_a_task_answers_a_declaring_call_once_the_upstream_declared_the_extension() -> None:
    validator = ExchangeValidator()
    discovered(validator, discover_result({"tools": {}, **TASKS}, ["2026-07-28"]))
    assert validator.upstream.declared == frozenset({TASKS_EXTENSION})
    assert answered(call(validator), TASK) is None
    assert answered(call(validator), COMPLETE) is None  # a call may still complete at once


def test_a_task_answers_a_declaring_call_when_the_probe_found_the_extension() -> None:
    served = Served(("2026-07-28",), False, {"tools": {}, **TASKS}, discovered=True)
    assert served.extensions == frozenset({TASKS_EXTENSION})
    validator = ExchangeValidator(served=served)
    assert answered(call(validator), TASK) is None


def test_a_task_answers_a_declaring_call_before_anything_is_known_of_the_upstream() -> None:
    validator = ExchangeValidator()
    assert validator.upstream.declared is None
    assert answered(call(validator), TASK) is None


def test_an_initialize_answer_declaring_the_extension_adds_it() -> None:
    validator = ExchangeValidator()
    discovered(validator, discover_result({"tools": {}}, ["2026-07-28"]))
    assert validator.upstream.declared == frozenset()
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"},
    }
    message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
    exchange = validator.request("POST", {"content-type": "application/json"}, raw(message))
    result = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}, **TASKS},
        "serverInfo": {"name": "s", "version": "1"},
    }
    exchange.head(200, [*JSON, ("mcp-session-id", "s1")])
    assert exchange.answer(raw({"jsonrpc": "2.0", "id": 0, "result": result})) is None
    assert validator.upstream.declared == frozenset({TASKS_EXTENSION})


def test_a_task_answering_a_call_that_did_not_declare_the_extension_is_reported() -> None:
    validator = ExchangeValidator()
    discovered(validator, discover_result({"tools": {}, **TASKS}, ["2026-07-28"]))
    report = answered(call(validator, META), TASK)
    assert report is not None and report["direction"] == "server->client"
    assert "the request does not declare it in its client capabilities" in report["message"]
    assert answered(call(validator, META), COMPLETE) is None


def test_a_task_from_an_upstream_that_does_not_declare_the_extension_is_reported() -> None:
    validator = ExchangeValidator()
    discovered(validator, discover_result({"tools": {}}, ["2026-07-28"]))
    report = answered(call(validator), TASK)
    assert report is not None
    assert "does not declare it" in report["message"] and "--tasks" in report["message"]


def test_the_extensions_given_are_read_whatever_is_declared() -> None:
    validator = ExchangeValidator(extensions=[TASKS_EXTENSION])
    discovered(validator, discover_result({"tools": {}}, ["2026-07-28"]))
    assert answered(call(validator, META), TASK) is None
    assert answered(call(validator), TASK) is None


def test_a_body_naming_the_extension_elsewhere_does_not_declare_it() -> None:
    validator = ExchangeValidator()
    arguments = {"note": TASKS_EXTENSION}
    params = {"_meta": META, "name": "slow", "arguments": arguments}
    exchange = posted(validator, "tools/call", params)
    assert exchange.refusal is None
    assert TASKS_EXTENSION not in exchange.correlator.extensions
    assert answered(exchange, TASK) is not None


# -- a tasks/update's answers -------------------------------------------------------------


def update(validator: ExchangeValidator, responses: dict[str, Any], **more: Any) -> Exchange:
    params = {"_meta": DECLARING, "taskId": "t1", "inputResponses": responses, **more}
    return posted(validator, "tasks/update", params)


ACCEPTED = {"action": "accept", "content": {"name": "x"}}


@given(
    st.dictionaries(
        st.text(min_size=1, max_size=8),
        st.one_of(
            st.none(),
            st.integers(),
            st.text(max_size=8),
            st.dictionaries(st.sampled_from(["ignored", "x"]), st.booleans(), max_size=2),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_a_tasks_update_answer_that_is_no_input_response_is_the_upstreams_to_judge(
    unread: dict[str, Any],
) -> None:
    exchange = update(ExchangeValidator(), {"asked": ACCEPTED, **unread})
    assert TASKS_EXTENSION in exchange.correlator.extensions  # read as the extension's
    assert exchange.refusal is None and exchange.reports == []
    assert exchange.rpc_method == "tasks/update" and exchange.request_id == 1


@pytest.mark.parametrize(
    ("params", "found"),
    [
        ({"taskId": "t1", "inputResponses": [ACCEPTED]}, "$.params.inputResponses"),
        ({"taskId": 7, "inputResponses": {"unknown-key": {"ignored": True}}}, "taskId"),
    ],
)
def test_a_tasks_update_is_still_refused_for_what_is_the_gateways_to_judge(
    params: dict[str, Any], found: str
) -> None:
    exchange = posted(ExchangeValidator(), "tasks/update", {"_meta": DECLARING, **params})
    assert exchange.refusal is not None and exchange.refusal.status == 400
    [report] = exchange.reports
    assert report["code"] == -32602 and found in report["message"]
    assert "unknown-key" not in report["message"]


def test_a_tasks_update_without_the_extension_in_use_is_read_as_any_method() -> None:
    params = {"_meta": META, "taskId": "t1", "inputResponses": {"k": 1}}
    exchange = posted(ExchangeValidator(), "tasks/update", params)
    assert exchange.refusal is None and exchange.reports == []


# -- versions --------------------------------------------------------------------------


def unknown_version(validator: ExchangeValidator, named: Any, header: str) -> dict[str, Any]:
    """The refusal of a discover naming ``named`` in its ``_meta`` under the
    ``MCP-Protocol-Version`` ``header``: its JSON-RPC error."""
    meta = {**META, "io.modelcontextprotocol/protocolVersion": named}
    message = {"jsonrpc": "2.0", "id": 301, "method": "server/discover", "params": {"_meta": meta}}
    headers = {**HEADERS, "mcp-protocol-version": header, "mcp-method": "server/discover"}
    exchange = validator.request("POST", headers, raw(message))
    assert exchange.refusal is not None and exchange.refusal.status == 400
    [report] = exchange.reports
    body = json.loads(exchange.refusal.body)
    assert body["id"] == 301 and report["code"] == body["error"]["code"]
    error: dict[str, Any] = body["error"]
    return error


def test_an_unknown_version_is_refused_listing_what_the_upstream_serves_per_request() -> None:
    validator = ExchangeValidator()
    discovered(validator, discover_result({"tools": {}}, ["2026-07-28", "2025-11-25"]))
    assert validator.upstream.versions == ("2026-07-28",)
    error = unknown_version(validator, "v999.0.0", "v999.0.0")
    assert error["code"] == -32022
    assert error["data"] == {"requested": "v999.0.0", "supported": ["2026-07-28"]}


def test_before_the_upstream_is_known_the_refusal_lists_the_versions_served_per_request() -> None:
    error = unknown_version(ExchangeValidator(), "v999.0.0", "v999.0.0")
    assert error["data"]["supported"] == list(reversed(STATELESS_VERSIONS))


def test_a_null_version_is_refused_as_null() -> None:
    error = unknown_version(ExchangeValidator(), None, "2026-07-28")
    assert error["code"] == -32022 and error["data"]["requested"] == "null"


@given(
    named=st.text(max_size=12).filter(lambda v: v not in SUPPORTED_VERSIONS),
    header=st.sampled_from([*SUPPORTED_VERSIONS, "v999.0.0", "2026-07-29"]),
)
def test_a_header_naming_another_version_than_an_unknown_one_is_minus_32020_first(
    named: str, header: str
) -> None:
    validator = ExchangeValidator(served=Served(("2026-07-28",), True, {}, discovered=True))
    error = unknown_version(validator, named, header)
    if header == named:
        assert error["code"] == -32022 and error["data"]["supported"] == ["2026-07-28"]
    else:
        assert error["code"] == -32020 and error["data"]["header"] == "MCP-Protocol-Version"


@pytest.mark.parametrize(
    ("served", "versions", "declared"),
    [
        (Served(("2026-07-28",), True, {**TASKS}, discovered=True), ("2026-07-28",), True),
        (Served(("2026-07-28",), True), ("2026-07-28",), None),  # a -32022 listed them
        (Served((), True), None, None),  # the handshake era alone
    ],
)
def test_what_a_probe_teaches(
    served: Served, versions: tuple[str, ...] | None, declared: bool | None
) -> None:
    validator = ExchangeValidator()
    validator.learn(served)
    assert validator.upstream.versions == versions
    found = validator.upstream.declared
    assert (None if found is None else TASKS_EXTENSION in found) == declared
