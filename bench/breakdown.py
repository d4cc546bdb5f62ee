"""Where ``decode`` and ``decode_dict`` spend their time: ``python -m bench.breakdown``.

Times the stages of one message separately, over the captured sessions and a
``tools/call`` request: the floor, the hostile-input screen, the cheap looks
that route a message without sniffing it, pydantic's own validation of the
class (and TypedDict) the codec ends up with, and the two paths whole. It
reaches into the codec's private modules, so it is a diagnostic that may need
updating when the codec changes; ``python -m bench`` does not depend on it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import orjson

from bench import timing
from bench.peers import _exact_dict_validator, _exact_validator, version_to_name
from bench.workloads import Msg, sessions, tools_call_request
from mcp_schema import codec
from mcp_schema._codec import fast_path, screen
from mcp_schema.errors import McpError


def _stages(msg: Msg) -> dict[str, Callable[[], object]]:
    raw = msg.raw
    version = version_to_name(msg)
    return {
        "orjson.loads (floor)": functools.partial(orjson.loads, raw),
        "screen": functools.partial(screen.screen, raw),
        "guessed method or id": functools.partial(
            fast_path.guessed_method
            if msg.kind in ("request", "notification")
            else fast_path.guessed_id,
            raw,
        ),
        "pydantic exact class": functools.partial(_exact_validator(msg), raw),
        "pydantic exact TypedDict": functools.partial(_exact_dict_validator(msg), raw),
        "decode": functools.partial(codec.decode, raw, version=version, method=msg.method),
        "decode_dict": functools.partial(
            codec.decode_dict, raw, version=version, method=msg.method
        ),
    }


def report(name: str, messages: list[Msg]) -> None:
    totals: dict[str, float] = {}
    timed = 0
    for msg in messages:
        try:
            codec.decode(msg.raw, version=msg.version, method=msg.method)
        except McpError:
            continue  # the sessions hold a few refused messages on purpose
        timed += 1
        for stage, t in timing.compare(_stages(msg), repeats=5, budget=0.002).items():
            totals[stage] = totals.get(stage, 0.0) + t.best
    floor = totals["orjson.loads (floor)"]
    print(f"\n{name} ({len(messages)} messages; µs per message, best of 5)")
    for stage, seconds in totals.items():
        print(
            f"  {stage:<28} {seconds / len(messages) * 1e6:8.2f} µs  {seconds / floor:6.1f}x floor"
        )


def main() -> None:
    report("tools/call request", list(tools_call_request().messages))
    report("captured sessions", [m for w in sessions() for m in w.messages])


if __name__ == "__main__":
    main()
