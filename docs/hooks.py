"""MkDocs hooks: the generated pages of the API reference (``mkdocs.yml`` names this file).

``make docs`` runs ``mkdocs build --strict``; before MkDocs reads the pages,
this adds, without writing anything into ``docs/``:

* one page per hand-written runtime module (every public module of
  ``src/mcp_schema``, and ``mcp_schema.registry``), rendered by mkdocstrings
  from the module's docstrings and signatures;
* one page per generated version package (``mcp_schema.registry.COMPILED``),
  written here from the models themselves: its method and error tables, its
  typed decoders, and every class and type alias with its members by wire
  name, their types and presence, and a link to the upstream definition.
  mkdocstrings would render the 884 generated classes in minutes, in a form
  that shows attribute names where a reader of the protocol wants wire names;
* ``reference/index.md``, the table of both, and the "API reference" part
  of the navigation.

Every class heading's id is the class's import path
(``mcp_schema.v2026_07_28.CallToolRequest``), also registered under the
module that defines it (``...models.CallToolRequest``), so mkdocstrings'
signatures on the runtime pages link to the generated classes they name.
``tests/docs/test_site.py`` imports this file to check the built site against it.
"""

from __future__ import annotations

import ast
import functools
import html
import importlib
import importlib.util
import inspect
import json
import pkgutil
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

REPO = Path(__file__).resolve().parents[1]
REFERENCE = "reference"
NAV_SECTION = "API reference"

# The runtime modules, grouped for the navigation; a module not named here
# still gets a page, under "More".
RUNTIME_GROUPS: dict[str, tuple[str, ...]] = {
    "Decoding": ("codec", "errors", "base", "versions", "negotiation"),
    "Serving": (
        "auth",
        "oauth",
        "session",
        "context",
        "builders",
        "http",
        "http_headers",
        "projection",
        "proxy",
        "gateway",
        "tasks",
        "server",
    ),
    "Testing and tools": ("testing", "json_strategies", "cli", "diff"),
    "Tables": ("registry", "tables"),
}
_EXCLUDED = frozenset({"__main__"})
# hand-written packages: one page each
_RUNTIME_PACKAGES = frozenset(
    {"auth", "gateway", "http", "oauth", "proxy", "server", "session", "tasks"}
)


# -- what the reference holds -----------------------------------------------------------


def runtime_modules() -> list[str]:
    """Every public hand-written module (and the generated registry), by import path."""
    import mcp_schema

    return sorted(
        f"mcp_schema.{info.name}"
        for info in pkgutil.iter_modules(mcp_schema.__path__)
        if not info.name.startswith("_")
        and info.name not in _EXCLUDED
        and (not info.ispkg or info.name in _RUNTIME_PACKAGES)
    )


def version_packages() -> list[str]:
    """Every generated version package, in pin order."""
    from mcp_schema.registry import COMPILED

    return [compiled.package for compiled in COMPILED]


def page_uri(module: str) -> str:
    """The source path of a module's page: ``reference/codec.md``, ``reference/v2026_07_28.md``."""
    if module == "mcp_schema":
        return f"{REFERENCE}/index.md"
    return f"{REFERENCE}/{module.removeprefix('mcp_schema.')}.md"


def pages() -> dict[str, str]:
    """Every generated page: source path -> Markdown."""
    out = {page_uri("mcp_schema"): index_page()}
    for module in runtime_modules():
        out[page_uri(module)] = runtime_page(module)
    for package in version_packages():
        out[page_uri(package)] = version_page(package)
    return out


def nav() -> list[Any]:
    """The entries of the "API reference" section of the navigation."""
    modules = {m.removeprefix("mcp_schema."): m for m in runtime_modules()}
    groups: list[Any] = []
    named: set[str] = set()
    for title, names in RUNTIME_GROUPS.items():
        present = [n for n in names if n in modules]
        named.update(present)
        groups.append({title: [{modules[n]: page_uri(modules[n])} for n in present]})
    if rest := sorted(set(modules) - named):
        groups.append({"More": [{modules[n]: page_uri(modules[n])} for n in rest]})
    versions = [{_version_title(p): page_uri(p)} for p in version_packages()]
    return [page_uri("mcp_schema"), *groups, {"Protocol versions": versions}]


def _version_title(package: str) -> str:
    compiled = _compiled(package)
    if compiled.extension:
        return f"{_pins()[compiled.key]['base']} + {compiled.extension.rpartition('/')[2]}"
    return str(compiled.key)


