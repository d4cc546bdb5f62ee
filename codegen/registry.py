"""The version registry: ``generated/mcp_schema/registry.py`` lists every
pinned schema, and each version package gets a ``tables.py`` naming the
definitions the codec dispatches on (see ``src/mcp_schema/tables.py``).

What the schemas cannot say (a version's era, an extension's id) comes from
``schema/pins.json`` on the built modules (``ir.Module.era``, ``extension``);
the rest is read off their definitions.
"""

from __future__ import annotations

import jinja2

from . import ir
from .ir import BuildError
from .render import header, name_literal

COMPLETE = "complete"
"""The ``resultType`` of a complete result: not an alternative to one."""


def era_of(module: ir.Module, base: ir.Module | None) -> str:
    """A version's era; an extension's is its base's."""
    era = module.era if base is None else base.era
    if era not in ("handshake", "stateless"):
        raise BuildError(f'{module.key}: pins.json needs "era": "handshake" or "stateless"')
    return era


def result_arms(module: ir.Module, era: str) -> dict[str, str]:
    """Results that may stand in for a complete one, by tag, in tag order.

    Stateless era: every result of the schema's own whose ``resultType`` is
    a constant other than complete, tagged by that constant. Handshake era:
    the alternatives the method tables name, each tagged by the one member it
    requires (which the complete results never declare).
    """
    classes = {c.name: c for c in module.classes}
    arms: dict[str, str] = {}
    if era == "stateless":
        for cls in module.classes:
            for f in cls.fields:
                tags = f.type.values if isinstance(f.type, ir.Const) else ()
                if f.wire_name == "resultType" and len(tags) == 1 and tags[0] != COMPLETE:
                    arms[str(tags[0])] = cls.name
        return dict(sorted(arms.items()))
    for entry in module.methods.requests:
        for name in entry.results[1:]:
            required = [f.wire_name for f in classes[name].fields if f.required]
            if len(required) != 1:
                raise BuildError(
                    f"{module.key}: alternative result {name} must require exactly one member "
                    f"to be told apart from complete results, not {required}"
                )
            arms[required[0]] = name
    return dict(sorted(arms.items()))


RESULT_RESPONSES = ("JSONRPCResultResponse", "JSONRPCResponse")
ERROR_RESPONSES = ("JSONRPCErrorResponse", "JSONRPCError")
"""The JSON-RPC response envelopes by schema name: 2025-11-25 on, then the
draft-07 schemas' names (2024-11-05 to 2025-06-18)."""


def response_envelope(module: ir.Module, names: tuple[str, ...]) -> str | None:
    """The first of ``names`` the schema defines (or reuses from its base)."""
    known = {c.name for c in module.classes} | set(module.imported)
    return next((name for name in names if name in known), None)


def error_class(module: ir.Module) -> str:
    """The class of the ``error`` member of the schema's error response
    (``Error``; older schemas declare it inline, where it gets its own name)."""
    known = {c.name: c for c in module.classes} | dict.fromkeys(module.imported)
    for response in ERROR_RESPONSES:
        cls = known.get(response)
        if cls is None:
            continue
        if not isinstance(cls, ir.ModelClass):
            return "Error"  # imported from the base, which names it so
        for f in cls.fields:
            if f.wire_name == "error" and isinstance(f.type, ir.Ref):
                return f.type.name
    if "Error" in known:  # an extension schema repeats its base's Error alone
        return "Error"
    raise BuildError(f"{module.key}: no JSON-RPC error response with an `error` class")


def loader_name(module: ir.Module) -> str:
    return "_load_" + module.package.replace(".", "_")


def render_tables(module: ir.Module, env: jinja2.Environment, base: ir.Module | None) -> str:
    defined = {c.name for c in module.classes} | {a.name for a in module.aliases}
    # A version's own definitions; an extension's tables leave them to its base.
    own = {
        field: name if name in defined and base is None else None
        for field, name in (
            ("client_capabilities", "ClientCapabilities"),
            ("implementation", "Implementation"),
        )
    }
    return env.get_template("tables.py.j2").render(
        header=header(module),
        module=module,
        arms=result_arms(module, era_of(module, base)),
        own=own,
        error=error_class(module),
        name=name_literal,
    )


def notification_unions(registry: ir.Registry) -> list[tuple[str, list[str]]]:
    """Each notification of the core versions, by its definition's name, as
    the classes ``decode`` gives for it in every version that has it (the
    type of a helper that builds it for any version)."""
    by_name: dict[str, list[str]] = {}
    for module in registry.modules.values():
        if module.base is not None:
            continue  # an extension's: not built by version
        extended = {c.name: c.extends for c in module.classes if c.extends is not None}
        for entry in module.methods.notifications:
            name = extended.get(entry.notification) or entry.notification
            by_name.setdefault(name, []).append(f"{module.package}.{entry.notification}")
    return sorted(by_name.items())


def newest_stateless(registry: ir.Registry) -> str | None:
    """The package of the newest stateless-era version, if one is compiled."""
    stateless = [
        m.package
        for m in registry.modules.values()
        if m.base is None and era_of(m, None) == "stateless"
    ]
    return stateless[-1] if stateless else None


def render_registry(registry: ir.Registry, env: jinja2.Environment) -> str:
    entries = []
    for key, module in registry.modules.items():
        if module.base is not None and not module.extension:
            raise BuildError(f'{key}: pins.json needs the "extension" id of an extension schema')
        entries.append(
            {
                "key": key,
                "version": module.version,
                "era": era_of(module, registry.base_of(module)),
                "package": f"mcp_schema.{module.package}",
                "extension": module.extension if module.base is not None else None,
                "loader": loader_name(module),
            }
        )
    core = [m.package for m in registry.modules.values() if m.base is None]
    return env.get_template("registry.py.j2").render(
        entries=entries,
        pins_sha256=registry.pins_sha256,
        core=core,
        notifications=notification_unions(registry),
        newest_stateless=newest_stateless(registry),
    )
