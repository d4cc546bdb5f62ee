"""What changed between two protocol versions, read from their generated models
(hand-written runtime module; the runtime never imports the generator).

A definition is a name a version package exports: a model class (its members
by wire name, each required or not, with its type as text) or an alias (its
type as text). `diff` compares two versions definition by definition and member
by member; `mcp_schema.projection` asks the same diff which members a target
version lacks, so the two cannot disagree.
"""

from __future__ import annotations

import importlib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any, Union

from pydantic import BaseModel

from mcp_schema._args import check
from mcp_schema.versions import protocol

__all__ = ["Definition", "DefinitionChange", "Member", "VersionDiff", "definitions", "diff"]


@dataclass(frozen=True)
class Member:
    wire: str
    required: bool
    type: str

    def text(self) -> str:
        return f"{self.wire}{'' if self.required else '?'}: {self.type}"


@dataclass(frozen=True)
class Definition:
    name: str
    members: Mapping[str, Member] | None
    """By wire name; None for an alias (a union or a scalar type)."""
    type: str | None
    """The aliased type; None for a model class."""


@dataclass(frozen=True)
class DefinitionChange:
    name: str
    added: tuple[Member, ...]
    removed: tuple[Member, ...]
    changed: tuple[tuple[Member, Member], ...]
    type: tuple[str | None, str | None] | None
    """(old, new) when the definition changed kind or aliased type."""


@dataclass(frozen=True)
class VersionDiff:
    old: str
    new: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[DefinitionChange, ...]

    @cached_property
    def _removed_members(self) -> Mapping[str, frozenset[str]]:
        return {c.name: frozenset(m.wire for m in c.removed) for c in self.changed}

    def removed_members(self, name: str) -> frozenset[str]:
        """Wire names ``name`` has in the old version and not in the new one."""
        check(name, str, "name")
        return self._removed_members.get(name, frozenset())

    def to_json(self) -> dict[str, Any]:
        return {
            "from": self.old,
            "to": self.new,
            "added": list(self.added),
            "removed": list(self.removed),
            "changed": {
                c.name: {
                    "added": {m.wire: _member_json(m) for m in c.added},
                    "removed": {m.wire: _member_json(m) for m in c.removed},
                    "changed": {
                        a.wire: {"from": _member_json(a), "to": _member_json(b)}
                        for a, b in c.changed
                    },
                    **({"type": {"from": c.type[0], "to": c.type[1]}} if c.type else {}),
                }
                for c in self.changed
            },
        }

    def to_text(self) -> str:
        lines = [f"{self.old} -> {self.new}"]
        lines += [f"+ {name}" for name in self.added]
        lines += [f"- {name}" for name in self.removed]
        for c in self.changed:
            lines.append(f"~ {c.name}")
            if c.type:
                lines.append(f"    type: {c.type[0]} -> {c.type[1]}")
            lines += [f"    + {m.text()}" for m in c.added]
            lines += [f"    - {m.text()}" for m in c.removed]
            lines += [f"    ~ {a.text()} -> {b.text()}" for a, b in c.changed]
        counts = (
            f"{len(self.added)} added, {len(self.removed)} removed, "
            f"{len(self.changed)} changed definitions"
        )
        return "\n".join([*lines, counts]) + "\n"


def _member_json(member: Member) -> dict[str, Any]:
    return {"required": member.required, "type": member.type}


def _type_text(annotation: Any, *, optional: bool = False) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_text(args[0], optional=optional)
    if origin in (Union, types.UnionType):
        # An omittable member reads None when absent; the wire never carries it.
        arms = [a for a in args if not (optional and a is type(None))]
        return " | ".join(_type_text(a) for a in arms)
    if origin is typing.Literal:
        return " | ".join(repr(a) for a in args)
    if annotation is type(None):
        return "None"
    if annotation is Any:
        return "Any"
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{', '.join(_type_text(a) for a in args)}]"
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation)


def _definition(name: str, value: Any) -> Definition:
    if isinstance(value, type) and issubclass(value, BaseModel):
        members = {}
        for attr, field in value.model_fields.items():
            wire = field.serialization_alias or field.alias or attr
            required = field.is_required()
            members[wire] = Member(
                wire, required, _type_text(field.annotation, optional=not required)
            )
        return Definition(name, dict(sorted(members.items())), None)
    return Definition(name, None, _type_text(value))


@cache
def definitions(version: str) -> Mapping[str, Definition]:
    """The definitions of ``version``'s models, by name (imports its package)."""
    compiled = protocol(version)
    if compiled is None:
        raise ValueError(f"no models for protocol version {version!r}")
    models = importlib.import_module(f"{compiled.package}.models")
    return {name: _definition(name, getattr(models, name)) for name in sorted(models.__all__)}


@cache
def diff(old: str, new: str) -> VersionDiff:
    """Definitions and members added, removed and changed from ``old`` to ``new``."""
    before, after = definitions(old), definitions(new)
    changes = []
    for name in sorted(before.keys() & after.keys()):
        a, b = before[name], after[name]
        mine, theirs = a.members or {}, b.members or {}
        change = DefinitionChange(
            name,
            added=tuple(theirs[w] for w in sorted(theirs.keys() - mine.keys())),
            removed=tuple(mine[w] for w in sorted(mine.keys() - theirs.keys())),
            changed=tuple(
                (mine[w], theirs[w])
                for w in sorted(mine.keys() & theirs.keys())
                if mine[w] != theirs[w]
            ),
            type=(a.type, b.type)
            if (a.members is None, a.type) != (b.members is None, b.type)
            else None,
        )
        if change.added or change.removed or change.changed or change.type:
            changes.append(change)
    return VersionDiff(
        old,
        new,
        added=tuple(sorted(after.keys() - before.keys())),
        removed=tuple(sorted(before.keys() - after.keys())),
        changed=tuple(changes),
    )