def _compiled(package: str) -> Any:
    from mcp_schema.registry import COMPILED

    return next(c for c in COMPILED if c.package == package)


@functools.cache
def _pins() -> dict[str, Any]:
    pins: dict[str, Any] = json.loads((REPO / "schema" / "pins.json").read_text())["schemas"]
    return pins


# -- text helpers ------------------------------------------------------------------------


def _rst(text: str) -> str:
    """A docstring's reST literals (````x````) as Markdown code, other text unchanged."""
    return re.sub(r"``(.+?)``", r"`\1`", inspect.cleandoc(text))


def _html_text(text: str) -> str:
    """Markdown text with `code` spans, as HTML (for raw HTML blocks)."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text, quote=False))


def _autoref(identifier: str, title: str, *, code: bool = True) -> str:
    inner = f"<code>{html.escape(title)}</code>" if code else html.escape(title)
    return f'<autoref identifier="{identifier}" optional>{inner}</autoref>'


def _first_line(doc: str | None) -> str:
    if not doc:
        return ""
    paragraph = inspect.cleandoc(doc).split("\n\n")[0]
    return _rst(" ".join(paragraph.split()))


# -- runtime pages -----------------------------------------------------------------------


def runtime_page(module: str) -> str:
    """``::: module``: mkdocstrings renders it (options in ``mkdocs.yml``)."""
    return (
        f"---\ntitle: {module}\n---\n\n"
        f"::: {module}\n"
        "    options:\n"
        "      show_root_heading: true\n"
        "      heading_level: 1\n"
    )


def _docstring(module: str) -> str | None:
    """A module's docstring, read without importing it (``testing`` needs Hypothesis)."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    return ast.get_docstring(ast.parse(Path(spec.origin).read_text(encoding="utf-8")))


def index_page() -> str:
    import mcp_schema

    lines = [
        "# API reference",
        "",
        "The import package `mcp_schema` joins two halves: the hand-written runtime "
        "below, documented from its docstrings, and one generated package per "
        "protocol version, documented from the models themselves. The "
        "[guide](../guide/decoding.md) shows them at work.",
        "",
        "## Runtime modules",
        "",
        "| module | what it is |",
        "| --- | --- |",
    ]
    for module in runtime_modules():
        doc = _first_line(_docstring(module))
        doc = re.sub(r" \(hand-written(?: runtime module)?\)", "", doc)
        doc = re.sub(r"\(hand-written(?: runtime module)?; ", "(", doc).rstrip(" .")
        link = Path(page_uri(module)).name
        lines.append(f"| [`{module}`]({link}) | {doc} |")
    lines += [
        "",
        "## Protocol versions",
        "",
        "| version | era | package | definitions |",
        "| --- | --- | --- | ---: |",
    ]
    for package in version_packages():
        compiled = _compiled(package)
        count = len(_definitions(package))
        era = f"extension of {compiled.version}" if compiled.extension else compiled.era
        link = Path(page_uri(package)).name
        lines.append(f"| {compiled.key} | {era} | [`{package}`]({link}) | {count} |")
    lines += [
        "",
        "## The package",
        "",
        f"`mcp_schema.__version__` is `{mcp_schema.__version__}`; "
        "`mcp_schema.SUPPORTED_VERSIONS` lists the protocol versions, oldest first; "
        "`mcp_schema.project` and `mcp_schema.ProjectionError` are "
        "[`mcp_schema.projection`](projection.md)'s, imported on first use.",
        "",
    ]
    return "\n".join(lines)


# -- version pages ----------------------------------------------------------------------

_SCALARS = {
    "StrictStr": "str",
    "StrictBool": "bool",
    "StrictInt": "int",
    "JsonInt": "int",
    "JsonNumber": "float",
}


@dataclass(frozen=True)
class Definition:
    """A public name of a version package: a model class or a type alias."""

    name: str
    kind: str  # "class" or "alias"
    package: str  # where it is defined
    doc: str
    source: str = ""  # an alias's definition, as written


