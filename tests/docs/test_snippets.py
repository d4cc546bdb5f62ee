"""Every ```python block of README.md and of the docs pages runs, in order, one namespace per file.

The examples are the documentation's promise; this keeps them true against
the current code (``tests/snippets.py`` says how a block is found and how
one that must not run says why). ``make typecheck`` checks the same blocks.
"""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

from tests import snippets

FILES = snippets.files()


def test_every_page_with_code_is_seen() -> None:
    assert snippets.README in FILES
    assert len(FILES) >= 10
    assert sum(len(snippets.blocks(path)) for path in FILES) >= 40


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(snippets.ROOT)))
def test_python_blocks_run(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A real module: pydantic looks generic models' parametrisations up in sys.modules.
    module = types.ModuleType(f"__snippets_{snippets.module_name(path)}__")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    for block in snippets.blocks(path):
        if block.run:
            # Padded, so a traceback names the line of the file.
            code = compile("\n" * block.line + block.source, str(block.path), "exec")
            exec(code, module.__dict__)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(snippets.ROOT)))
def test_no_python_block_escapes_the_extractor(path: Path) -> None:
    """Python is fenced as ```python at the start of a line, nothing else."""
    text = path.read_text(encoding="utf-8")
    other = re.findall(r"^[ \t]*```[ \t]*(py|pycon|python3|pyi|ipython)\b.*$", text, re.MULTILINE)
    assert not other, f"{path}: fence Python as ```python (found {other})"
    indented = re.findall(r"^[ \t]+```python", text, re.MULTILINE)
    assert not indented, f"{path}: an indented ```python block is never run"


def test_markers_say_why() -> None:
    skipped = [b for path in FILES for b in snippets.blocks(path) if not (b.run and b.check)]
    for block in skipped:
        assert len(block.reason) >= 10, f"{block.where}: say why the block is not run or checked"
    assert len(skipped) <= 3, [b.where for b in skipped]  # deliberately few


def test_the_extractor_reads_markers(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nx = 1\n```\n"
        "<!-- snippet: not run: it starts a server that waits for stdin -->\n"
        "```python\nserve()\n```\n"
        "<!-- snippet: skip: shows a deliberate type error -->\n"
        "```python\nx: int = 'a'\n```\n"
        "```sh\nmake test\n```\n",
        encoding="utf-8",
    )
    found = snippets.blocks(page)
    assert [(b.line, b.source, b.run, b.check) for b in found] == [
        (1, "x = 1\n", True, True),
        (5, "serve()\n", False, True),
        (9, "x: int = 'a'\n", False, False),
    ]
    page.write_text("<!-- snippet: not run -->\n```python\nx = 1\n```\n", encoding="utf-8")
    with pytest.raises(ValueError, match="needs a kind and a reason"):
        snippets.blocks(page)
