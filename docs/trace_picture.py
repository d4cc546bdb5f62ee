"""``python docs/trace_picture.py TRACE.json [OUT.svg]``: the picture of a
real trace in ``docs/guide/observability.md``, drawn from exported spans.

TRACE.json is a list of spans as `tests.telemetry.exported` writes them
(one JSON object each: service, kind, name, start and end in nanoseconds,
attributes), parent first: what ``tests/telemetry/test_real_peers.py``
leaves as ``trace-auto.json`` in its work directory. The SVG has one row
per span, its bar placed on the trace's own time line."""

from __future__ import annotations

import json
import sys
from html import escape
from pathlib import Path

ROW, LEFT, WIDTH, BAR = 34, 330, 560, 18
COLORS = {"client": "#6b8fd6", "gateway": "#d6a14b", "server": "#5aae7a"}


def svg(spans: list[dict[str, object]]) -> str:
    start = min(int(str(s["start"])) for s in spans)
    end = max(int(str(s["end"])) for s in spans)
    scale = WIDTH / max(end - start, 1)
    height = ROW * (len(spans) + 1) + 10
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{LEFT + WIDTH + 90}" '
        f'height="{height}" font-family="sans-serif" font-size="13">',
        '<rect width="100%" height="100%" fill="white"/>',
        f'<text x="10" y="20" font-weight="bold">trace {escape(str(spans[0]["trace_id"]))}</text>',
    ]
    for row, span in enumerate(spans, 1):
        y = ROW * row + 8
        left = LEFT + (int(str(span["start"])) - start) * scale
        length = max((int(str(span["end"])) - int(str(span["start"]))) * scale, 2)
        milliseconds = (int(str(span["end"])) - int(str(span["start"]))) / 1e6
        label = f"{span['service']} · {str(span['kind']).lower()} · {span['name']}"
        color = COLORS.get(str(span["service"]), "#999")
        indent = 10 + 12 * (row - 1)
        out.append(f'<text x="{indent}" y="{y + 13}">{escape(label)}</text>')
        out.append(
            f'<rect x="{left:.1f}" y="{y}" width="{length:.1f}" height="{BAR}" '
            f'rx="3" fill="{color}"/>'
        )
        out.append(f'<text x="{left + length + 6:.1f}" y="{y + 13}">{milliseconds:.2f} ms</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main() -> None:
    source = Path(sys.argv[1])
    target = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).parent / "guide/trace.svg"
    target.write_text(svg(json.loads(source.read_text())), encoding="utf-8")


if __name__ == "__main__":
    main()