@functools.cache
def _source(
    models: str,
) -> tuple[dict[str, dict[str, str]], dict[str, tuple[str, str]], dict[str, str]]:
    """One parse of a generated ``models.py``: class annotations, aliases, imported names.

    ``({class: {attribute: annotation}}, {alias: (source, docstring)},
    {name: module it is imported from})``.
    """
    module = importlib.import_module(models)
    tree = ast.parse(inspect.getsource(module))
    classes: dict[str, dict[str, str]] = {}
    aliases: dict[str, tuple[str, str]] = {}
    imported: dict[str, str] = {}
    body = tree.body
    for index, node in enumerate(body):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                imported[alias.asname or alias.name] = node.module
        if isinstance(node, ast.ClassDef):
            classes[node.name] = {
                item.target.id: ast.unparse(item.annotation)
                for item in node.body
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
            }
            continue
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
        aliases[name] = (source, doc)
    return classes, aliases, imported


def _defined_in(package: str, name: str) -> str | None:
    """The version package whose ``models.py`` defines ``name`` as seen from ``package``."""
    classes, aliases, imported = _source(f"{package}.models")
    if name in classes or name in aliases:
        return package
    origin = imported.get(name, "")
    if origin.startswith("mcp_schema.v") and origin.endswith(".models"):
        return _defined_in(origin.removesuffix(".models"), name)
    return None


@functools.cache
def _definitions(package: str) -> dict[str, Definition]:
    """Every class and type alias ``package`` exports, by name (sorted)."""
    module = importlib.import_module(package)
    out: dict[str, Definition] = {}
    for name in sorted(module.__all__, key=str.lower):
        obj = getattr(module, name)
        where = _defined_in(package, name)
        if isinstance(obj, type) and issubclass(obj, BaseModel):
            home = obj.__module__.removesuffix(".models")
            out[name] = Definition(name, "class", home, obj.__doc__ or "")
        elif where is not None:
            source, doc = _source(f"{where}.models")[1][name]
            out[name] = Definition(name, "alias", where, doc, source)
    return out


