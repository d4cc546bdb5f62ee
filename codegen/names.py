"""How the generator names things in Python: attributes, classes of inline
objects. One set of rules for every step (the builder names, the renderers
print discriminators and parameters by the same rules)."""

from __future__ import annotations

import keyword
import re

from pydantic import BaseModel

RESERVED = frozenset(dir(BaseModel)) | {"model_config", "model_fields"}
"""Attribute names a model cannot take: they get a trailing underscore."""


def snake(name: str) -> str:
    name = name.rsplit("/", 1)[-1].lstrip("$_")
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name)
    name = re.sub(r"[^0-9a-zA-Z_]", "_", name).lower()
    if keyword.iskeyword(name) or name in RESERVED or name.startswith("model_") or not name:
        name += "_"
    return name


def pascal(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^0-9a-zA-Z]+", snake(name)))


def member_name(parent: str, wire: str) -> str:
    """The class name of an inline object in member ``wire`` of class ``parent``."""
    part = pascal(wire)
    return parent + ("Object" if parent.endswith(part) else part)
