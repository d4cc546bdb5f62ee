"""``make compare-dmcg``: datamodel-code-generator's models of the pinned schemas.

Writes each pinned schema (overlays applied, as ``make regen`` reads it) and
datamodel-code-generator's pydantic v2 models of it into ``OUT/dmcg_models``,
laid out like ``mcp_schema`` (``<package>/__init__.py``), so that
``python -m tests.engines.conformance --models dmcg_models`` judges them with
the same engine, seeds and examples as this project's models. Its options are
the closest it offers to this project's rules (snake_case attributes with wire
aliases, unknown members kept, strict strings and booleans); names are its own.

Usage: ``python -m tests.engines.dmcg OUT``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from codegen import spec

ROOT_PACKAGE = "dmcg_models"
OPTIONS = (
    "--input-file-type=jsonschema",
    "--output-model-type=pydantic_v2.BaseModel",
    "--target-python-version=3.10",
    "--snake-case-field",
    "--extra-fields=allow",
    "--strict-types",
    "str",
    "bool",
    "--enum-field-as-literal=all",
    "--use-annotated",
    "--field-constraints",
    "--disable-timestamp",
    "--formatters",
    "ruff-format",
)


def generate(out: Path) -> list[Path]:
    """Run datamodel-codegen once per pin; returns the modules it wrote."""
    root = out / ROOT_PACKAGE
    written = []
    for key, pin in spec.pins().items():
        source = out / "schemas" / f"{pin.package}.json"
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(json.dumps(spec.load(key), indent=1))
        target = root.joinpath(*pin.package.split("."), "__init__.py")
        target.parent.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "datamodel_code_generator", *OPTIONS]
        subprocess.run([*command, "--input", str(source), "--output", str(target)], check=True)
        written.append(target)
    (root / "__init__.py").touch()
    return written


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.engines.dmcg", description=__doc__)
    parser.add_argument("out", type=Path, help="folder to write into (put it on PYTHONPATH)")
    args = parser.parse_args()
    for path in generate(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
