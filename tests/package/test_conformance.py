"""CI slice of the differential conformance run (tests/engines/conformance.py).

Every definition of every compiled schema, and every one the generator
derives for the method tables, gets a few valid instances plus their
mutants, judged by the JSON Schema oracle, by the generated model and by the
package's validation document (the dict view).
The instances come from the generated strategies (``mcp_schema.testing``),
which makes this slice the oracle check of those strategies as well: a draw
the oracle rejects fails it. Seeds are fixed here so CI is reproducible;
``make conformance`` runs the same engine with random seeds, many more
examples and the independent hypothesis-jsonschema as the source.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from codegen import spec
from tests.codegen.test_generator import EXPECTED_DEFS
from tests.engines import conformance as c

pytestmark = pytest.mark.slow

# Examples per definition: enough to touch the arms of the unions, few
# enough to keep this file well under a minute on a 2-core runner.
EXAMPLES = 10


# Definitions of the tasks extension that are the core 2026-07-28 classes,
# re-exported; the other 20 are the extension's own.
TASKS_OWN = 20

# A def the Tasks extension repeats verbatim is the core class itself (checked
# below), so CI judges it once, under the core schema; `make conformance` runs all.
CASES = [
    (key, name)
    for key in c.SCHEMA_KEYS
    for name in c.def_names(key) + c.derived_names(key)
    if name not in spec.repeated_defs(key)
]


def _explain(report: c.DefReport) -> str:
    counts = report.counts
    head = (
        f"{report.key} {report.name}: {counts.instances} instances, {counts.mutants} mutants, "
        f"{counts.false_accepts} false accepts, {counts.false_rejects} false rejects, "
        f"{counts.lossy} lossy, {counts.crashes} crashes, "
        f"{counts.oracle_rejects_sample} bad samples"
    )
    return "\n".join([head, *(d.render() for d in report.found)])


@pytest.mark.parametrize(("key", "name"), CASES, ids=[f"{k}:{n}" for k, n in CASES])
def test_model_agrees_with_schema(key: str, name: str) -> None:
    report = c.run_def(key, name, EXAMPLES, derandomize=True, source=c.generated_strategy)
    if report.generation_error is not None:
        if report.allowlisted:
            pytest.skip(f"cannot generate ({c.GENERATION_ALLOWLIST[(key, name)]})")
        pytest.fail(
            f"{key} {name}: no instance could be generated: {report.generation_error}; "
            "fix its generated strategy (codegen/strategies.py)"
        )
    assert report.counts.discrepancies == 0, _explain(report)
    # A sample the oracle rejects means the generated strategy is wrong: SDKs
    # property-testing with it would feed their handlers invalid messages.
    assert report.counts.oracle_rejects_sample == 0, _explain(report)


def test_allowlist_names_real_definitions() -> None:
    for key, name in c.GENERATION_ALLOWLIST:
        assert name in c.def_names(key), f"stale allowlist entry {key} {name}"


@pytest.mark.parametrize("key", c.SCHEMA_KEYS)
def test_every_definition_is_exported(key: str) -> None:
    names = c.def_names(key)
    # Counted by hand for these pins; a version pinned later has its own file only.
    assert len(names) == EXPECTED_DEFS.get(key, len(names)) > 0
    module = importlib.import_module(c.package_of(key))
    missing = [n for n in names if not hasattr(module, n)]
    assert not missing, f"{c.package_of(key)} lacks {missing}"
    not_listed = [n for n in names if n not in getattr(module, "__all__", ())]
    assert not not_listed, f"{c.package_of(key)}.__all__ lacks {not_listed}"


def test_tasks_reuses_core_definitions() -> None:
    tasks = importlib.import_module(c.package_of("2026-07-28/tasks"))
    core = importlib.import_module(c.package_of("2026-07-28"))
    names = c.def_names("2026-07-28/tasks")
    reused = [
        n
        for n in names
        if getattr(core, n, None) is not None and getattr(tasks, n) is getattr(core, n)
    ]
    assert len(reused) == len(names) - TASKS_OWN, sorted(set(names) - set(reused))


def test_same_json_distinguishes_json_types() -> None:
    assert c.same_json({"a": [1, 2.0, None]}, {"a": [1.0, 2, None]})
    assert not c.same_json(True, 1)
    assert not c.same_json(0, False)
    assert not c.same_json(0.5, "0.5")
    assert not c.same_json({"a": None}, {})
    assert not c.same_json([1], [1, 1])
    assert not c.same_json({"a": 1}, {"a": 1, "b": 1})


def test_snake_case_twin_is_unknown_member() -> None:
    # Fixed probes for the mutation the random run aims at: `last_modified`
    # next to or instead of `lastModified` is an unknown member, never the
    # field; it must round-trip as itself and must not satisfy `required`.
    probes: list[tuple[str, dict[str, object]]] = [
        ("Annotations", {"last_modified": "x"}),
        ("Annotations", {"lastModified": "y", "last_modified": 5}),
        ("CancelledNotificationParams", {"request_id": 1}),
        ("CancelledNotificationParams", {"requestId": 1, "request_id": "z"}),
    ]
    reports = []
    for name, probe in probes:
        report = c.DefReport("2026-07-28", name)
        c.check(report, probe, "fixed twin probe", probe)
        reports.append(report)
    failed = [r for r in reports if r.counts.discrepancies]
    assert not failed, "\n".join(_explain(r) for r in failed)


def test_judges_another_model_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # What `make compare-dmcg` relies on: a tree laid out like mcp_schema is
    # judged by the same engine, and its faults are counted, not hidden.
    package = tmp_path / "other_models" / "v2026_07_28"
    package.mkdir(parents=True)
    (tmp_path / "other_models" / "__init__.py").write_text("")
    (package / "__init__.py").write_text(
        "from pydantic import BaseModel\n\n\n"
        "class Annotations(BaseModel):  # drops unknown members, accepts null\n"
        "    audience: list[str] | None = None\n"
        "    priority: float | None = None\n"
        "    lastModified: str | None = None\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    drawn = c.run_def("2026-07-28", "Annotations", 2, derandomize=True, root="other_models")
    assert drawn.counts.instances > 0 and drawn.counts.discrepancies > 0
    report = c.DefReport("2026-07-28", "Annotations", root="other_models")
    c.check(report, {"priority": 0.5, "x-extra": 1}, None, {"priority": 0.5, "x-extra": 1})
    c.check(report, {"priority": None}, "null priority", {})
    assert (report.counts.lossy, report.counts.false_accepts) == (1, 1)
    missing = c.run_def("2026-07-28", "Role", 1, derandomize=True, root="other_models")
    assert missing.counts.no_model == 1
