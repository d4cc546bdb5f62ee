"""IR -> Python source, through the Jinja templates in ``codegen/templates``.

This module turns type expressions into annotation strings; the templates
only place the prepared strings. A renderer reads the IR it is given and
nothing else (but the runtime's ``mcp_schema.base.__all__``, see
``base_names``). ``render_models`` expects a module that ``passes.prepare``
has ordered.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import jinja2

from . import ir
from .ir import BuildError
from .names import snake

TEMPLATES = Path(__file__).resolve().parent / "templates"

BASE = Path(__file__).resolve().parent.parent / "src" / "mcp_schema" / "base.py"


def base_names() -> list[str]:
    """``mcp_schema.base.__all__``: what a generated module may import from the
    runtime (ruff drops the unused ones). Read from the source, because
    importing the runtime package may need the generated code being written."""
    tree = ast.parse(BASE.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            names: list[str] = ast.literal_eval(node.value)
            return names
    raise RuntimeError(f"{BASE} has no __all__")


def literal(value: ir.JsonScalar) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)


def number_literal(value: float) -> str:
    """A bound as written in a schema: ``0``, not ``0.0``."""
    return repr(int(value)) if float(value).is_integer() else repr(value)


# What a generated module imports besides mcp_schema.base (ruff drops the unused ones).
TYPING_NAMES = ("TYPE_CHECKING", "Annotated", "Any", "Literal", "TypeAlias", "Union")
PYDANTIC_NAMES = ("AliasChoices", "Field", "StrictBool", "StrictStr", "StringConstraints", "Tag")
TYPING_EXTENSIONS_NAMES = ("TypeAliasType",)
# Those a definition may be named like (2024-11-05 has ``Annotated``): the module
# then imports ``typing`` and spells them ``typing.<name>``. Any other clash
# with an imported name fails the build.
SHADOWABLE = frozenset({"Annotated", "Any", "Literal", "Union"})


class Annotations:
    """Prints type expressions; ``lazy`` names are quoted (not defined yet),
    ``shadowed`` helpers of ``typing`` are spelled ``typing.<name>``."""

    def __init__(
        self, lazy: frozenset[str] = frozenset(), shadowed: frozenset[str] = frozenset()
    ) -> None:
        self.lazy = lazy
        self.shadowed = shadowed

    def typing(self, name: str) -> str:
        return f"typing.{name}" if name in self.shadowed else name

    def __call__(self, t: ir.TypeExpr) -> str:
        if isinstance(t, ir.Scalar):
            return self.scalar(t)
        if isinstance(t, ir.Const):
            return f"{self.typing('Literal')}[{', '.join(literal(v) for v in t.values)}]"
        if isinstance(t, ir.Ref):
            return f'"{t.name}"' if t.name in self.lazy else t.name
        if isinstance(t, ir.Array):
            inner = f"list[{self(t.item)}]"
            if t.min_items is None and t.max_items is None:
                return inner
            bounds = [
                f"{k}={v}"
                for k, v in (("min_length", t.min_items), ("max_length", t.max_items))
                if v is not None
            ]
            return f"{self.typing('Annotated')}[{inner}, Field({', '.join(bounds)})]"
        if isinstance(t, ir.Map):
            return f"dict[str, {self(t.value)}]"
        return self.union(t)

    def discriminator(self, key: str) -> str:
        """The name a discriminator reads the wire member ``key`` by."""
        return snake(key)

    def scalar(self, t: ir.Scalar) -> str:
        if t.kind == "str":
            if t.min_length is None and t.max_length is None:
                return "StrictStr"
            bounds = [
                f"{k}={v}"
                for k, v in (("min_length", t.min_length), ("max_length", t.max_length))
                if v is not None
            ]
            return f"{self.typing('Annotated')}[str, StringConstraints(strict=True, {', '.join(bounds)})]"
        if t.kind in ("int", "number"):
            marker, plain, py = (
                ("Int", "JsonInt", "int") if t.kind == "int" else ("Number", "JsonNumber", "float")
            )
            if t.minimum is None and t.maximum is None:
                return plain
            bounds = [
                f"{k}={number_literal(v)}"
                for k, v in (("ge", t.minimum), ("le", t.maximum))
                if v is not None
            ]
            return f"{self.typing('Annotated')}[{py}, {marker}({', '.join(bounds)})]"
        return {"bool": "StrictBool", "null": "None", "any": self.typing("Any")}[t.kind]

    def union(self, t: ir.Union_) -> str:
        if t.result_type_tags is not None:
            arms = [
                f'{self.typing("Annotated")}[{self(m)}, Tag("{tag or "complete"}")]'
                for m, tag in zip(t.members, t.result_type_tags, strict=True)
            ]
            tags = ", ".join(f'"{tag}"' for tag in t.result_type_tags if tag)
            return f"{self.typing('Annotated')}[{' | '.join(arms)}, ResultTypeUnion({tags})]"
        members = [self(m) for m in flatten(t)]
        joined = (
            f"{self.typing('Union')}[{', '.join(members)}]" if self.lazy else " | ".join(members)
        )
        if t.discriminator:
            key = self.discriminator(t.discriminator)
            return f'{self.typing("Annotated")}[{joined}, Field(discriminator="{key}")]'
        if t.by_required_key:
            return f'{self.typing("Annotated")}[{joined}, Field(union_mode="left_to_right")]'
        if t.by_tag:
            return f'{self.typing("Annotated")}[{joined}, ByTag("{t.by_tag}")]'
        return joined


@dataclass
class ClassView:
    name: str
    base: str
    doc: str
    fields: list[str]
    extra: str | None


@dataclass
class AliasView:
    name: str
    value: str
    doc: str
    recursive: bool


def flatten(t: ir.Union_, splice: Callable[[ir.Union_], bool] | None = None) -> list[ir.TypeExpr]:
    """Members, with nested unions spliced in (``A | (B | C)`` is ``A | B | C``):
    those ``splice`` accepts, by default the plain ones (no discriminator)."""
    spliced = splice or _plain
    out: list[ir.TypeExpr] = []
    for m in t.members:
        if isinstance(m, ir.Union_) and spliced(m):
            out.extend(flatten(m, spliced))
        else:
            out.append(m)
    return out


def _plain(t: ir.Union_) -> bool:
    return t.discriminator is None


def field_line(f: ir.Field, annotate: Annotations, pragma: str = "") -> str:
    """The member's line; ``pragma`` (a type checker's ignore comment) goes
    where checkers report an override: on the first line of the statement."""
    annotation = annotate(f.type)
    if not f.required:
        annotation = annotation if f.nullable else f"Omittable[{annotation}]"
    options = []
    if f.required is False:
        options.append("default=None")
    if f.py_name != f.wire_name:
        # Not ``alias`` (or a plain string validation_alias): type checkers and
        # the pydantic mypy plugin would then want the wire name in __init__.
        wire = literal(f.wire_name)
        options += [f"validation_alias=AliasChoices({wire})", f"serialization_alias={wire}"]
    if f.format:
        options.append(f'json_schema_extra={{"format": {literal(f.format)}}}')
    if f.preset is not None:
        call, arguments = "Preset", [literal(f.preset), *options]
    elif options and options != ["default=None"]:
        call, arguments = "Field", options
    else:
        value = " = None" if options else ""
        return f"{f.py_name}: {annotation}{value}{'  ' if pragma else ''}{pragma}"
    if pragma:
        # ruff keeps a comment after the opening parenthesis on the first line.
        return f"{f.py_name}: {annotation} = {call}(  {pragma}\n{', '.join(arguments)})"
    return f"{f.py_name}: {annotation} = {call}({', '.join(arguments)})"


WIDER = "# type: ignore[assignment]"
"""An optional member overriding a required one: mypy and pyright (which reads
this comment too) object to the wider type."""
NARROWER = "# pyright: ignore[reportIncompatibleVariableOverride]"
"""A member retyped to a subclass: pyright objects (the attribute is mutable), mypy does not."""


def member_lines(
    c: ir.ModelClass, annotate: Annotations, classes: Mapping[str, ir.ModelClass]
) -> list[str]:
    """The members the class statement spells out: all of them, or for a class
    that extends another, those the parent lacks or types otherwise, each
    override with a comment that says so."""
    if c.extends is None:
        return [field_line(f, annotate) for f in c.fields]
    inherited = {f.wire_name: f for f in classes[c.extends].fields}
    lines: list[str] = []
    for f in c.fields:
        parent = inherited.get(f.wire_name)
        if parent is None:
            lines.append(field_line(f, annotate))
        elif parent.required and not f.required:
            lines.append(f"# Deliberately wider than {c.extends}'s: it may be absent.")
            lines.append(field_line(f, annotate, WIDER))
        elif f != parent:
            lines.append(f"# Deliberately narrower than {c.extends}'s: it accepts less.")
            lines.append(field_line(f, annotate, NARROWER))
    return lines


def model_base(c: ir.ModelClass) -> str:
    if c.closed:
        return "ClosedModel"
    renamed = any(f.py_name != f.wire_name and not f.required for f in c.fields)
    return "AliasedModel" if renamed else "McpModel"


def class_bases(c: ir.ModelClass, classes: Mapping[str, ir.ModelClass]) -> str:
    """What the class statement derives from: the runtime base its members
    need, or the class it extends, with that base beside it when the parent's
    lacks the hook (an optional renamed member needs `AliasedModel`)."""
    needed = model_base(c)
    if c.extends is None:
        return needed
    parent = classes[c.extends]
    if c.closed != parent.closed:  # no pass derives one; its config would need care
        raise BuildError(f"{c.name}: closed otherwise than {c.extends}, which it extends")
    if needed == "AliasedModel" and model_base(parent) == "McpModel":
        return f"{c.extends}, AliasedModel"
    return c.extends


def docstring(d: ir.Definition, version: str) -> str:
    if isinstance(d, ir.Alias):
        what = d.origin or f"definition ``{d.name}``"
    elif d.extends is not None:
        what = d.origin
    elif d.origin != d.name:
        what = f"inline object at ``{d.origin}``"
    else:
        what = f"definition ``{d.name}``"
    return f"MCP {version} {what}: {d.docs_url}"


def class_view(
    c: ir.ModelClass, version: str, shadowed: frozenset[str], classes: Mapping[str, ir.ModelClass]
) -> ClassView:
    annotate = Annotations(c.forward, shadowed)
    return ClassView(
        name=c.name,
        base=class_bases(c, classes),
        doc=docstring(c, version),
        fields=member_lines(c, annotate, classes),
        extra=annotate(c.extra_type) if c.extra_type is not None else None,
    )


def alias_view(
    a: ir.Alias,
    version: str,
    shadowed: frozenset[str],
    annotations: type[Annotations] = Annotations,
) -> AliasView:
    annotate = annotations(frozenset([a.name]) if a.recursive else frozenset(), shadowed)
    return AliasView(a.name, annotate(a.type), docstring(a, version), a.recursive)


def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )


def header(module: ir.Module) -> dict[str, str]:
    return {"version": module.key, "source": module.source, "sha256": module.sha256}


def shadowed_helpers(names: list[str], also: tuple[str, ...] = ()) -> frozenset[str]:
    """The ``typing`` helpers a definition of ``names`` takes the place of
    (``also``: what else the module imports)."""
    imported = {*TYPING_NAMES, *PYDANTIC_NAMES, *TYPING_EXTENSIONS_NAMES, *base_names(), *also}
    clashes = imported.intersection(names) - SHADOWABLE
    if clashes:
        raise BuildError(f"definitions named like imported helpers: {sorted(clashes)}")
    return SHADOWABLE.intersection(names)


def render_models(module: ir.Module, env: jinja2.Environment) -> str:
    imported = sorted(module.imported)
    names = sorted([d.name for d in module.definitions] + imported)
    shadowed = shadowed_helpers(names)
    classes = {c.name: c for c in module.classes}
    views = [
        class_view(d, module.key, shadowed, classes)
        if isinstance(d, ir.ModelClass)
        else alias_view(d, module.key, shadowed)
        for d in module.definitions
    ]
    return env.get_template("models.py.j2").render(
        header=header(module),
        import_typing=bool(shadowed),
        typing_names=[n for n in TYPING_NAMES if n not in shadowed],
        pydantic_names=PYDANTIC_NAMES,
        typing_extensions_names=TYPING_EXTENSIONS_NAMES,
        base_names=base_names(),
        definitions=views,
        reused_from=sorted(set(module.imported.values())),
        reused=imported,
        names=names,
    )


def name_literal(name: str | None) -> str:
    """A definition name as a Python literal (``None`` for none)."""
    return "None" if name is None else literal(name)


def render_methods(module: ir.Module, env: jinja2.Environment, base: ir.Module | None) -> str:
    own = {d.name for d in module.definitions} | set(module.imported)
    base_own = {d.name for d in base.definitions} | set(base.imported) if base else set()

    def home(entry: ir.RequestEntry | ir.NotificationEntry) -> str:
        """The package that holds every definition ``entry`` names: the module's
        own (with what it reuses), or its base's (an extension's input request
        whose params are an inline object of the base)."""
        if isinstance(entry, ir.RequestEntry):
            names = [entry.request, entry.params, entry.assumed_complete, *entry.results]
        else:
            names = [entry.notification, entry.params]
        named = {n for n in names if n is not None}
        if named <= own:
            return "PACKAGE"
        if base is not None and named <= base_own:
            return "BASE_PACKAGE"
        raise BuildError(f"{module.key}: no package holds all of {sorted(named)}")

    return env.get_template("methods.py.j2").render(
        header=header(module),
        module=module,
        home=home,
        name=name_literal,
        base_package=f"mcp_schema.{base.package}" if base is not None else None,
    )


def render_decoding(module: ir.Module, env: jinja2.Environment) -> str:
    results = [name for r in module.methods.requests for name in r.results]
    template = env.get_template("decoding.py.j2")
    template.environment.filters["qualify"] = lambda name: f"m.{name}"
    return template.render(
        header=header(module), module=module, results=sorted(dict.fromkeys(results))
    )


DECODING_NAMES = ["AnyNotification", "AnyRequest", "AnyResult", "decode_request", "decode_response"]
"""What a version package re-exports from its ``decoding`` module (not extensions)."""


METHOD_TABLE_NAMES = ["ERROR_MODEL", "ERROR_MODELS", "INPUT_REQUESTS", "NOTIFICATIONS", "REQUESTS"]
"""What a version package re-exports from its ``methods`` module, beside the error-code constants."""


def render_init(module: ir.Module, env: jinja2.Environment) -> str:
    return env.get_template("init.py.j2").render(
        header=header(module),
        module=module,
        names=sorted([*(d.name for d in module.definitions), *module.imported]),
        extension=module.extension,
        extension_name=module.extension.rpartition("/")[2] if module.extension else None,
        decoding=DECODING_NAMES if module.base is None else [],
        method_names=sorted(
            [*METHOD_TABLE_NAMES, *(e.constant for e in module.methods.error_codes)]
        ),
    )
