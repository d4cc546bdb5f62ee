"""Every ```python block of README.md runs, in order, in one namespace.

The README's examples are its promise; this keeps them true against the
current code. Blocks fenced as ``sh`` (or anything else) are not run.
"""

from __future__ import annotations

import sys
import types

import pytest

from tests.snippets import README
from tests.snippets import blocks as _blocks


def test_readme_has_python_examples() -> None:
    assert len(_blocks()) >= 4


def test_readme_python_blocks_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # A real module: pydantic looks generic models' parametrisations up in sys.modules.
    module = types.ModuleType("__readme__")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    for line, source in _blocks():
        code = compile(source, f"{README.name}:{line}", "exec")
        exec(code, module.__dict__)  # failures name the README line of the block


def test_the_server_section_is_examples_server_py() -> None:
    example = (README.parent / "examples" / "server.py").read_text(encoding="utf-8")
    assert f"```py\n{example}```\n" in README.read_text(encoding="utf-8")
