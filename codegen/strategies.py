"""IR -> Hypothesis strategies: the generator's third output, beside models and methods.

Every class and alias of a prepared module (``passes.prepare``: definitions
ordered, alias cycles folded) gets a strategy of the same name in the version
package's ``strategies.py``, written with the building blocks of
``mcp_schema.json_strategies`` (``objects``, ``strings``, ``one_of``, ...).
A self-recursive alias (2026-07-28 ``JSONValue``) becomes a bounded
``recursive`` strategy whose leaves are the arms that do not recurse.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import jinja2

from . import ir, render
from .ir import BuildError, refs
from .names import snake
from .registry import ERROR_RESPONSES, RESULT_RESPONSES, response_envelope
from .render import literal, number_literal


@dataclass(frozen=True)
class StrategyView:
    name: str
    expression: str


def _call(function: str, *args: str, **options: str | None) -> str:
    given = [*args, *(f"{k}={v}" for k, v in options.items() if v is not None)]
    return f"{function}({', '.join(given)})"


class Expressions:
    """Prints type expressions as strategy expressions.

    ``inline`` maps names to print as something else: inside a recursive
    strategy, the recursing definition is the lambda's parameter.
    """

    def __init__(self, inline: Mapping[str, str] | None = None) -> None:
        self.inline = dict(inline or {})

    def __call__(self, t: ir.TypeExpr, format: str | None = None) -> str:
        if isinstance(t, ir.Scalar):
            return self.scalar(t, format)
        if isinstance(t, ir.Const):
            return _call("consts", *(literal(v) for v in t.values))
        if isinstance(t, ir.Ref):
            return self.inline.get(t.name, t.name)
        if isinstance(t, ir.Array):
            return _call(
                "arrays",
                self(t.item),
                min_size=_opt(t.min_items),
                max_size=_opt(t.max_items),
            )
        if isinstance(t, ir.Map):
            return _call("maps", self(t.value))
        if t.result_type_tags is not None:
            complete = next(
                m for m, tag in zip(t.members, t.result_type_tags, strict=True) if tag is None
            )
            others = ", ".join(
                f"{literal(tag)}: {self(m)}"
                for m, tag in zip(t.members, t.result_type_tags, strict=True)
                if tag is not None
            )
            return _call("result_types", self(complete), f"{{{others}}}")
        return _call("one_of", *(self(m) for m in flatten(t)))

    def scalar(self, t: ir.Scalar, format: str | None) -> str:
        if t.kind == "str":
            return _call(
                "strings",
                min_size=_opt(t.min_length),
                max_size=_opt(t.max_length),
                format=literal(format) if format else None,
            )
        if t.kind in ("int", "number"):
            return _call(
                "integers" if t.kind == "int" else "numbers",
                ge=None if t.minimum is None else number_literal(t.minimum),
                le=None if t.maximum is None else number_literal(t.maximum),
            )
        return {"bool": "booleans()", "null": "nulls()", "any": "any_json()"}[t.kind]


def _opt(value: int | None) -> str | None:
    return None if value is None else repr(value)


def flatten(t: ir.Union_) -> list[ir.TypeExpr]:
    """Members, with every nested union spliced in but one dispatched on ``resultType``."""
    return render.flatten(t, lambda u: u.result_type_tags is None)


def object_expression(c: ir.ModelClass, express: Expressions) -> str:
    def members(required: bool) -> str:
        entries = [
            f"{literal(f.wire_name)}: {express(f.type, f.format)}"
            for f in c.fields
            if f.required is required
        ]
        return "{" + ", ".join(entries) + "}"

    if c.closed:
        unknown = "None"
    elif c.extra_type is not None:
        unknown = _call("unknown_members", "MEMBER_NAMES", express(c.extra_type))
    else:
        unknown = "UNKNOWN_MEMBERS"
    return _call("objects", members(True), members(False), unknown=unknown)


def strategy_views(module: ir.Module) -> list[StrategyView]:
    """Every class and alias as a strategy, in the module's order (each after
    what it uses, alias cycles folded into one self-recursive alias)."""
    views: list[StrategyView] = []
    for d in module.definitions:
        if isinstance(d, ir.ModelClass):
            if d.forward:
                raise BuildError(f"strategies: cannot bound the class cycle through {d.name}")
            views.append(StrategyView(d.name, object_expression(d, Expressions())))
        elif d.recursive:
            views.append(StrategyView(d.name, recursive_expression(d)))
        else:
            views.append(StrategyView(d.name, Expressions()(d.type)))
    return views


def recursive_expression(root: ir.Alias) -> str:
    """A self-recursive union as a bounded ``recursive`` strategy: its arms
    that do not recurse are the leaves."""
    if not isinstance(root.type, ir.Union_):
        raise BuildError(f"strategies: cannot bound the recursion of {root.name}")
    param = snake(root.name)
    members = flatten(root.type)
    leaves = [m for m in members if root.name not in refs(m)]
    if not leaves:
        raise BuildError(f"strategies: {root.name} has no arm that ends the recursion")
    folded = Expressions({root.name: param})
    return _call(
        "recursive",
        _call("one_of", *(Expressions()(m) for m in leaves)),
        f"lambda {param}: {_call('one_of', *(folded(m) for m in members))}",
    )


def member_names(module: ir.Module, base: ir.Module | None) -> list[str]:
    """Every member name declared in the version, wire and attribute spelling."""
    classes = [*module.classes, *(base.classes if base is not None else ())]
    return sorted({n for c in classes for f in c.fields for n in (f.wire_name, f.py_name)})


def result_tag(c: ir.ModelClass | None) -> str | None:
    """The ``resultType`` a result class always carries, if it has one."""
    field = next((f for f in c.fields if f.wire_name == "resultType"), None) if c else None
    if field is None or not isinstance(field.type, ir.Const) or len(field.type.values) != 1:
        return None
    (tag,) = field.type.values
    return str(tag)


def answers_expression(
    entry: ir.RequestEntry, classes: Mapping[str, ir.ModelClass], q: Callable[[str], str]
) -> str:
    complete, *alternatives = entry.results
    tagged = {}
    untagged = []
    for name in alternatives:
        tag = result_tag(classes.get(name))
        if tag is None:
            untagged.append(q(name))
        else:
            tagged[tag] = q(name)
    options = {
        "tagged": "{" + ", ".join(f"{literal(t)}: {n}" for t, n in tagged.items()) + "}"
        if tagged
        else None,
        "untagged": f"({', '.join(untagged)},)" if untagged else None,
    }
    return _call("Answers", q(complete), **options)


def render_strategies(module: ir.Module, env: jinja2.Environment, base: ir.Module | None) -> str:
    own = {c.name for c in module.classes} | {a.name for a in module.aliases} | set(module.imported)

    def qualified(name: str) -> str:
        return name if name in own or base is None else f"base.{name}"

    classes = {c.name: c for c in (*(base.classes if base else ()), *module.classes)}
    tables = module.methods
    return env.get_template("strategies.py.j2").render(
        header=render.header(module),
        module=module,
        base_package=f"mcp_schema.{base.package}" if base is not None else None,
        reused=sorted(module.imported),
        member_names=member_names(module, base),
        definitions=strategy_views(module),
        schema_definitions=sorted([*module.schema_names, *module.imported]),
        models=sorted(c.name for c in module.classes),
        requests=[(r.method, qualified(r.request)) for r in tables.requests],
        notifications=[(n.method, qualified(n.notification)) for n in tables.notifications],
        answers=[(r.method, answers_expression(r, classes, qualified)) for r in tables.requests],
        errors=[(e.code, qualified(e.model)) for e in tables.error_codes],
        result_response=response_envelope(module, RESULT_RESPONSES),
        error_response=response_envelope(module, ERROR_RESPONSES),
        literal=literal,
    )
