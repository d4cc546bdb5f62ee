"""The layout of the hand-written runtime (src/mcp_schema) stays one the next
engineer can carry on: no module over 500 lines, no function over 80, no import
cycle between its modules, and the session independent of the Tasks extension
(which joins it through the session's extension hook)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "mcp_schema"
MODULES = sorted(PACKAGE.rglob("*.py"))


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> Iterator[str]:
    """The mcp_schema modules ``path`` imports at import time (not under TYPE_CHECKING,
    not inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        for inner in [node] if not isinstance(node, ast.If) else node.body:
            if isinstance(inner, ast.ImportFrom) and inner.module and inner.level == 0:
                if inner.module.startswith("mcp_schema"):
                    yield inner.module
            elif isinstance(inner, ast.Import):
                yield from (a.name for a in inner.names if a.name.startswith("mcp_schema"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_is_over_500_lines(path: Path) -> None:
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 500


def test_no_function_is_over_80_lines() -> None:
    long = [
        f"{path.relative_to(PACKAGE)}:{node.name} ({node.end_lineno - node.lineno + 1})"
        for path in MODULES
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > 80
    ]
    assert long == []


def test_the_session_does_not_import_the_tasks_extension() -> None:
    session = [p for p in MODULES if p.is_relative_to(PACKAGE / "session")]
    found = {
        f"{p.relative_to(PACKAGE)} imports {name}"
        for p in session
        for name in imported(p)
        if name.startswith("mcp_schema.tasks")
    }
    assert found == set()


def test_no_import_cycle() -> None:
    names = {module_name(p): p for p in MODULES}
    graph = {
        name: {m for m in imported(path) if m in names and m != name}
        for name, path in names.items()
    }
    # A package's __init__ re-exporting its modules is no cycle of theirs.
    for name in graph:
        graph[name] = {m for m in graph[name] if not name.startswith(m + ".")}
    seen: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(name: str, path: list[str]) -> None:
        seen[name] = 1
        for nxt in sorted(graph[name]):
            if seen.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in seen:
                visit(nxt, [*path, nxt])
        seen[name] = 2

    for name in sorted(graph):
        if name not in seen:
            visit(name, [name])
    assert cycles == []
