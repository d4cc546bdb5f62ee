"""The generated registry agrees with the pins, and naming a version is cheap."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from dataclasses import replace
from types import MappingProxyType

import pytest

from codegen import ir, render, spec
from codegen.generate import build_all
from codegen.registry import render_registry
from mcp_schema import SUPPORTED_VERSIONS, versions
from mcp_schema.registry import COMPILED


def test_registry_lists_every_pin_in_order() -> None:
    pins = spec.pins()
    assert [c.key for c in COMPILED] == list(pins)
    for compiled in COMPILED:
        pin = pins[compiled.key]
        assert compiled.package == f"mcp_schema.{pin.package}"
        assert compiled.version == pin.version
        base = pins[pin.base] if pin.base is not None else pin
        assert compiled.era == base.era
        assert compiled.extension == pin.extension


RENDERERS = ("render", "dicts", "strategies", "registry", "validation")
"""The steps that print: each reads the IR it is given."""


@pytest.mark.parametrize("renderer", RENDERERS)
def test_a_renderer_imports_the_ir_and_no_step_before_it(renderer: str) -> None:
    tree = ast.parse((spec.ROOT / "codegen" / f"{renderer}.py").read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            imported |= {node.module} if node.module else {a.name for a in node.names}
    assert imported <= {"ir", "names", *RENDERERS}, imported


def test_each_module_carries_what_its_pin_says() -> None:
    built = build_all()
    pins = spec.pins()
    assert list(built.modules) == list(pins)
    assert built.pins_sha256 == spec.pins_sha256()
    for key, module in built.modules.items():
        pin = pins[key]
        assert (module.base, module.extension, module.era) == (pin.base, pin.extension, pin.era)
        assert built.base_of(module) is (built.modules[pin.base] if pin.base else None)


def _registry(*modules: ir.Module) -> ir.Registry:
    return ir.Registry(MappingProxyType({m.key: m for m in modules}), "0")


def test_the_registry_refuses_a_version_without_an_era_and_an_extension_without_an_id() -> None:
    version = ir.Module("2027-01-01", "2027-01-01", "v2027_01_01", "0", "test", (), era="stateless")
    extension = replace(version, key="2027-01-01/x", package="v2027_01_01.x", base=version.key)
    env = render.environment()
    with pytest.raises(ir.BuildError, match='needs "era"'):
        render_registry(_registry(replace(version, era=None)), env)
    with pytest.raises(ir.BuildError, match=r'^2027-01-01/x: .* "extension" id'):
        render_registry(_registry(version, extension), env)
    with_id = replace(extension, extension="io.example/x")
    assert 'extension="io.example/x"' in render_registry(_registry(version, with_id), env)


def test_versions_and_eras() -> None:
    assert SUPPORTED_VERSIONS == tuple(sorted(c.version for c in COMPILED if c.extension is None))
    assert set(versions.HANDSHAKE_VERSIONS) | set(versions.STATELESS_VERSIONS) == set(
        SUPPORTED_VERSIONS
    )
    assert versions.DEFAULT_VERSION == versions.HANDSHAKE_VERSIONS[-1] == "2025-11-25"
    assert versions.STATELESS_VERSIONS == ("2026-07-28",)
    assert list(versions.extensions_of("2026-07-28")) == [versions.TASKS_EXTENSION]
    assert versions.extensions_of("2025-11-25") == {}


def test_tables_hold_the_classes_of_their_package() -> None:
    for compiled in COMPILED:
        tables = compiled.load()
        package = importlib.import_module(compiled.package)
        assert tables.request is package.JSONRPCRequest
        assert tables.result is package.Result
        assert tables.error is package.ERROR_MODEL
        assert dict(tables.requests) == dict(package.REQUESTS)
        assert dict(tables.error_models) == dict(package.ERROR_MODELS)


def test_result_arms_are_classes_by_tag() -> None:
    from mcp_schema import v2025_11_25, v2026_07_28
    from mcp_schema.v2026_07_28 import tasks

    arms = {c.key: dict(c.load().result_arms) for c in COMPILED}
    assert arms["2025-11-25"] == {"task": v2025_11_25.CreateTaskResult}
    assert arms["2026-07-28"] == {"input_required": v2026_07_28.InputRequiredResult}
    assert arms["2026-07-28/tasks"] == {"task": tasks.CreateTaskResult}


def test_naming_versions_imports_no_version_package() -> None:
    # Nor typing_extensions: what the registry's records need is stdlib.
    script = (
        "import sys, mcp_schema.versions\n"
        "prefixes = ('mcp_schema.v', 'pydantic', 'typing_extensions')\n"
        "loaded = [m for m in sys.modules if m.startswith(prefixes)]\n"
        "assert loaded == ['mcp_schema.versions'], loaded\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


def test_tables_name_the_error_class_of_the_error_response() -> None:
    from codegen.registry import error_class

    def module(*classes: ir.ModelClass) -> ir.Module:
        return ir.Module(
            key="2024-11-05",
            version="2024-11-05",
            package="v2024_11_05",
            sha256="0",
            source="test",
            definitions=classes,
        )

    def response(name: str, error: str) -> ir.ModelClass:
        field = ir.Field("error", "error", ir.Ref(error), required=True, nullable=False)
        return ir.ModelClass(name, name, "", (field,), closed=False)

    # Older schemas declare the error object inline in JSONRPCError.
    assert error_class(module(response("JSONRPCError", "JSONRPCErrorError"))) == "JSONRPCErrorError"
    assert error_class(module(response("JSONRPCErrorResponse", "Error"))) == "Error"


def test_importing_a_version_package_creates_no_class_until_one_is_asked_for() -> None:
    script = (
        "import sys, mcp_schema.v2026_07_28 as package\n"
        "def loaded():\n"
        "    return sorted(m for m in sys.modules if m.startswith('mcp_schema.v2026_07_28.'))\n"
        "assert loaded() == [], loaded()\n"
        "assert 'pydantic' not in sys.modules\n"
        "assert package.CallToolRequest.__name__ == 'CallToolRequest'\n"
        "assert loaded() == ['mcp_schema.v2026_07_28.models'], loaded()\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


def test_every_exported_name_resolves_from_its_module() -> None:
    for compiled in COMPILED:
        package = importlib.import_module(compiled.package)
        homes = vars(package)["_HOME"]
        fixed = {"VERSION", "EXTENSION"}
        assert set(homes) == set(package.__all__) - fixed, compiled.key
        assert set(package.__all__) <= set(dir(package))
        for name, home in homes.items():
            module = importlib.import_module(f"{compiled.package}.{home}")
            assert getattr(package, name) is getattr(module, name), (compiled.key, name)
        assert package.models is importlib.import_module(f"{compiled.package}.models")
        try:
            package.NoSuchName  # noqa: B018
        except AttributeError:
            pass
        else:
            raise AssertionError("an unknown name resolved")


def test_first_decodes_from_many_threads_at_once_agree() -> None:
    script = """
import json, threading
from mcp_schema import codec
raw = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{}}}'
results, errors = [], []
barrier = threading.Barrier(8)
def first(view):
    barrier.wait()
    try:
        decoded = view(raw, version="2025-11-25")
        results.append(json.dumps(json.loads(codec.encode(decoded)), sort_keys=True))
    except Exception as exc:
        errors.append(repr(exc))
views = [codec.decode, codec.decode_dict] * 4
threads = [threading.Thread(target=first, args=(v,)) for v in views]
for t in threads: t.start()
for t in threads: t.join()
assert not errors, errors
assert len(results) == 8 and len(set(results)) == 1, results
"""
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


def test_type_checkers_still_refuse_a_misspelt_name_of_a_lazy_package() -> None:
    from mypy import api

    code = "import mcp_schema.v2026_07_28 as v\nv.CallToolRequest\nv.CallToolRequestt\n"
    # Incremental: `make test` runs mypy over the package first, so the
    # package's types come from that cache (a cold run costs seconds).
    out, _, status = api.run(["--strict", "-c", code])
    assert status == 1, out
    assert 'has no attribute "CallToolRequestt"' in out, out
    assert out.count("error:") == 1, out  # the correct name resolves
