"""examples/server.py stays what docs/guide/sessions.md and the README say it is: at most 80 lines of
code, 8 of them wire glue (``serve`` and the ``__main__`` block: the package's `answered_by` and
`serve_stdio` do the rest); examples/http_server.py, on the server layer, at most 60."""

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
    assert len(lines) <= 80
    glue_nodes = [
        node
        for node in tree.body
        if (isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "serve")
        or (isinstance(node, ast.If) and "__main__" in ast.unparse(node.test))
    ]
    assert len(glue_nodes) == 2
    glue = [
        number
        for node in glue_nodes
        for number in lines
        if node.lineno <= number <= (node.end_lineno or 0)
    ]
    assert len(glue) == 8


HTTP_SERVER = SERVER.with_name("http_server.py")


def lines_of_code(source: str) -> int:
    """Lines that are not blank, a comment or in a docstring (of the module,
    a class or a function)."""
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                docstrings.update(range(body[0].lineno, (body[0].end_lineno or 0) + 1))
    return sum(
        1
        for number, line in enumerate(source.splitlines(), 1)
        if number not in docstrings and line.strip() and not line.strip().startswith("#")
    )


def test_the_example_http_server_is_at_most_60_lines_of_code_on_the_server_layer() -> None:
    source = HTTP_SERVER.read_text(encoding="utf-8")
    assert lines_of_code(source) <= 60
    assert "from mcp_schema.server import" in source


def test_the_guides_trial_server_is_no_longer_than_on_the_official_mcpserver() -> None:
    source = SERVER.with_name("remote_server.py").read_text(encoding="utf-8")
    assert lines_of_code(source) <= 31  # the three tools, replicas, asks and tasks: 31 on MCPServer
