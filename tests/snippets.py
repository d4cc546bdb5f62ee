"""The ```python blocks of README.md, for running (``tests/test_readme.py``)
and for type checking (``python -m tests.snippets DIR`` writes them, in
order, as one module ``DIR/readme.py``, which ``make typecheck`` checks)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks() -> list[tuple[int, str]]:
    """(line of the block in README.md, its source), in order."""
    text = README.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in FENCE.finditer(text)]


def module_source() -> str:
    return "".join(f"# README.md line {line}\n{source}\n" for line, source in blocks())


def main(argv: list[str]) -> None:
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    (out / "readme.py").write_text(module_source(), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