class _Simplify(ast.NodeTransformer):
    """``Omittable[X]`` is ``X``, strict scalars their Python type, bounds become notes."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Name(_SCALARS.get(node.id, node.id), node.ctx)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == "m":  # `m.Name` in decoding.py
            return ast.Name(node.attr, node.ctx)
        return self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        head = node.value
        if isinstance(head, ast.Name) and head.id == "Omittable":
            visited: ast.AST = self.visit(node.slice)
            return visited
        if isinstance(head, ast.Name) and head.id == "Union" and isinstance(node.slice, ast.Tuple):
            arms: list[ast.expr] = [self.visit(arm) for arm in node.slice.elts]
            joined = arms[0]
            for arm in arms[1:]:
                joined = ast.BinOp(joined, ast.BitOr(), arm)
            return joined
        if (
            isinstance(head, ast.Name)
            and head.id == "Annotated"
            and isinstance(node.slice, ast.Tuple)
        ):
            inner, *meta = node.slice.elts
            for item in meta:
                if (
                    isinstance(item, ast.Call)
                    and isinstance(item.func, ast.Name)
                    and item.func.id in ("Int", "Number")
                ):
                    for kw in item.keywords:
                        value = ast.unparse(kw.value)
                        if value != "None" and kw.arg in ("ge", "le"):
                            self.notes.append(f"{'≥' if kw.arg == 'ge' else '≤'} {value}")
            inner_visited: ast.AST = self.visit(inner)
            return inner_visited
        return self.generic_visit(node)


def simplify(annotation: str) -> tuple[str, list[str]]:
    """A generated annotation as a reader wants it, and its bounds."""
    try:
        tree = ast.parse(annotation, mode="eval")
    except SyntaxError:
        return annotation, []
    simplifier = _Simplify()
    return ast.unparse(simplifier.visit(tree)), simplifier.notes


def _linked(type_text: str, package: str) -> str:
    """``type_text`` as HTML code, each generated name in it a cross-reference."""

    def repl(match: re.Match[str]) -> str:
        word = match.group(0)
        home = _defined_in(package, word)
        if home is None:
            return word
        return f'<autoref identifier="{home}.{word}" optional>{word}</autoref>'

    return (
        "<code>"
        + re.sub(r"\b[A-Za-z_]\w*\b", repl, html.escape(type_text, quote=False))
        + "</code>"
    )


def _upstream(doc: str) -> tuple[str, str]:
    """(the docstring's text, the upstream URL it ends with)."""
    text, _, url = doc.rpartition(": https://")
    if not text:
        return _rst(doc), ""
    return _rst(text), "https://" + url.strip()


def _class_section(package: str, definition: Definition) -> list[str]:
    cls = getattr(importlib.import_module(package), definition.name)
    text, url = _upstream(definition.doc)
    bases = ", ".join(
        _autoref(f"{base.__module__.removesuffix('.models')}.{base.__name__}", base.__name__)
        if base.__module__.startswith("mcp_schema.v")
        else _autoref(f"{base.__module__}.{base.__name__}", base.__name__)
        for base in cls.__bases__
    )
    lines = [
        f"### {definition.name} {{ #{package}.{definition.name} }}",
        "",
        f'<p class="mcp-definition">{_html_text(text)}'
        + (f' (<a href="{html.escape(url)}">upstream</a>)' if url else "")
        + f". <code>class {definition.name}({bases})</code></p>",
        "",
    ]
    declared = _source(f"{cls.__module__}")[0].get(definition.name, {})
    rows = []
    for attribute, annotation in declared.items():
        field = cls.model_fields.get(attribute)
        if field is None:
            continue
        wire = field.serialization_alias or attribute
        type_text, notes = simplify(annotation)
        preset = next((m.value for m in field.metadata if type(m).__name__ == "_Preset"), None)
        if preset is not None:
            presence = f"required; built as <code>{html.escape(json.dumps(preset))}</code>"
        elif field.is_required():
            presence = "required"
        elif annotation.startswith("Omittable["):
            presence = "optional, never null"
        else:
            presence = "optional"
        if notes:
            presence += ", " + html.escape(", ".join(notes))
        name = f"<code>{html.escape(wire)}</code>"
        if wire != attribute:
            name += f'<br><span class="mcp-attribute">.{html.escape(attribute)}</span>'
        rows.append(
            f"<tr><td>{name}</td><td>{_linked(type_text, package)}</td><td>{presence}</td></tr>"
        )
    if rows:
        lines += [
            "<table><thead><tr><th>member</th><th>type</th><th>presence</th></tr></thead><tbody>",
            *rows,
            "</tbody></table>",
            "",
        ]
    inherited = [name for name in cls.model_fields if name not in declared]
    if inherited:
        lines += [
            f'<p class="mcp-inherited">Inherited: {", ".join(html.escape(cls.model_fields[n].serialization_alias or n) for n in inherited)}.</p>',
            "",
        ]
    return lines


def _alias_section(package: str, definition: Definition) -> list[str]:
    text, url = _upstream(definition.doc)
    type_text, _ = simplify(definition.source)
    lines = [
        f"### {definition.name} {{ #{package}.{definition.name} }}",
        "",
        f'<p class="mcp-definition">{_html_text(text)}'
        + (f' (<a href="{html.escape(url)}">upstream</a>)' if url else "")
        + ".</p>",
        "",
        f'<pre class="mcp-alias">{definition.name} = {_linked(type_text, package)}</pre>',
        "",
    ]
    return lines


def _method_tables(package: str) -> list[str]:
    module = importlib.import_module(package)

    def ref(home: str, name: str | None) -> str:
        if not name:
            return ""
        return _autoref(f"{home}.{name}", name)

    lines = ["## Methods", "", "### Requests", ""]
    lines += [
        "<table><thead><tr><th>method</th><th>sent by</th><th>request</th>"
        "<th>result</th></tr></thead><tbody>"
    ]
    for method, entry in sorted(module.REQUESTS.items()):
        results = [ref(entry.package, entry.result_name)]
        results += [ref(entry.package, name) for name in entry.alternative_names]
        lines.append(
            f"<tr><td><code>{html.escape(method)}</code></td><td>{entry.sender}</td>"
            f"<td>{ref(entry.package, entry.request_name)}</td><td>{' or '.join(results)}</td></tr>"
        )
    lines += ["</tbody></table>", "", "### Notifications", ""]
    lines += [
        "<table><thead><tr><th>method</th><th>sent by</th><th>notification</th></tr></thead><tbody>"
    ]
    for method, entry in sorted(module.NOTIFICATIONS.items()):
        lines.append(
            f"<tr><td><code>{html.escape(method)}</code></td><td>{entry.sender}</td>"
            f"<td>{ref(entry.package, entry.notification_name)}</td></tr>"
        )
    lines += ["</tbody></table>", ""]
    if module.INPUT_REQUESTS:
        lines += [
            "### Input requests",
            "",
            "What an input-required result may ask the client for (`INPUT_REQUESTS`).",
            "",
            "<table><thead><tr><th>method</th><th>request</th></tr></thead><tbody>",
        ]
        for method, entry in sorted(module.INPUT_REQUESTS.items()):
            lines.append(
                f"<tr><td><code>{html.escape(method)}</code></td>"
                f"<td>{ref(entry.package, entry.request_name)}</td></tr>"
            )
        lines += ["</tbody></table>", ""]
    lines += [
        "### Error codes",
        "",
        "`ERROR_MODELS[code]` is the model of a JSON-RPC `error` member with that code; "
        "`ERROR_MODEL` is the model of any other code's. The exception "
        "`mcp_schema.errors` raises for each code has the same name.",
        "",
        "<table><thead><tr><th>code</th><th>error model</th></tr></thead><tbody>",
    ]
    for code, model in sorted(module.ERROR_MODELS.items()):
        home = model.__module__.removesuffix(".models")
        lines.append(f"<tr><td>{code}</td><td>{ref(home, model.__name__)}</td></tr>")
    fallback = module.ERROR_MODEL
    lines.append(
        "<tr><td>any other</td>"
        f"<td>{ref(fallback.__module__.removesuffix('.models'), fallback.__name__)}</td></tr>"
    )
    lines += ["</tbody></table>", ""]
    return lines


def version_page(package: str) -> str:
    """The page of one generated version package."""
    module = importlib.import_module(package)
    compiled = _compiled(package)
    pin = _pins()[compiled.key]
    definitions = _definitions(package)
    classes = sum(d.kind == "class" for d in definitions.values())
    source = f"https://github.com/{pin['repository']}/blob/{pin['commit']}/{pin['path']}"
    era = (
        f"extension `{compiled.extension}` of {pin['base']}" if compiled.extension else compiled.era
    )
    lines = [
        f"---\ntitle: {package}\n---",
        "",
        f"# {package} {{ #{package} }}",
        "",
        _rst(module.__doc__ or ""),
        "",
        f"* Protocol version `{compiled.version}` ({era}).",
        f"* Generated from [`{pin['path']}`]({source}) at `{pin['commit'][:12]}` "
        f"(upstream [reference]({pin['docs']})).",
        f"* {classes} classes and {len(definitions) - classes} type aliases.",
        "",
        "Members are listed by their wire names, as `decode` reads and `encode` writes "
        "them; a renamed attribute is shown under its wire name. *Optional, never null* "
        "members may be absent but not `null`; *built as* values are filled in when a "
        "model is built in Python and still required when decoding.",
        "",
    ]
    lines += _method_tables(package)
    if hasattr(module, "decode_request"):
        lines += [
            "## Typed decoding",
            "",
            f"::: {package}.decoding",
            "    options:",
            "      heading_level: 3",
            "      show_root_heading: false",
            "      show_root_toc_entry: false",
            "      members: [decode_request, decode_response, AnyRequest, AnyNotification, AnyResult]",
            "      show_overloads: false",
            "",
        ]
    lines += ["## Definitions", ""]
    index = " · ".join(f"[{name}](#{package}.{name})" for name in definitions)
    lines += [index, ""]
    for definition in definitions.values():
        if definition.kind == "class":
            lines += _class_section(package, definition)
        else:
            lines += _alias_section(package, definition)
    return "\n".join(lines)


# -- MkDocs events ------------------------------------------------------------------------


def on_config(config: Any) -> Any:
    """Fill the "API reference" section of the navigation."""
    for index, entry in enumerate(config["nav"]):
        if isinstance(entry, dict) and NAV_SECTION in entry:
            config["nav"][index] = {NAV_SECTION: nav()}
            break
    else:
        raise ValueError(f"mkdocs.yml: the nav has no {NAV_SECTION!r} section")
    return config


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """Register each generated definition under the module that defines it too.

    mkdocstrings names a class by where it is defined (``...models.Name``);
    its section's id is its import path (``mcp_schema.v2026_07_28.Name``).
    """
    package = _PAGES.get(page.file.src_uri)
    if package is not None:
        autorefs = config["plugins"]["autorefs"]
        for name, definition in _definitions(package).items():
            if definition.package == package:  # a re-exported name is registered on its own page
                autorefs.register_anchor(page, f"{package}.models.{name}", f"{package}.{name}")
    return html


_PAGES: dict[str, str] = {}  # source path of a version page -> its package


def on_files(files: Any, config: Any) -> Any:
    """Add the generated pages."""
    from mkdocs.structure.files import File

    _PAGES.update({page_uri(package): package for package in version_packages()})
    for uri, content in pages().items():
        files.append(File.generated(config, uri, content=content))
    return files
