"""The ```python blocks of README.md and of every page under docs/.

Each file is one program: ``tests/docs/test_snippets.py`` runs its blocks in
order in one namespace, and ``python -m tests.snippets DIR`` writes each file's
blocks, in order, as one module (``DIR/readme.py``, ``DIR/docs_guide_decoding.py``,
...) that ``make typecheck`` checks under mypy ``--strict`` (with and without
the pydantic plugin) and pyright strict.

A block that must not run says why, on the line right above its fence::

    <!-- snippet: not run: REASON -->        type-checked, never run
    <!-- snippet: not checked: REASON -->    run, never type-checked
    <!-- snippet: skip: REASON -->           neither

A line ``--8<-- "PATH"`` inside a block (pymdownx.snippets, which the site
uses to show a file of the repository) stands for that file's text, here as
on the site.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
MARKER = re.compile(r"<!-- snippet: (not run|not checked|skip): (\S.*?) -->[ \t]*\n\Z")
ANY_MARKER = re.compile(r"<!-- snippet:")
INCLUDE = re.compile(r'^--8<-- "([^"]+)"[ \t]*$', re.MULTILINE)


@dataclass(frozen=True)
class Block:
    """One ```python block: where it is, its source, and whether it runs and is checked."""

    path: Path
    line: int  # of the opening fence, 1-based
    source: str
    run: bool = True
    check: bool = True
    reason: str = ""

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def files() -> list[Path]:
    """README.md and every Markdown page of the site's sources, in a fixed order."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def _expand(source: str) -> str:
    return INCLUDE.sub(
        lambda m: (ROOT / m.group(1)).read_text(encoding="utf-8").rstrip("\n"), source
    )


def blocks(path: Path) -> list[Block]:
    """The ```python blocks of one file, in order."""
    text = path.read_text(encoding="utf-8")
    out = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = text[: match.start()]
        previous = before[before.rfind("\n", 0, len(before) - 1) + 1 :]
        marker = MARKER.search(previous)
        if marker is None and ANY_MARKER.search(previous):
            raise ValueError(f"{path}:{line}: a snippet marker needs a kind and a reason")
        kind, reason = marker.groups() if marker else ("", "")
        out.append(
            Block(
                path,
                line,
                _expand(match.group(1)),
                run=kind not in ("not run", "skip"),
                check=kind not in ("not checked", "skip"),
                reason=reason,
            )
        )
    return out


def module_name(path: Path) -> str:
    """``readme``, ``docs_guide_decoding``: the module a file's blocks are checked as."""
    relative = path.relative_to(ROOT).with_suffix("")
    return re.sub(r"\W", "_", "_".join(relative.parts)).lower()


def module_source(path: Path) -> str:
    """A file's type-checked blocks as one module, each headed by where it comes from."""
    return "".join(f"# {b.where}\n{b.source}\n" for b in blocks(path) if b.check)


def main(argv: list[str]) -> None:
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for path in files():
        if any(b.check for b in blocks(path)):
            (out / f"{module_name(path)}.py").write_text(module_source(path), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
