"""Input rounds, the multi-round-trip requests of the stateless era
(hand-written runtime module): a server answers a call with an
input-required result (`input_required`), the client retries the call with
the answers and the ``requestState`` it was given (`retry_with_input`), and
the server checks that the retry answers what was asked (`check_input_responses`).

What a retry must be (the specification's multi-round-trip page): an answer
under a key that was asked is a result of the method asked under that key
(-32602 otherwise), keys that were not asked are ignored, and the call is
the same call (`same_call`: its params, as JSON values, apart from
``inputResponses``, ``requestState`` and ``_meta``). A missing answer is
the server's to ask again (`answered_inputs` says which).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from mcp_schema._args import check
from mcp_schema._codec.wire import wire_value
from mcp_schema.base import McpModel
from mcp_schema.capabilities import params_error, request_wire
from mcp_schema.errors import InvalidParamsError, error_list, quote
from mcp_schema.versions import protocol, unsupported, version_of

__all__ = ["check_input_responses", "input_required", "retry_with_input"]

RequestT = TypeVar("RequestT", bound=BaseModel)

INPUT_REQUIRED = "input_required"
"""The ``resultType`` of an input-required result, its tag among a version's result arms."""

INPUT_RESULTS: Mapping[str, str] = {
    "elicitation/create": "ElicitResult",
    "sampling/createMessage": "CreateMessageResult",
    "roots/list": "ListRootsResult",
}
"""The result class (in each version's models) that answers each input request."""

OUTSIDE_THE_CALL = frozenset(("inputResponses", "requestState", "_meta"))
"""The params a retry adds or changes: the rest is the call, which must not change."""


class InputRequired(Protocol):
    """An input-required result (``InputRequiredResult`` of any stateless-era version)."""

    @property
    def input_requests(self) -> Mapping[str, Any] | None: ...

    @property
    def request_state(self) -> str | None: ...


def retry_with_input(
    request: RequestT,
    result: InputRequired,
    responses: Mapping[str, BaseModel | Mapping[str, Any]],
    *,
    request_id: str | int | None = None,
) -> RequestT:
    """The retry of ``request`` answering ``result``'s input requests.

    ``responses`` is keyed like ``result.input_requests``: every request must be
    answered and nothing else. ``requestState`` is echoed unchanged; the retry
    gets ``request_id`` (a retry is a new JSON-RPC request) or keeps the id.
    """
    if not isinstance(result, BaseModel) or not hasattr(result, "input_requests"):
        raise TypeError(f"result must be an InputRequiredResult, not {type(result).__name__}")
    if not isinstance(responses, Mapping):
        raise TypeError(f"responses must be a mapping, not {type(responses).__name__}")
    check(request_id, (str, int), "request_id", none=True)
    asked = set(result.input_requests or {})
    answered = set(responses)
    if asked != answered:
        raise ValueError(
            f"input responses must answer exactly {sorted(asked)}; "
            f"missing {sorted(asked - answered)}, unknown {sorted(answered - asked)}"
        )
    message = request_wire(request)
    params = dict(message.get("params") or {})
    params["inputResponses"] = {
        key: wire_value(value, f"responses[{key!r}]") for key, value in responses.items()
    }
    if result.request_state is not None:
        params["requestState"] = result.request_state
    else:
        params.pop("requestState", None)
    message["params"] = params
    if request_id is not None:
        message["id"] = request_id
    try:
        return type(request).model_validate(message)
    except ValidationError as exc:
        raise params_error(exc, "$") from None


def input_required(
    version: str,
    requests: Mapping[str, BaseModel | Mapping[str, Any]],
    *,
    state: str | None = None,
) -> McpModel:
    """The ``InputRequiredResult`` of ``version`` asking the client ``requests``
    (keyed as its retry must answer them) and carrying ``state`` back to the
    server, which the retry echoes (the server side of `retry_with_input`).

    A version without input-required results, or a request it refuses, is a ``ValueError``.
    """
    check(version, str, "version")
    check(requests, Mapping, "requests")
    check(state, str, "state", none=True)
    compiled = protocol(version)
    if compiled is None:
        raise unsupported(version)
    model = compiled.load().result_arms.get(INPUT_REQUIRED)
    if model is None:
        raise ValueError(f"{version} has no input-required results")
    asked = {key: wire_value(value, f"requests[{key!r}]") for key, value in requests.items()}
    try:
        # Construction, not validation, so resultType takes its preset.
        return model(input_requests=asked, request_state=state)
    except ValidationError as exc:
        raise ValueError(f"{version} input-required result: {exc}") from None


