"""Locate, verify and patch the pinned upstream schemas.

The schemas are never copied into the repository: they are read from
``$MCP_SPEC_DIR`` or ``../shared/mcp-spec`` and checked against the sha256 in
``schema/pins.json`` before anything is generated from them or tested against
them. ``schema/overlays.json`` then fixes the known upstream defects (its
pointers address the upstream file as published). Draft-07 schemas (2024-11-05
to 2025-06-18) are then given the 2020-12 layout, ``$defs`` and
``#/$defs/...`` refs, so everything downstream reads one layout.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "schema"
DEFAULT_SPEC_DIR = ROOT.parent / "shared" / "mcp-spec"


class SpecError(RuntimeError):
    """The pinned schemas cannot be found or do not match their pins."""


@dataclass(frozen=True)
class Pin:
    key: str  # "2025-11-25", "2026-07-28", "2026-07-28/tasks"
    package: str  # dotted package below mcp_schema, e.g. "v2026_07_28.tasks"
    base: str | None  # the core schema an extension builds on
    repository: str
    commit: str
    path: str
    local: str
    sha256: str
    docs: str
    era: str | None = None  # "handshake" | "stateless"; an extension has its base's
    extension: str | None = None  # an extension's id, e.g. "io.modelcontextprotocol/tasks"

    @property
    def version(self) -> str:
        return self.key.split("/")[0]


@cache
def pins() -> dict[str, Pin]:
    raw = json.loads((SCHEMA_DIR / "pins.json").read_text())["schemas"]
    return {
        key: Pin(key=key, base=entry.get("base"), **{k: v for k, v in entry.items() if k != "base"})
        for key, entry in raw.items()
    }


def pins_sha256() -> str:
    """The digest of ``schema/pins.json``, which the generated registry names."""
    return hashlib.sha256((SCHEMA_DIR / "pins.json").read_bytes()).hexdigest()


def spec_dir() -> Path:
    env = os.environ.get("MCP_SPEC_DIR")
    return Path(env) if env else DEFAULT_SPEC_DIR


def raw_bytes(pin: Pin) -> bytes:
    where = spec_dir() / pin.local
    if not where.is_file():
        raise SpecError(
            f"missing schema {pin.key!r}: expected {where}\n"
            f"  upstream: {pin.repository} @ {pin.commit} : {pin.path}\n"
            f"  looked in $MCP_SPEC_DIR ({os.environ.get('MCP_SPEC_DIR', 'unset')}) "
            f"or the default {DEFAULT_SPEC_DIR}\n"
            "  provide it by setting MCP_SPEC_DIR to a folder laid out like shared/mcp-spec "
            "(<version>/schema.json, ext-tasks/<version>/schema.json)"
        )
    data = where.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != pin.sha256:
        raise SpecError(
            f"schema {pin.key!r} at {where} has sha256 {digest}, pinned {pin.sha256}\n"
            "  the file is not the pinned upstream revision: restore it, or update "
            "schema/pins.json deliberately (and run `make regen`)"
        )
    return data


@cache
def _overlays() -> list[dict[str, Any]]:
    overlays: list[dict[str, Any]] = json.loads((SCHEMA_DIR / "overlays.json").read_text())[
        "overlays"
    ]
    return overlays


def overlays_for(key: str) -> list[dict[str, Any]]:
    return [o for o in _overlays() if key in o["schemas"]]


def without_descriptions(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: without_descriptions(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [without_descriptions(v) for v in node]
    return node


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def apply_overlay(schema: dict[str, Any], overlay: dict[str, Any], key: str) -> None:
    *parents, last = [_unescape(t) for t in overlay["pointer"].split("/")[1:]]
    node: Any = schema
    for token in parents:
        node = node[int(token)] if isinstance(node, list) else node[token]
    slot: Any = int(last) if isinstance(node, list) else last
    current = node[slot]
    found = without_descriptions(current)
    if found == without_descriptions(overlay["value"]) and found != overlay["expect"]:
        raise SpecError(
            f"overlay {overlay['id']!r} is fixed upstream in {key!r} at {overlay['pointer']}: "
            "the schema now holds the overlay's value. Drop the overlay from "
            "schema/overlays.json (and its case in tests/codegen/test_overlays.py)."
        )
    if found != overlay["expect"]:
        raise SpecError(
            f"overlay {overlay['id']!r} no longer applies to {key!r} at {overlay['pointer']}: "
            f"found {json.dumps(without_descriptions(current))}, expected {json.dumps(overlay['expect'])}. "
            "Upstream changed; review the overlay in schema/overlays.json."
        )
    node[slot] = copy.deepcopy(overlay["value"])


DRAFT_07 = "http://json-schema.org/draft-07/schema#"


def with_defs_layout(schema: dict[str, Any]) -> dict[str, Any]:
    """A draft-07 schema's ``definitions`` as ``$defs``, its refs rewritten.

    The older schemas use only keywords whose meaning draft-07 and 2020-12
    share (no ``$ref`` siblings, no tuple ``items``), which ``load`` checks;
    only where definitions live differs. ``$schema`` keeps naming draft-07,
    so an oracle still picks the draft the schema was written in.
    """
    if "definitions" not in schema:
        return schema

    def rewrite(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                k: (
                    "#/$defs/" + v.removeprefix("#/definitions/")
                    if k == "$ref" and isinstance(v, str)
                    else rewrite(v)
                )
                for k, v in node.items()
            }
        if isinstance(node, list):
            return [rewrite(v) for v in node]
        return node

    out = {("$defs" if k == "definitions" else k): v for k, v in schema.items()}
    return cast("dict[str, Any]", rewrite(out))


def check_draft_07_subset(schema: dict[str, Any], key: str) -> None:
    """Refuse the draft-07 keywords whose meaning 2020-12 changed or dropped."""

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for sub in node:
                walk(sub)
            return
        if not isinstance(node, dict):
            return
        if "$ref" in node and set(node) - {"$ref", "description"}:
            raise SpecError(f"{key}: a draft-07 $ref with siblings means something else in 2020-12")
        if isinstance(node.get("items"), list) or {"additionalItems", "dependencies"} & set(node):
            raise SpecError(f"{key}: draft-07 tuple items or dependencies are not supported")
        for keyword, value in node.items():
            if keyword in ("properties", "definitions"):
                for sub in value.values():  # keys are names here, not keywords
                    walk(sub)
            elif keyword not in ("enum", "const", "required", "default", "examples"):
                walk(value)

    walk(list(schema.get("definitions", {}).values()))


@cache
def _load(key: str, patched: bool) -> dict[str, Any]:
    pin = pins()[key]
    schema: dict[str, Any] = json.loads(raw_bytes(pin))
    if patched:
        for overlay in overlays_for(key):
            apply_overlay(schema, overlay, key)
    if schema.get("$schema") == DRAFT_07:
        check_draft_07_subset(schema, key)
    return with_defs_layout(schema)


def load(key: str, *, patched: bool = True) -> dict[str, Any]:
    """The schema pinned as ``key``, with overlays applied unless ``patched=False``.

    Returns a fresh deep copy: callers may mutate it.
    """
    return copy.deepcopy(_load(key, patched))


def repeated_defs(key: str) -> frozenset[str]:
    """Defs an extension schema repeats verbatim from its base (overlays applied)."""
    base = pins()[key].base
    if base is None:
        return frozenset()
    own, core = _load(key, True)["$defs"], _load(base, True)["$defs"]
    return frozenset(name for name, sub in own.items() if core.get(name) == sub)
