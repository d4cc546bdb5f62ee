"""IR -> Python source, through the Jinja templates in ``codegen/templates``.

This module turns type expressions into annotation strings and orders the
definitions; the templates only place the prepared strings.
"""

from __future__ import annotations

import heapq
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Union

import jinja2

from . import ir
from .build import BuildError, snake

TEMPLATES = Path(__file__).resolve().parent / "templates"

# Names a generated module may import, by where they come from, in isort's
# section order (standard library, third party, first party).
IMPORTABLE = (
    {"typing": ("TYPE_CHECKING", "Annotated", "Any", "Literal", "TypeAlias", "Union")},
    {
        "pydantic": ("Field", "StrictBool", "StrictStr", "StringConstraints", "Tag"),
        "typing_extensions": ("TypeAliasType",),
    },
    {
        "mcp_schema.base": (
            "ClosedModel",
            "Int",
            "JsonInt",
            "JsonNumber",
            "McpModel",
            "Number",
            "Omittable",
            "ResultTypeUnion",
        ),
    },
)


def literal(value: ir.JsonScalar) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)


def _num(value: float) -> str:
    return repr(int(value)) if float(value).is_integer() else repr(value)


class Annotations:
    """Prints type expressions; ``lazy`` names are quoted (not defined yet),
    ``shadowed`` helpers of ``typing`` are spelled ``typing.<name>`` because a
    definition of the same name takes their place (2024-11-05 ``Annotated``)."""

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
                f"{k}={_num(v)}" for k, v in (("ge", t.minimum), ("le", t.maximum)) if v is not None
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
            return f'{self.typing("Annotated")}[{joined}, Field(discriminator="{snake(t.discriminator)}")]'
        if t.by_required_key:
            return f'{self.typing("Annotated")}[{joined}, Field(union_mode="left_to_right")]'
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


def flatten(t: ir.Union_) -> list[ir.TypeExpr]:
    """Members, with nested plain unions spliced in (``A | (B | C)`` is ``A | B | C``)."""
    out: list[ir.TypeExpr] = []
    for m in t.members:
        if isinstance(m, ir.Union_) and m.discriminator is None:
            out.extend(flatten(m))
        else:
            out.append(m)
    return out


def field_line(f: ir.Field, annotate: Annotations) -> str:
    annotation = annotate(f.type)
    if not f.required:
        annotation = annotation if f.nullable else f"Omittable[{annotation}]"
    options = []
    if f.required is False:
        options.append("default=None")
    if f.py_name != f.wire_name:
        options.append(f"alias={literal(f.wire_name)}")
    if f.format:
        options.append(f'json_schema_extra={{"format": {literal(f.format)}}}')
    if not options:
        return f"{f.py_name}: {annotation}"
    if options == ["default=None"]:
        return f"{f.py_name}: {annotation} = None"
    return f"{f.py_name}: {annotation} = Field({', '.join(options)})"


def class_view(
    c: ir.ModelClass, version: str, lazy: frozenset[str], shadowed: frozenset[str]
) -> ClassView:
    annotate = Annotations(lazy, shadowed)
    inline = c.origin != c.name
    where = f"``{c.origin}``" if inline else f"``{c.name}``"
    kind = "inline object at" if inline else "definition"
    return ClassView(
        name=c.name,
        base="ClosedModel" if c.closed else "McpModel",
        doc=f"MCP {version} {kind} {where}: {c.docs_url}",
        fields=[field_line(f, annotate) for f in c.fields],
        extra=annotate(c.extra_type) if c.extra_type is not None else None,
    )


def fold_alias_cycles(module: ir.Module) -> None:
    """Fold each reference cycle of aliases into one self-recursive alias.

    (2026-07-28 JSONValue -> JSONObject -> JSONValue.) Type checkers resolve
    self-recursion, not mutual recursion: the cycle's union member gets the
    other members written out inside it, and they become plain aliases of it.
    """
    names = {a.name: a for a in module.aliases}
    deps = {a.name: {n for n in refs(a.type) if n in names} for a in module.aliases}
    for name in sorted(names):
        if not _reaches(name, name, deps):
            continue
        cycle = sorted(n for n in names if _reaches(n, n, deps) and _reaches(name, n, deps))
        root = next((n for n in cycle if isinstance(names[n].type, ir.Union_)), cycle[0])
        others = {n: names[n].type for n in cycle if n != root}
        names[root].type = substitute(names[root].type, others)
        names[root].recursive = True
        deps[root] = set()
        for n in others:
            deps[n] = {root}


Definition = Union[ir.ModelClass, ir.Alias]


def dependencies(d: Definition) -> set[str]:
    if isinstance(d, ir.Alias):
        return refs(d.type) - {d.name}
    found = set().union(*(refs(f.type) for f in d.fields))
    return found | (refs(d.extra_type) if d.extra_type is not None else set())


