"""Where ``decode`` and ``decode_dict`` spend their time: ``python -m bench.breakdown``.

Times the stages of the one decode path separately, over the captured
sessions, a ``tools/call`` request and a 1 MiB ``resources/read`` result: the
floor, the duplicate-refusing parse alone, the number check (the glance of
the bytes below ``parse._WALK_FROM``, the walk of the value above), the
whole parse stage, jiter + jsonschema-rs alone (the reference), the route, each view's
validation of the routed message, pydantic's own validation of the exact
class, and the two public functions whole. It reaches into the codec's
private modules, so it is a diagnostic that may need updating when the codec
changes; ``python -m bench`` does not depend on it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jiter
import orjson

from bench import timing
from bench.peers import _exact_validator, version_to_name
from bench.workloads import Msg, resources_read_result, sessions, tools_call_request
from mcp_schema import codec
from mcp_schema._codec import parse, route, schemas, views
from mcp_schema.errors import McpError


def _stages(msg: Msg) -> dict[str, Callable[[], object]]:
    raw = msg.raw
    version = version_to_name(msg)
    known = route.Known(version=version, method=msg.method, allow_unknown_methods=True)
    value = parse.parse(raw)
    routed = route.route(value, known, None)
    number_check: Callable[[], object] = (
        functools.partial(parse._numbers_at_a_glance, raw)
        if len(raw) <= parse._WALK_FROM
        else functools.partial(parse._plain_floats, value)
    )
    checked = schemas.validator(routed.target)
    payload = "result" if routed.kind == "result" else "error" if routed.kind == "error" else None

    def reference() -> object:
        parsed = jiter.from_json(raw, catch_duplicate_keys=True, allow_inf_nan=False)
        return checked.is_valid(parsed if payload is None else parsed[payload])

    return {
        "orjson.loads (floor)": functools.partial(orjson.loads, raw),
        "jiter, duplicates refused": functools.partial(
            jiter.from_json, raw, catch_duplicate_keys=True, allow_inf_nan=False
        ),
        "number check": number_check,
        "parse stage": functools.partial(parse.parse, raw),
        "jiter + jsonschema-rs": reference,
        "route": functools.partial(route.route, value, known, None),
        "dict view (jsonschema-rs)": functools.partial(
            views.DICTS.message, routed, value, len(raw)
        ),
        "model view (pydantic)": functools.partial(views.MODELS.message, routed, value, len(raw)),
        "pydantic exact class": functools.partial(_exact_validator(msg), raw),
        "decode_dict": functools.partial(
            codec.decode_dict, raw, version=version, method=msg.method, allow_unknown_methods=True
        ),
        "decode": functools.partial(
            codec.decode, raw, version=version, method=msg.method, allow_unknown_methods=True
        ),
    }


def report(name: str, messages: list[Msg]) -> None:
    totals: dict[str, float] = {}
    timed = 0
    for msg in messages:
        try:
            stages = _stages(msg)
        except McpError:
            continue  # the sessions hold a few refused messages on purpose
        timed += 1
        for stage, t in timing.compare(stages, repeats=5, budget=0.002).items():
            totals[stage] = totals.get(stage, 0.0) + t.best
    floor = totals["orjson.loads (floor)"]
    print(f"\n{name} ({timed} messages; µs per message, best of 5)")
    for stage, seconds in totals.items():
        print(f"  {stage:<28} {seconds / timed * 1e6:8.2f} µs  {seconds / floor:6.1f}x floor")


def main() -> None:
    report("tools/call request", list(tools_call_request().messages))
    report("captured sessions", [m for w in sessions() for m in w.messages])
    report("resources/read result (1 MiB text)", list(resources_read_result().messages))


if __name__ == "__main__":
    main()
