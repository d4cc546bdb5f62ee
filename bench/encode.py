"""What ``encode`` costs per message: ``python -m bench.encode``.

Every captured session in ``tests/data/captures`` (older versions included)
is decoded through one `Correlator` per session, in both views, and each
message is encoded again; the messages are also rebuilt in Python (through
their classes' constructors, as a server builds what it sends). Prints µs per
message, best of the repeats, next to ``json.dumps`` of the same parsed values
(the stdlib's C encoder: a floor that checks nothing a model knows).

Needs nothing beyond the development install (no orjson), so it runs before
and after a change to the encoder on the same footing.
"""

from __future__ import annotations

import argparse
import functools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from bench import timing
from mcp_schema import codec
from mcp_schema.errors import McpError

CAPTURES = Path(__file__).resolve().parent.parent / "tests" / "data" / "captures"
_SENDER: dict[str, codec.Sender] = {"c2s": "client", "s2c": "server"}


def captured(view: str) -> list[Any]:
    """Every valid captured message, decoded in ``view`` (``decode`` or ``decode_dict``)."""
    messages: list[Any] = []
    for path in sorted(CAPTURES.rglob("*.jsonl")):
        correlator = codec.Correlator(allow_unknown_methods=True)
        decode = getattr(correlator, view)
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if not isinstance(record.get("message"), dict):
                continue  # a raw (broken) frame
            raw = json.dumps(record["message"]).encode()
            try:
                messages.append(decode(raw, sender=_SENDER[record["dir"]]))
            except McpError:
                continue  # the captures hold a few refused messages on purpose
    return messages


def rebuilt(model: Any) -> Any:
    """``model`` built again through its class's constructor, as Python code would."""
    if not isinstance(model, BaseModel):
        return model
    fields = {
        name: rebuilt(getattr(model, name))
        for name in model.model_fields_set
        if name in type(model).model_fields
    }
    return type(model)(**fields, **(model.model_extra or {}))


def _sequence(calls: Sequence[Callable[[], object]]) -> Callable[[], None]:
    def run() -> None:
        for call in calls:
            call()

    return run


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.encode")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--budget", type=float, default=0.05, help="seconds per repeat")
    args = parser.parse_args(argv)
    models = captured("decode")
    dicts = captured("decode_dict")
    built = [rebuilt(m) for m in models]
    assert [codec.encode(m) for m in built] == [codec.encode(m) for m in models]
    plain = [json.loads(codec.encode(m)) for m in models]
    dumps = functools.partial(json.dumps, separators=(",", ":"), ensure_ascii=False)
    calls = {
        "json.dumps (floor)": _sequence([functools.partial(dumps, m) for m in plain]),
        "encode, decoded models": _sequence([functools.partial(codec.encode, m) for m in models]),
        "encode, models built in Python": _sequence(
            [functools.partial(codec.encode, m) for m in built]
        ),
        "encode, decoded dicts": _sequence([functools.partial(codec.encode, m) for m in dicts]),
    }
    results = timing.compare(calls, repeats=args.repeats, budget=args.budget)
    size = sum(len(codec.encode(m)) for m in models) / len(models)
    print(f"{len(models)} captured messages ({size:.0f} bytes each on average); µs per message")
    floor = results["json.dumps (floor)"].best
    for name, t in results.items():
        per = t.best / len(models) * 1e6
        median = t.median / len(models) * 1e6
        print(f"  {name:<32} {per:6.2f} (median {median:6.2f})  {t.best / floor:4.1f}x floor")


if __name__ == "__main__":
    main()
