"""Results as ``assume_complete`` reads them: ``resultType`` may be absent.

From 2026-07-28 a result carries a required ``resultType``. A server of the
handshake era sends none; the codec option ``assume_complete`` reads such a
result as complete and keeps the member absent, so that encoding gives back
what was sent. For the complete result of every request method whose
``resultType`` is required this pass adds ``<Name>AssumedComplete``: for a
class, a subclass whose ``resultType`` is optional (never null); for a union
of results (the Tasks extension's ``GetTaskResult``), the union of its arms'
variants. The method tables name it.
"""

from __future__ import annotations

from dataclasses import replace

from . import ir
from .ir import BuildError

RESULT_TYPE = "resultType"
SUFFIX = "AssumedComplete"


def add_assumed_complete(module: ir.Module) -> ir.Module:
    variants = _Variants(module)
    requests = tuple(
        replace(r, assumed_complete=variants.of(r.results[0])) for r in module.methods.requests
    )
    return replace(
        module,
        definitions=(*module.definitions, *variants.added),
        methods=replace(module.methods, requests=requests),
    )


class _Variants:
    def __init__(self, module: ir.Module) -> None:
        self.definitions = {d.name: d for d in module.definitions}
        self.imported = module.imported
        self.taken = set(self.definitions) | set(module.imported)
        self.added: list[ir.Definition] = []
        self._made: dict[str, str | None] = {}

    def of(self, name: str) -> str | None:
        """The variant of definition ``name``; None when it requires no ``resultType``."""
        if name not in self._made:
            self._made[name] = self._make(name)
        return self._made[name]

    def _make(self, name: str) -> str | None:
        d = self.definitions.get(name)
        if d is None:
            if name in self.imported:
                # Its variant would belong beside it, in the base package.
                raise BuildError(f"{name} is reused from the base schema: no variant of it here")
            raise BuildError(f"no definition {name!r} to read with assume_complete")
        if isinstance(d, ir.Alias):
            variant_type = self._type(d.type)
            if variant_type == d.type:
                return None
            return self._add(
                ir.Alias(
                    name=name + SUFFIX,
                    docs_url=d.docs_url,
                    type=variant_type,
                    origin=f"``{name}`` with ``{RESULT_TYPE}`` optional in every arm "
                    "(``assume_complete``)",
                ),
                name,
            )
        field = next((f for f in d.fields if f.wire_name == RESULT_TYPE and f.required), None)
        if field is None:
            return None
        optional = replace(field, required=False, nullable=False, preset=None)
        return self._add(
            ir.ModelClass(
                name=name + SUFFIX,
                origin=f"``{d.origin}`` with ``{RESULT_TYPE}`` optional (``assume_complete``)",
                docs_url=d.docs_url,
                fields=tuple(optional if f is field else f for f in d.fields),
                closed=d.closed,
                extra_type=d.extra_type,
                extends=name,
            ),
            name,
        )

    def _type(self, t: ir.TypeExpr) -> ir.TypeExpr:
        """A result type with every result in it replaced by its variant."""
        if isinstance(t, ir.Ref):
            variant = self.of(t.name)
            return ir.Ref(variant) if variant is not None else t
        if isinstance(t, ir.Union_):
            return replace(t, members=tuple(self._type(m) for m in t.members))
        return t

    def _add(self, d: ir.Definition, of: str) -> str:
        if d.name in self.taken:
            raise BuildError(f"{of}: the name of its variant {d.name!r} is taken already")
        self.taken.add(d.name)
        self.added.append(d)
        return d.name
