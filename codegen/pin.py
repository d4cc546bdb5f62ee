"""``python -m codegen pin VERSION [--file PATH] [--commit SHA]``: pin an
upstream schema file in ``schema/pins.json`` and say what changed.

A new version's pin is modelled on the newest pinned version before it (its
era, repository and paths with the version replaced); an existing pin gets
the new file's sha256. With ``--file`` the file is first copied to where the
pin says it lives under the spec directory. The definitions and members that
changed are printed against the version's previous file, or for a new version
against the version it was modelled on; then the overlays are applied, so one
whose defect upstream fixed fails here with the advice to drop it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from .spec import SCHEMA_DIR, SpecError, load, pins, spec_dir, without_descriptions


def _members(shape: Any) -> dict[str, Any]:
    return dict(shape.get("properties", {})) if isinstance(shape, dict) else {}


def schema_diff(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """One line per definition added (+), removed (-) or changed (~), with the
    members that were added, removed or changed; descriptions are ignored."""
    before = without_descriptions(old.get("$defs", {}))
    after = without_descriptions(new.get("$defs", {}))
    lines = [f"+ {name}" for name in sorted(after.keys() - before.keys())]
    lines += [f"- {name}" for name in sorted(before.keys() - after.keys())]
    for name in sorted(before.keys() & after.keys()):
        was, now = before[name], after[name]
        if was == now:
            continue
        old_members, new_members = _members(was), _members(now)
        changes = [f"+{m}" for m in sorted(new_members.keys() - old_members.keys())]
        changes += [f"-{m}" for m in sorted(old_members.keys() - new_members.keys())]
        changes += [
            f"~{m}"
            for m in sorted(old_members.keys() & new_members.keys())
            if old_members[m] != new_members[m]
        ]
        was_required = set(was.get("required", [])) if isinstance(was, dict) else set()
        now_required = set(now.get("required", [])) if isinstance(now, dict) else set()
        changes += [f"required {m}" for m in sorted(now_required - was_required)]
        changes += [f"optional {m}" for m in sorted(was_required - now_required)]
        lines.append(f"~ {name}: {', '.join(changes) if changes else 'shape'}")
    return lines


def _new_entry(version: str, schemas: dict[str, Any]) -> tuple[dict[str, Any], str]:
    older = [key for key in schemas if "/" not in key and key < version]
    if not older:
        raise SpecError(f"no pinned version before {version} to model the new pin on")
    model = max(older)
    entry = {
        key: value.replace(model, version) if isinstance(value, str) else value
        for key, value in schemas[model].items()
    }
    entry["package"] = "v" + version.replace("-", "_")
    return entry, model


def pin(version: str, file: Path | None, commit: str | None) -> int:
    pins_path = SCHEMA_DIR / "pins.json"
    document = json.loads(pins_path.read_text())
    schemas: dict[str, Any] = document["schemas"]
    if version in schemas:
        entry, compared_to = dict(schemas[version]), version
        target = spec_dir() / entry["local"]
        previous: dict[str, Any] | None = (
            json.loads(target.read_bytes()) if target.is_file() else None
        )
    else:
        entry, compared_to = _new_entry(version, schemas)
        target = spec_dir() / entry["local"]
        previous = load(compared_to, patched=False)
        print(
            f"new pin modelled on {compared_to}: check its era ({entry.get('era')}), docs URL"
            + ("" if commit else " and commit (pass --commit)")
        )
    if file is not None and file.resolve() != target.resolve():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(file, target)
    data = target.read_bytes()
    entry["sha256"] = hashlib.sha256(data).hexdigest()
    if commit is not None:
        entry["commit"] = commit
    schemas[version] = entry
    pins_path.write_text(json.dumps(document, indent=2) + "\n")
    print(f"pinned {version}: {target} sha256 {entry['sha256']}")

    changes = schema_diff(previous, json.loads(data)) if previous is not None else []
    print(f"changes against {compared_to}: {len(changes) or 'none'}")
    for line in changes:
        print(f"  {line}")
    pins.cache_clear()
    try:
        load(version)
    except SpecError as err:
        print(f"error: {err}")
        return 1
    print("next: pair its request methods in schema/results.json, then `make regen`")
    return 0
