"""Whole JSON-RPC messages for the draft-07 schemas (2024-11-05 to 2025-06-18).

Those schemas define a request such as ``CallToolRequest`` by its ``method``
and ``params`` only; ``jsonrpc`` and ``id`` live in the ``JSONRPCRequest``
envelope, and a message on the wire is valid as both (``allOf``). For every
request and notification of the method tables that lacks envelope members,
this pass adds ``JSONRPC<Name>``: a subclass of ``<Name>`` that accepts
exactly what the two accept together, and points the tables at it. A
definition that declares ``jsonrpc`` is a whole message already (2025-11-25
on, where messages are defined by ``allOf`` with their envelope).

A member both declare takes both types. ``params`` is an object on either
side, so it becomes ``JSONRPC<Params>``, the message's params class extended
by the envelope's ``params`` in turn: the envelope alone types
``params._meta.progressToken``, which a params class without ``_meta``
would otherwise accept as anything. A member class the envelope adds nothing
to stays as it is. Later schemas define whole messages: nothing to do.
"""

from __future__ import annotations

from dataclasses import replace

from . import ir
from .build import preset
from .ir import BuildError

REQUEST_ENVELOPE = "JSONRPCRequest"
NOTIFICATION_ENVELOPE = "JSONRPCNotification"
PREFIX = "JSONRPC"
"""``JSONRPC<Name>``: the envelope's prefix, on the message and its member classes."""


def add_whole_messages(module: ir.Module) -> ir.Module:
    merger = _Merger(module)
    tables = module.methods
    requests = tuple(
        replace(r, request=merger.message(r.request, REQUEST_ENVELOPE)) for r in tables.requests
    )
    notifications = tuple(
        replace(n, notification=merger.message(n.notification, NOTIFICATION_ENVELOPE))
        for n in tables.notifications
    )
    return replace(
        module,
        definitions=(*module.definitions, *merger.added),
        methods=replace(tables, requests=requests, notifications=notifications),
    )


class _Merger:
    def __init__(self, module: ir.Module) -> None:
        self.classes = {c.name: c for c in module.classes}
        self.taken = {d.name for d in module.definitions} | set(module.imported)
        self.added: list[ir.ModelClass] = []
        self._merged: dict[tuple[str, str], str] = {}

    def message(self, name: str, envelope_name: str) -> str:
        """The whole message of definition ``name``: itself when the schema
        defines it whole (it declares ``jsonrpc``) or it is reused from a base."""
        cls = self.classes.get(name)
        if cls is None or any(f.wire_name == "jsonrpc" for f in cls.fields):
            return name
        envelope = self.classes.get(envelope_name)
        if envelope is None:
            raise BuildError(f"{name}: no {envelope_name} to complete the message with")
        return self.merged(cls, envelope)

    def merged(self, cls: ir.ModelClass, envelope: ir.ModelClass) -> str:
        """``cls`` with the members of ``envelope`` too: ``cls`` itself when
        that changes nothing, else its ``JSONRPC<Name>`` subclass."""
        key = (cls.name, envelope.name)
        if key in self._merged:
            return self._merged[key]
        if cls.closed or envelope.closed or cls.extra_type or envelope.extra_type:
            # A closed side would refuse the other's members: allOf of the two is
            # no subclass then. No pinned schema closes a message or its params.
            raise BuildError(f"{cls.name}: cannot merge {envelope.name} into a closed object")
        fields = list(cls.fields)
        at = {f.wire_name: i for i, f in enumerate(fields)}
        for theirs in envelope.fields:
            if theirs.wire_name not in at:
                fields.append(theirs)
                continue
            ours = fields[at[theirs.wire_name]]
            both = self.both(ours.type, theirs.type, f"{cls.origin}.{ours.wire_name}")
            required = ours.required or theirs.required
            fields[at[theirs.wire_name]] = replace(
                ours,
                type=both,
                required=required,
                nullable=ours.nullable and theirs.nullable,
                preset=preset(ours.wire_name, both) if required else None,
            )
        if tuple(fields) == cls.fields:
            self._merged[key] = cls.name
            return cls.name
        name = PREFIX + cls.name
        if name in self.taken:
            raise BuildError(f"{cls.origin}: class name {name!r} is taken already")
        self.taken.add(name)
        self._merged[key] = name
        self.added.append(
            ir.ModelClass(
                name=name,
                origin=f"``{cls.origin}`` with the members of ``{envelope.origin}``",
                docs_url=cls.docs_url,
                fields=tuple(fields),
                closed=False,
                extends=cls.name,
            )
        )
        return name

    def both(self, ours: ir.TypeExpr, theirs: ir.TypeExpr, origin: str) -> ir.TypeExpr:
        """The type of a member both declare: what both types accept.

        Only the pairs the envelopes meet are known; anything else fails the
        build rather than being guessed.
        """
        if ours == theirs or theirs == ir.Scalar("any"):
            return ours
        if ours == ir.Scalar("any"):
            return theirs
        if (
            isinstance(ours, ir.Const)
            and theirs == ir.Scalar("str")
            and all(isinstance(v, str) for v in ours.values)
        ):
            return ours  # method: a const string is a string
        any_object = ir.Map(ir.Scalar("any"))
        if isinstance(ours, ir.Ref) and ours.name in self.classes:
            if theirs == any_object:
                return ours
            if isinstance(theirs, ir.Ref) and theirs.name in self.classes:
                return ir.Ref(self.merged(self.classes[ours.name], self.classes[theirs.name]))
        if ours == any_object and isinstance(theirs, ir.Ref) and theirs.name in self.classes:
            return theirs
        raise BuildError(
            f"{origin}: cannot type a member as both {ours} and the envelope's {theirs}"
        )