def ordered_definitions(module: ir.Module) -> list[tuple[Definition, frozenset[str]]]:
    """Every class and alias after what it uses, each with the names it must
    quote because they are defined later (only classes in a reference cycle).

    Evaluated annotations let pydantic skip compiling strings at import time;
    ties go by name so the order is stable.
    """
    fold_alias_cycles(module)
    defs: dict[str, Definition] = {c.name: c for c in module.classes}
    defs.update({a.name: a for a in module.aliases})
    deps = {name: dependencies(d) & defs.keys() for name, d in defs.items()}
    placed: set[str] = set()
    out: list[tuple[Definition, frozenset[str]]] = []
    ready = [n for n in defs if not deps[n]]
    heapq.heapify(ready)
    pending = set(defs) - set(ready)
    while ready or pending:
        if not ready:  # a cycle through classes: the first class goes ahead, quoting
            forced = min(
                (n for n in pending if isinstance(defs[n], ir.ModelClass)),
                key=lambda n: (len(deps[n] - placed), n),
            )
            pending.discard(forced)
            ready.append(forced)
        name = heapq.heappop(ready)
        out.append((defs[name], frozenset(deps[name] - placed)))
        placed.add(name)
        for other in sorted(pending):
            if deps[other] <= placed:
                pending.discard(other)
                heapq.heappush(ready, other)
    return out


def _reaches(start: str, goal: str, deps: dict[str, set[str]]) -> bool:
    seen: set[str] = set()
    todo = list(deps[start])
    while todo:
        n = todo.pop()
        if n == goal:
            return True
        if n not in seen:
            seen.add(n)
            todo.extend(deps[n])
    return False


def substitute(t: ir.TypeExpr, names: dict[str, ir.TypeExpr]) -> ir.TypeExpr:
    if isinstance(t, ir.Ref):
        return names.get(t.name, t)
    if isinstance(t, ir.Array):
        return ir.Array(substitute(t.item, names), t.min_items, t.max_items)
    if isinstance(t, ir.Map):
        return ir.Map(substitute(t.value, names))
    if isinstance(t, ir.Union_):
        return ir.Union_(
            tuple(substitute(m, names) for m in t.members),
            t.discriminator,
            t.result_type_tags,
            t.by_required_key,
        )
    return t


def refs(t: ir.TypeExpr) -> set[str]:
    if isinstance(t, ir.Ref):
        return {t.name}
    if isinstance(t, ir.Array):
        return refs(t.item)
    if isinstance(t, ir.Map):
        return refs(t.value)
    if isinstance(t, ir.Union_):
        return set().union(*(refs(m) for m in t.members))
    return set()


def alias_view(a: ir.Alias, version: str, shadowed: frozenset[str]) -> AliasView:
    annotate = Annotations(frozenset([a.name]) if a.recursive else frozenset(), shadowed)
    return AliasView(
        a.name,
        annotate(a.type),
        f"MCP {version} definition ``{a.name}``: {a.docs_url}",
        a.recursive,
    )


# Helpers of ``typing`` that a definition may shadow (Annotations spells them
# ``typing.<name>`` then); any other clash with an imported helper fails the build.
SHADOWABLE = frozenset({"Annotated", "Any", "Literal", "Union"})


def shadowed_helpers(names: list[str]) -> frozenset[str]:
    imported = {n for section in IMPORTABLE for helpers in section.values() for n in helpers}
    clashes = imported.intersection(names)
    if clashes - SHADOWABLE:
        raise BuildError(f"definitions named like imported helpers: {sorted(clashes)}")
    return frozenset(clashes)


def imports_for(body: str, shadowed: frozenset[str]) -> list[list[tuple[str, list[str]]]]:
    """The import sections the body needs, each a list of ``(module, names)``;
    no names means ``import module`` (for the shadowed ``typing`` helpers)."""
    sections = []
    for section in IMPORTABLE:
        used: list[tuple[str, list[str]]] = []
        if "typing" in section and shadowed:
            used.append(("typing", []))
        for module, names in section.items():
            found = [n for n in names if n not in shadowed and re.search(rf"\b{n}\b", body)]
            if found:
                used.append((module, found))
        if used:
            sections.append(used)
    return sections


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


def render_models(module: ir.Module, env: jinja2.Environment) -> str:
    imported = sorted(module.imported)
    names = sorted([c.name for c in module.classes] + [a.name for a in module.aliases] + imported)
    shadowed = shadowed_helpers(names)
    views: list[ClassView | AliasView] = [
        class_view(d, module.key, lazy, shadowed)
        if isinstance(d, ir.ModelClass)
        else alias_view(d, module.key, shadowed)
        for d, lazy in ordered_definitions(module)
    ]
    body = env.get_template("models_body.py.j2").render(definitions=views)
    return env.get_template("models.py.j2").render(
        header=header(module),
        imports=imports_for(body, shadowed),
        body=body,
        reused_from=sorted(set(module.imported.values())),
        reused=imported,
        names=names,
    )


def render_methods(module: ir.Module, env: jinja2.Environment, base: ir.Module | None) -> str:
    own = {c.name for c in module.classes} | {a.name for a in module.aliases} | set(module.imported)

    def qualified(name: str | None) -> str:
        if name is None:
            return "None"
        return f"m.{name}" if name in own or base is None else f"base.{name}"

    return env.get_template("methods.py.j2").render(
        header=header(module),
        module=module,
        q=qualified,
        base_package=f"mcp_schema.{base.package}" if base is not None else None,
    )


def render_init(module: ir.Module, env: jinja2.Environment) -> str:
    own = sorted([c.name for c in module.classes] + [a.name for a in module.aliases])
    return env.get_template("init.py.j2").render(
        header=header(module),
        module=module,
        names=sorted(own + list(module.imported)),
        extension=module.key.split("/")[1] if "/" in module.key else None,
    )
