"""The exceptions of ``mcp_schema.errors`` against every version's ``ERROR_MODELS``.

An exception class and the generated model of the same name describe one
error: the model either is the JSON-RPC ``error`` object (2026-07-28
``ParseError``) or is the whole error response, whose ``error`` member is
``<Name>Object`` (``HeaderMismatchError.error`` is ``HeaderMismatchErrorObject``).
A code the schema gives no model of its own maps to the generic
``ERROR_MODEL`` (``Error``; the draft-07 schemas' inline ``JSONRPCErrorObject``).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import get_args

import pytest

from codegen import spec
from mcp_schema.errors import ERROR_CLASSES

PACKAGES = [importlib.import_module(f"mcp_schema.{pin.package}") for pin in spec.pins().values()]


@pytest.mark.parametrize("package", PACKAGES, ids=[p.__name__ for p in PACKAGES])
def test_every_error_code_has_the_exception_of_the_same_name(package: ModuleType) -> None:
    for code, model in package.ERROR_MODELS.items():
        exception = ERROR_CLASSES.get(code)
        assert exception is not None, f"{package.__name__}: no exception class for {code}"
        assert exception.code == code
        name = exception.__name__
        if model is package.ERROR_MODEL:
            assert not hasattr(package, name), (
                f"{name} is defined but {code} maps to the generic model"
            )
            continue
        if model.__name__ != name:
            assert model.__name__ == f"{name}Object", (code, model.__name__, name)
            assert getattr(package, name).model_fields["error"].annotation is model
        assert get_args(model.model_fields["code"].annotation) == (code,)


def test_every_exception_code_is_some_version_s_error() -> None:
    codes = {code for package in PACKAGES for code in package.ERROR_MODELS}
    assert set(ERROR_CLASSES) == codes
