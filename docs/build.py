"""Render the API reference with pdoc: ``python docs/build.py [OUTPUT_DIR]`` (default ``site``).

One page per version package (every schema definition of that protocol version,
with wire names, types and a link to the upstream definition) and one per
hand-written runtime module. ``make docs`` runs this; ``tests/test_docs.py``
renders into a temporary directory and checks every public class is there.

Model fields are shown as ``name: type`` followed by their JSON wire name and
presence (required / optional); the type is the generated source annotation,
lightly simplified (``Omittable[X]`` -> ``X``, strict scalar aliases -> the
Python type, ``Annotated`` metadata reduced to its bounds).
"""

from __future__ import annotations

import ast
import functools
import html
import importlib
import inspect
import pkgutil
import re
import sys
from pathlib import Path
from typing import Any

import pdoc
import pdoc.doc
import pdoc.render
from markupsafe import Markup
from pydantic import BaseModel

from mcp_schema.registry import COMPILED

HERE = Path(__file__).resolve().parent

VERSION_PACKAGES = tuple(compiled.package for compiled in COMPILED)
# Hand-written runtime modules: every public top-level module of the package
# (base, method_table, errors, codec, http_headers, and whatever is added later).
EXCLUDED = frozenset({"__main__"})
RUNTIME_PACKAGES = frozenset({"session"})  # hand-written packages: one page each


def runtime_modules() -> list[str]:
    import mcp_schema

    return sorted(
        f"mcp_schema.{info.name}"
        for info in pkgutil.iter_modules(mcp_schema.__path__)
        if not info.name.startswith("_")
        and info.name not in EXCLUDED
        and (not info.ispkg or info.name in RUNTIME_PACKAGES)
    )


_SCALARS = {
    "StrictStr": "str",
    "StrictBool": "bool",
    "StrictInt": "int",
    "JsonInt": "int",
    "JsonNumber": "float",
}


def modules() -> list[str]:
    return ["mcp_schema", *VERSION_PACKAGES, *runtime_modules()]


# -- model fields ---------------------------------------------------------------------------


def _model_and_field(var: pdoc.doc.Variable) -> tuple[type[BaseModel], str] | None:
    module_name, qualname = var.taken_from
    owner, _, name = qualname.rpartition(".")
    if not owner or not module_name:
        return None
    obj: Any = sys.modules.get(module_name) or importlib.import_module(module_name)
    for part in owner.split("."):
        obj = getattr(obj, part, None)
    if isinstance(obj, type) and issubclass(obj, BaseModel) and name in obj.model_fields:
        return obj, name
    return None


def _source_annotation(cls: type[BaseModel], name: str) -> str | None:
    """The annotation of field ``name`` as written in the generated source."""
    for klass in cls.__mro__:
        found = _class_annotations(klass).get(name)
        if found is not None:
            return found
    return None


@functools.cache
def _class_annotations(klass: type) -> dict[str, str]:
    try:
        tree = ast.parse(inspect.getsource(klass))
    except (OSError, TypeError, SyntaxError):
        return {}
    cls_node = tree.body[0]
    if not isinstance(cls_node, ast.ClassDef):
        return {}
    return {
        node.target.id: ast.unparse(node.annotation)
        for node in cls_node.body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    }


def _bounds(call: ast.Call) -> list[str]:
    out = []
    for kw in call.keywords:
        value = ast.unparse(kw.value)
        if value != "None" and kw.arg in ("ge", "le"):
            out.append(f"{'≥' if kw.arg == 'ge' else '≤'} {value}")
    return out


class _Simplify(ast.NodeTransformer):
    def __init__(self) -> None:
        self.notes: list[str] = []

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Name(_SCALARS.get(node.id, node.id), node.ctx)

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        head = node.value
        if isinstance(head, ast.Name) and head.id == "Omittable":
            return self.visit(node.slice)
        if (
            isinstance(head, ast.Name)
            and head.id == "Annotated"
            and isinstance(node.slice, ast.Tuple)
        ):
            inner, *meta = node.slice.elts
            for m in meta:
                if (
                    isinstance(m, ast.Call)
                    and isinstance(m.func, ast.Name)
                    and m.func.id in ("Int", "Number")
                ):
                    self.notes += _bounds(m)
            return self.visit(inner)
        return self.generic_visit(node)


def _simplify(annotation: str) -> tuple[str, list[str]]:
    try:
        tree = ast.parse(annotation, mode="eval")
    except SyntaxError:
        return annotation, []
    simplifier = _Simplify()
    tree = simplifier.visit(tree)
    return ast.unparse(tree), simplifier.notes


