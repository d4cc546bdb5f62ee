"""Method tables by name: records name their definitions, objects come on demand.

``mcp_schema.tables`` holds records of names and the package that defines
them; their lookups read ``<package>.models``. The
same name is the definition's ``#/$defs/<Name>`` in ``validation.json``.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import subprocess
import sys
from importlib.resources import files

import pytest

from mcp_schema.registry import COMPILED
from mcp_schema.tables import (
    CompiledVersion,
    Definitions,
    InputRequestMethod,
    Lookup,
    NotificationMethod,
    RequestMethod,
    VersionTables,
)

PACKAGES = [compiled.package for compiled in COMPILED]


def _names(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def test_records_hold_names_and_a_package() -> None:
    assert _names(RequestMethod) == [
        "method",
        "sender",
        "package",
        "request_name",
        "params_name",
        "result_name",
        "assumed_complete_name",
        "alternative_names",
    ]
    assert _names(NotificationMethod) == [
        "method",
        "sender",
        "package",
        "notification_name",
        "params_name",
    ]
    assert _names(InputRequestMethod) == ["method", "package", "request_name", "params_name"]
    assert _names(VersionTables) == [
        "package",
        "request_name",
        "notification_name",
        "result_name",
        "error_name",
        "result_arm_names",
        "requests",
        "notifications",
        "error_model_names",
        "client_capabilities_name",
        "implementation_name",
    ]


def test_a_lookup_reads_its_field_once_and_keeps_the_object() -> None:
    from mcp_schema.v2026_07_28 import models

    lookup = RequestMethod.request
    assert isinstance(lookup, Lookup)
    assert lookup.field == "request_name"
    entry = RequestMethod(
        method="tools/call",
        sender="client",
        package="mcp_schema.v2026_07_28",
        request_name="CallToolRequest",
        params_name=None,
        result_name="CallToolResult",
        assumed_complete_name=None,
        alternative_names=("InputRequiredResult",),
    )
    assert "request" not in vars(entry)
    assert entry.request is models.CallToolRequest
    assert vars(entry)["request"] is models.CallToolRequest  # kept on the record
    assert entry.params is None
    assert entry.alternatives == (models.InputRequiredResult,)
    assert entry == dataclasses.replace(entry)  # what is kept is no field


@pytest.mark.parametrize("package", PACKAGES)
def test_properties_are_the_named_definitions(package: str) -> None:
    methods = importlib.import_module(f"{package}.methods")
    defined = json.loads(files(package).joinpath("validation.json").read_text())["$defs"]
    for entry in methods.REQUESTS.values():
        models = importlib.import_module(f"{entry.package}.models")
        assert entry.request is getattr(models, entry.request_name)
        assert entry.result is getattr(models, entry.result_name)
        assert entry.params is (entry.params_name and getattr(models, entry.params_name))
        assert entry.alternatives == tuple(getattr(models, n) for n in entry.alternative_names)
        assert entry.assumed_complete is (
            entry.assumed_complete_name and getattr(models, entry.assumed_complete_name)
        )
        if entry.package == package:  # the dict view names the same targets
            assert {entry.request_name, entry.result_name} <= set(defined)
    for note in methods.NOTIFICATIONS.values():
        models = importlib.import_module(f"{note.package}.models")
        assert note.notification is getattr(models, note.notification_name)
        assert note.params is (note.params_name and getattr(models, note.params_name))


@pytest.mark.parametrize("compiled", COMPILED, ids=[c.key for c in COMPILED])
def test_version_tables_resolve_through_the_package(compiled: CompiledVersion) -> None:
    tables = compiled.load()
    models = importlib.import_module(f"{tables.package}.models")
    assert tables.package == compiled.package
    assert tables.request is getattr(models, tables.request_name)
    assert tables.notification is getattr(models, tables.notification_name)
    assert tables.result is getattr(models, tables.result_name)
    assert tables.error is getattr(models, tables.error_name)
    assert dict(tables.result_arms) == {
        tag: getattr(models, name) for tag, name in tables.result_arm_names.items()
    }
    assert dict(tables.error_models) == {
        code: getattr(models, name) for code, name in tables.error_model_names.items()
    }
    for name, value in (
        (tables.client_capabilities_name, tables.client_capabilities),
        (tables.implementation_name, tables.implementation),
    ):
        assert value is (name and getattr(models, name))


def test_an_extension_reads_what_it_reuses_through_its_own_models() -> None:
    from mcp_schema.v2026_07_28 import models as core
    from mcp_schema.v2026_07_28.tasks import methods, tables

    assert tables.TABLES.request is core.JSONRPCRequest
    assert tables.TABLES.client_capabilities is None
    # An input request whose params class only the base defines names the base.
    roots = methods.INPUT_REQUESTS["roots/list"]
    assert roots.package == "mcp_schema.v2026_07_28"
    assert roots.params is core.ListRootsRequestParams
    assert methods.INPUT_REQUESTS["sampling/createMessage"].package == methods.PACKAGE


def test_error_models_map_codes_on_demand() -> None:
    from mcp_schema.v2026_07_28 import methods, models

    assert isinstance(methods.ERROR_MODELS, Definitions)
    assert methods.ERROR_MODELS[-32022] is models.UnsupportedProtocolVersionErrorObject
    assert len(methods.ERROR_MODELS) == len(methods.ERROR_MODEL_NAMES)
    assert list(methods.ERROR_MODELS) == list(methods.ERROR_MODEL_NAMES)
    assert methods.ERROR_MODELS.get(1) is None
    with pytest.raises(KeyError):
        methods.ERROR_MODELS[1]
    assert methods.ERROR_MODEL is models.Error
    with pytest.raises(AttributeError, match="ERROR_MODLE"):
        getattr(methods, "ERROR_MODLE")  # noqa: B009


def test_importing_the_tables_imports_no_model() -> None:
    script = (
        "import sys\n"
        f"for package in {PACKAGES!r}:\n"
        "    __import__(package + '.methods')\n"
        "    __import__(package + '.tables')\n"
        "from mcp_schema.registry import COMPILED\n"
        "tables = [c.load() for c in COMPILED]\n"
        "models = [m for m in sys.modules if m.endswith('.models')]\n"
        "assert models == [], models\n"
        "entry = tables[0].requests['tools/call']\n"
        "assert entry.result_name == 'CallToolResult'\n"
        "assert [m for m in sys.modules if m.endswith('.models')] == [], 'a name read a model'\n"
        "entry.result\n"
        "assert COMPILED[0].package + '.models' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
