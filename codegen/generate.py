"""Build every pinned schema into files under ``generated/mcp_schema``.

Everything under ``generated/`` is written here and nowhere else; the
hand-written runtime of the same package lives in ``src/mcp_schema``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from . import dicts, ir, methods, passes, registry, render, strategies, validation
from .assumed_complete import add_assumed_complete
from .build import Builder
from .envelopes import add_whole_messages
from .spec import ROOT, SCHEMA_DIR, load, pins, pins_sha256, repeated_defs

GENERATED_DIR = ROOT / "generated"
PACKAGE_DIR = GENERATED_DIR / "mcp_schema"


@dataclass
class Output:
    files: dict[Path, str]  # by path relative to the generated folder
    registry: ir.Registry
    summary: list[str]


def build_all() -> ir.Registry:
    """Every pinned schema as a module ready to print: the IR each renderer
    reads, and nothing else."""
    pairing = json.loads((SCHEMA_DIR / "results.json").read_text())
    modules: dict[str, ir.Module] = {}
    classes: dict[str, dict[str, ir.ModelClass]] = {}
    for key, pin in pins().items():  # pins.json lists bases before extensions
        schema = load(key)
        reused: dict[str, str] = {}
        known: dict[str, ir.ModelClass] = {}
        if pin.base is not None:
            # Defs the extension repeats verbatim are imported, not regenerated.
            where = f"mcp_schema.{modules[pin.base].package}.models"
            reused = {name: where for name in sorted(repeated_defs(key))}
            known = dict(classes[pin.base])
        builder = Builder(pin, schema, reused)
        module = builder.build()
        known.update({c.name: c for c in module.classes})
        classes[key] = known
        modules[key] = with_methods(builder, module, pairing[key], known)
    return ir.Registry(MappingProxyType(modules), pins_sha256())


def with_methods(
    builder: Builder, module: ir.Module, pairing: dict[str, Any], known: dict[str, ir.ModelClass]
) -> ir.Module:
    """``module`` (as ``builder`` built it) with its method tables and the
    classes they need beside the schema's own, ready to print; ``known`` are
    its classes and those it reuses, by name."""
    tables = methods.collect(builder, pairing, known)
    derived = add_assumed_complete(add_whole_messages(replace(module, methods=tables)))
    return passes.prepare(derived)


def package_path(module: ir.Module) -> Path:
    """Where a module's package goes, relative to the generated folder."""
    return Path("mcp_schema", *module.package.split("."))


def generate() -> Output:
    built = build_all()
    env = render.environment()
    files: dict[Path, str] = {}
    summary: list[str] = []
    for module in built.modules.values():
        where = package_path(module)
        base = built.base_of(module)
        files[where / "models.py"] = render.render_models(module, env)
        files[where / "dicts.py"] = dicts.render_dicts(module, env)
        files[where / "validation.json"] = validation.render_validation(module, base)
        files[where / "methods.py"] = render.render_methods(module, env, base)
        if base is None:
            files[where / "decoding.py"] = render.render_decoding(module, env)
        files[where / "__init__.py"] = render.render_init(module, env)
        files[where / "tables.py"] = registry.render_tables(module, env, base)
        files[where / "strategies.py"] = strategies.render_strategies(module, env, base)
        summary.append(
            f"{module.key:<18} {module.def_count:>3} defs ({len(module.imported)} reused), "
            f"{len(module.classes):>3} classes, {len(module.aliases):>3} aliases, "
            f"{len(module.methods.requests):>2} requests, "
            f"{len(module.methods.notifications):>2} notifications, "
            f"{len(module.methods.input_requests)} input requests -> mcp_schema.{module.package}"
        )
    files[Path("mcp_schema", "registry.py")] = registry.render_registry(built, env)
    return Output(format_sources(files), built, summary)


def format_sources(files: dict[Path, str]) -> dict[Path, str]:
    """Sort imports and format with the pinned ruff, as a careful author would.

    Templates stay short because layout is ruff's job; a pinned ruff keeps the
    output byte-identical from run to run.
    """
    with tempfile.TemporaryDirectory() as tmp:
        staged = {path: Path(tmp) / path for path in files}
        for path, target in staged.items():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(files[path])
        config = str(ROOT / "pyproject.toml")
        ruff = [sys.executable, "-m", "ruff"]
        # Templates import everything they may use: unused imports go first,
        # then the rest are sorted (together, isort could wrap a line first).
        for rules in ("F401", "I,RUF022"):
            fix = ["check", "--quiet", "--config", config, "--fix-only", "--select", rules, tmp]
            subprocess.run([*ruff, *fix], check=True)
        subprocess.run([*ruff, "format", "--quiet", "--config", config, tmp], check=True)
        return {path: target.read_text() for path, target in staged.items()}


def _on_disk(into: Path) -> set[Path]:
    """Every file under ``into`` (relative to it): all of it is regen's to write."""
    return {
        p.relative_to(into) for p in into.rglob("*") if p.is_file() and "__pycache__" not in p.parts
    }


def stale_files(files: dict[Path, str], into: Path = GENERATED_DIR) -> list[Path]:
    """Files under ``into`` that differ from a fresh run, are missing, or that
    regen did not write (relative to ``into``)."""
    stale = [
        p for p, text in files.items() if not (into / p).is_file() or (into / p).read_text() != text
    ]
    stale += sorted(_on_disk(into) - set(files))
    return sorted(stale)


def write(files: dict[Path, str], into: Path = GENERATED_DIR) -> None:
    for old in _on_disk(into) - set(files):
        (into / old).unlink()
    for path, text in files.items():
        (into / path).parent.mkdir(parents=True, exist_ok=True)
        (into / path).write_text(text)
