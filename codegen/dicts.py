"""IR -> the plain-dict view: one TypedDict per schema definition.

The same definitions as ``models.py``, under the same names, but typed as
the dicts a JSON parser returns: wire keys (the functional syntax where a key
is not a Python identifier), ``NotRequired`` for optional members. Pydantic
validates them with the models' rules (strict JSON numbers, absent-not-null,
the same unions) and hands back plain ``dict``/``list`` values.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass

import jinja2

from . import ir
from .render import (
    PYDANTIC_NAMES,
    TYPING_EXTENSIONS_NAMES,
    TYPING_NAMES,
    AliasView,
    Annotations,
    alias_view,
    base_names,
    docstring,
    header,
    literal,
    shadowed_helpers,
)

# What a dicts module imports beyond the models' helpers.
DICT_PYDANTIC_NAMES = ("with_config",)
DICT_TYPING_EXTENSIONS_NAMES = ("NotRequired", "TypedDict")


class DictAnnotations(Annotations):
    """Annotations whose discriminators name wire keys (a dict has no attributes)."""

    def discriminator(self, key: str) -> str:
        return key


@dataclass
class DictView:
    name: str
    doc: str
    config: str  # the base-module config that says what unknown keys do
    members: list[tuple[str, str]]  # wire key (a Python literal), annotation
    functional: bool  # some key is not an identifier: TypedDict("Name", {...})


def _identifier(key: str) -> bool:
    return key.isidentifier() and not keyword.iskeyword(key)


def member(f: ir.Field, annotate: Annotations) -> str:
    # A nullable member's type already admits null: optional means absent only.
    annotation = annotate(f.type)
    return annotation if f.required else f"NotRequired[{annotation}]"


def dict_view(c: ir.ModelClass, version: str, shadowed: frozenset[str]) -> DictView:
    if c.extra_type is not None:
        # No pinned schema types its unknown members; when one does, the view
        # needs PEP 728 `extra_items`, which mypy does not read yet.
        raise NotImplementedError(f"{c.name}: typed additionalProperties")
    annotate = DictAnnotations(c.forward, shadowed)
    functional = not all(_identifier(f.wire_name) for f in c.fields)
    return DictView(
        name=c.name,
        doc=docstring(c, version),
        config="CLOSED_DICT" if c.closed else "OPEN_DICT",
        members=[
            (literal(f.wire_name) if functional else f.wire_name, member(f, annotate))
            for f in c.fields
        ],
        functional=functional,
    )


def render_dicts(module: ir.Module, env: jinja2.Environment) -> str:
    imported = sorted(module.imported)
    names = sorted([d.name for d in module.definitions] + imported)
    shadowed = shadowed_helpers(names, DICT_PYDANTIC_NAMES + DICT_TYPING_EXTENSIONS_NAMES)
    views: list[DictView | AliasView] = [
        dict_view(d, module.key, shadowed)
        if isinstance(d, ir.ModelClass)
        else alias_view(d, module.key, shadowed, DictAnnotations)
        for d in module.definitions
    ]
    return env.get_template("dicts.py.j2").render(
        header=header(module),
        import_typing=bool(shadowed),
        typing_names=[n for n in TYPING_NAMES if n not in shadowed],
        pydantic_names=PYDANTIC_NAMES + DICT_PYDANTIC_NAMES,
        typing_extensions_names=TYPING_EXTENSIONS_NAMES + DICT_TYPING_EXTENSIONS_NAMES,
        base_names=base_names(),
        definitions=views,
        reused_from=sorted({f"{m.rpartition('.')[0]}.dicts" for m in module.imported.values()}),
        reused=imported,
        names=names,
    )