def _linked(type_text: str, module: pdoc.doc.Module) -> Markup:
    """Escape ``type_text`` and link the names documented on this page."""
    documented = {m.name for m in module.members.values() if m.kind in ("class", "variable")}

    def repl(match: re.Match[str]) -> str:
        word = match.group(0)
        if word in documented:
            return f'<a href="#{word}">{word}</a>'
        return word

    return Markup(re.sub(r"\b[A-Za-z_]\w*\b", repl, html.escape(type_text, quote=False)))


def wire_field(var: pdoc.doc.Doc, module: pdoc.doc.Module) -> dict[str, Any] | None:
    """Wire name, simplified type and presence of a pydantic model field, else None."""
    if not isinstance(var, pdoc.doc.Variable):
        return None
    found = _model_and_field(var)
    if found is None:
        return None
    cls, name = found
    field = cls.model_fields[name]
    source = _source_annotation(cls, name)
    if source is None:
        return None
    type_text, notes = _simplify(source)
    if field.is_required():
        presence = "required"
    elif source.startswith("Omittable["):
        presence = "optional (absent, never null)"
    else:
        presence = "optional"
    return {
        "wire": field.serialization_alias or name,
        "type": _linked(type_text, module),
        "notes": ", ".join(notes),
        "presence": presence,
    }


@functools.cache
def _aliases(module_name: str) -> dict[str, tuple[str, str]]:
    """``{name: (source, docstring)}`` of the type aliases a generated models module defines.

    An alias is a typing object with no ``__doc__`` of its own: its docstring
    is the string literal the generator writes right after it.
    """
    module = importlib.import_module(module_name)
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError, SyntaxError):
        return {}
    found: dict[str, tuple[str, str]] = {}
    body = tree.body
    for index, node in enumerate(body):
        if isinstance(node, ast.If):  # the TYPE_CHECKING split of a recursive alias
            node = next((n for n in node.orelse if isinstance(n, ast.Assign)), node)
        name = source = None
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.value is not None
            and ast.unparse(node.annotation) == "TypeAlias"
        ):
            name, source = node.target.id, ast.unparse(node.value)
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call)
            and ast.unparse(node.value.func) == "TypeAliasType"
            and len(node.value.args) >= 2
        ):
            name, source = node.targets[0].id, ast.unparse(node.value.args[1])
        if name is None or source is None:
            continue
        after = body[index + 1] if index + 1 < len(body) else None
        doc = (
            after.value.value
            if isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
            else ""
        )
        found[name] = (source, doc)
    return found


def _alias_entry(var: pdoc.doc.Doc) -> tuple[str, str] | None:
    if (
        not isinstance(var, pdoc.doc.Variable)
        or var.modulename.removesuffix(".models") not in VERSION_PACKAGES
    ):
        return None
    # Typing objects do not say where they were defined (pdoc reports
    # `types.Annotated`), so look the name up in the documented package's
    # models module, where every alias of a version package is written.
    candidates = [var.modulename]
    if not var.modulename.endswith(".models"):
        candidates.append(f"{var.modulename}.models")
    for where in candidates:
        entry = _aliases(where).get(var.name)
        if entry is not None:
            return entry
    return None


def type_alias(var: pdoc.doc.Doc, module: pdoc.doc.Module) -> Markup | None:
    """The simplified, linked definition of a generated type alias, else None."""
    entry = _alias_entry(var)
    return None if entry is None else _linked(_simplify(entry[0])[0], module)


def alias_docstring(var: pdoc.doc.Doc) -> str:
    """The docstring (spec link) of a generated type alias, else ''."""
    entry = _alias_entry(var)
    return "" if entry is None else entry[1]


# -- build ------------------------------------------------------------------------------------


def build(output: Path) -> list[str]:
    """Render every module into ``output``; returns the module names rendered."""
    import mcp_schema

    names = modules()
    pdoc.render.configure(
        docformat="restructuredtext",
        template_directory=HERE / "templates",
        footer_text=f"mcp-schema {mcp_schema.__version__}",
        show_source=True,
        search=True,
    )
    pdoc.render.env.globals["wire_field"] = wire_field
    pdoc.render.env.globals["type_alias"] = type_alias
    pdoc.render.env.globals["alias_docstring"] = alias_docstring
    pdoc.pdoc(*names, output_directory=output)
    return names


def main(argv: list[str]) -> int:
    output = Path(argv[0]) if argv else Path("site")
    names = build(output)
    print(f"docs: {len(names)} modules -> {output}/index.html")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
