"""Where ``codec.decode`` spends its time: ``python -m bench.breakdown``.

Times the codec's stages separately on a few workloads. It reaches into the
codec's private helpers (``_reject_non_json_numbers``, ``_sniff``, the cached
adapters), so it is a diagnostic that may need updating when the codec
changes; ``python -m bench`` does not depend on it.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import orjson

from bench import timing
from bench.workloads import Msg, Workload, examples, synthetic
from mcp_schema import codec


def _stages(msg: Msg) -> dict[str, Callable[[], object]]:
    c: Any = codec
    raw = msg.raw
    sniffed = c._sniff(raw)
    version = msg.version
    if msg.kind == "result":
        final: Callable[[bytes], object] = c._result_adapter(
            version, msg.method or "", frozenset(), False
        ).validate_json
    elif msg.kind == "error":
        final = c._error_adapter(version).validate_json
    else:
        requests, notifications = c._tables(version, frozenset())
        table = requests if msg.kind == "request" else notifications
        entry = table[sniffed.method]
        cls = entry.request if msg.kind == "request" else entry.notification
        final = cls.model_validate_json
    decoded = codec.decode(raw, version=version, method=msg.method)
    return {
        "orjson.loads (floor)": functools.partial(orjson.loads, raw),
        "decode (total)": functools.partial(codec.decode, raw, version=version, method=msg.method),
        "  NaN/Infinity check": functools.partial(c._reject_non_json_numbers, raw),
        "  envelope sniff": functools.partial(c._sniff, raw),
        "  final validate_json": functools.partial(final, raw),
        "encode (total)": functools.partial(codec.encode, decoded),
        "  encode, warnings off": functools.partial(_quiet_encode, decoded),
    }


def _quiet_encode(message: codec.Message) -> bytes:
    return type(message).__pydantic_serializer__.to_json(
        message, by_alias=True, exclude_unset=True, warnings=False
    )


def report(workload: Workload) -> None:
    msg = workload.messages[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        codec.encode(codec.decode(msg.raw, version=msg.version, method=msg.method))
    results = timing.compare(_stages(msg), repeats=5, budget=0.01)
    floor = results["orjson.loads (floor)"].best
    print(
        f"\n{workload.name} ({len(msg.raw):,} bytes)"
        + (f"  [encode warns: {caught[0].category.__name__}]" if caught else "")
    )
    for name, t in results.items():
        print(f"  {name:<26} {t.best * 1e6:10.2f} µs  {t.best / floor:6.1f}x floor")


def main() -> None:
    chosen = [
        w
        for w in examples()
        if w.name.startswith(
            ("ex:CallToolRequest", "ex:CallToolResultResponse", "ex:CancelledNotification")
        )
    ]
    for workload in [*chosen, *synthetic()]:
        report(workload)


if __name__ == "__main__":
    main()
