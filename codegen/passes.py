"""IR passes between building and printing; each returns a new module.

``prepare`` is what ``render.py`` expects: alias cycles folded, then every
definition placed after what it uses.
"""

from __future__ import annotations

import heapq
from dataclasses import replace

from . import ir
from .ir import BuildError, refs


def prepare(module: ir.Module) -> ir.Module:
    return ordered(fold_alias_cycles(module))


def fold_alias_cycles(module: ir.Module) -> ir.Module:
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
        names[root] = replace(
            names[root], type=substitute(names[root].type, others), recursive=True
        )
        deps[root] = set()
        for n in others:
            deps[n] = {root}
    return replace(
        module,
        definitions=tuple(
            names[d.name] if isinstance(d, ir.Alias) else d for d in module.definitions
        ),
    )


def ordered(module: ir.Module) -> ir.Module:
    """Every class and alias after what it uses; a class in a reference cycle
    goes first and records in ``forward`` the names it must quote.

    Evaluated annotations let pydantic skip compiling strings at import time;
    ties go by name so the order is stable.
    """
    defs = {d.name: d for d in module.definitions}
    deps = {name: dependencies(d) & defs.keys() for name, d in defs.items()}
    placed: set[str] = set()
    out: list[ir.Definition] = []
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
        d = defs[name]
        forward = frozenset(deps[name] - placed)
        if isinstance(d, ir.ModelClass) and d.extends in forward:
            raise BuildError(f"{name}: its base class {d.extends} is part of a reference cycle")
        out.append(replace(d, forward=forward) if isinstance(d, ir.ModelClass) else d)
        placed.add(name)
        for other in sorted(pending):
            if deps[other] <= placed:
                pending.discard(other)
                heapq.heappush(ready, other)
    return replace(module, definitions=tuple(out))


def dependencies(d: ir.Definition) -> set[str]:
    if isinstance(d, ir.Alias):
        return refs(d.type) - {d.name}
    found = set().union(*(refs(f.type) for f in d.fields))
    if d.extends is not None:
        found.add(d.extends)
    return found | (refs(d.extra_type) if d.extra_type is not None else set())


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
        return replace(t, item=substitute(t.item, names))
    if isinstance(t, ir.Map):
        return replace(t, value=substitute(t.value, names))
    if isinstance(t, ir.Union_):
        return replace(t, members=tuple(substitute(m, names) for m in t.members))
    return t