def _mismatch(path: str, reason: str) -> InvalidParamsError:
    return InvalidParamsError(
        f"Invalid params: {path}: {reason}", error_list([{"path": path, "reason": reason}])
    )


def answered_inputs(
    responses: Mapping[str, Any], asked: Mapping[str, str], package: str
) -> tuple[dict[str, McpModel], list[str]]:
    """The answers to what was ``asked`` (key -> input request method), each a
    result of its method in the models ``package``, and the keys not answered.

    An answer its method's result refuses is -32602 naming its key; keys
    that were not asked are ignored.
    """
    models = importlib.import_module(package)
    answers: dict[str, McpModel] = {}
    missing: list[str] = []
    for key, method in asked.items():
        if key not in responses:
            missing.append(key)
            continue
        expected: type[McpModel] = getattr(models, INPUT_RESULTS[method])
        answer = responses[key]
        if not isinstance(answer, expected):
            try:
                answer = expected.model_validate(wire_value(answer, "answer"))
            except ValidationError as exc:
                where = f"$.params.inputResponses[{quote(key)}]"
                raise params_error(exc, where) from None
        answers[key] = answer
    return answers, missing


def check_input_responses(request: BaseModel, result: InputRequired) -> dict[str, Any]:
    """The input responses of ``request``, a retry answering ``result``, keyed
    as asked; an `InvalidParamsError` (-32602) when its ``requestState`` is
    not ``result``'s, an input request is not answered, or an answer is not
    a result of the method asked under its key. Answers to keys that were not
    asked are ignored.

    The mirror of `retry_with_input`: what one builds, the other accepts.
    """
    if not isinstance(result, BaseModel) or not hasattr(result, "input_requests"):
        raise TypeError(f"result must be an InputRequiredResult, not {type(result).__name__}")
    if not isinstance(request, BaseModel):
        raise TypeError(f"request must be a decoded request model, not {type(request).__name__}")
    params = getattr(request, "params", None)
    state = getattr(params, "request_state", None)
    if state != result.request_state:
        reason = (
            "missing" if state is None else "does not match the state of the input-required result"
        )
        raise _mismatch("$.params.requestState", reason)
    responses: Mapping[str, Any] = getattr(params, "input_responses", None) or {}
    asked = {key: _method_of(ask) for key, ask in (result.input_requests or {}).items()}
    compiled = version_of(type(request))
    core = None if compiled is None else protocol(compiled.version)
    if core is None:
        raise TypeError(f"{type(request).__name__} is not a request model of a protocol version")
    answers, missing = answered_inputs(responses, asked, core.package)
    if missing:
        listed = ", ".join(map(quote, sorted(missing)))
        raise _mismatch("$.params.inputResponses", f"no answer to {listed}")
    return answers


def _method_of(ask: object) -> str:
    method = ask.get("method") if isinstance(ask, Mapping) else getattr(ask, "method", None)
    assert isinstance(method, str) and method in INPUT_RESULTS  # the result's models say so
    return method


def same_call(original: BaseModel, retry: BaseModel) -> bool:
    """Whether ``retry`` is the call ``original`` was: the same params as JSON
    values, apart from those a retry adds or changes (`OUTSIDE_THE_CALL`)."""
    return _same(_call(original), _call(retry))


def _call(message: BaseModel) -> dict[str, Any]:
    params = wire_value(message, "message").get("params") or {}
    return {key: value for key, value in params.items() if key not in OUTSIDE_THE_CALL}


def _same(a: Any, b: Any) -> bool:
    """JSON equality: a boolean is no number, and 1 and 1.0 are one number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and a.keys() == b.keys()
            and all(_same(value, b[key]) for key, value in a.items())
        )
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, (int, float)):
        return isinstance(b, (int, float)) and a == b
    return type(a) is type(b) and a == b
