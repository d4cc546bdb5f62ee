"""examples/server.py stays what docs/guide/sessions.md and the README say it is: at most 94 lines of
code, 20 of them wire glue (the functions ``main`` and ``serve``)."""

from __future__ import annotations

import ast
from pathlib import Path

SERVER = Path(__file__).resolve().parents[2] / "examples" / "server.py"


def code_lines(source: str, tree: ast.Module) -> list[int]:
    """Lines of code: not blank, not a comment, not the module docstring."""
    docstring = tree.body[0]
    skipped = set(range(docstring.lineno, (docstring.end_lineno or 0) + 1))
    return [
        number
        for number, line in enumerate(source.splitlines(), 1)
        if number not in skipped and line.strip() and not line.strip().startswith("#")
    ]


def test_the_example_server_is_small_and_mostly_features() -> None:
    source = SERVER.read_text(encoding="utf-8")
    tree = ast.parse(source)
    lines = code_lines(source, tree)
    assert len(lines) <= 94
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    glue = [
        number
        for name in ("main", "serve")
        for number in lines
        if functions[name].lineno <= number <= (functions[name].end_lineno or 0)
    ]
    assert len(glue) == 20
