"""``python -m codegen [--check] [--into DIR]``: regenerate everything under ``generated/``.

With ``--check`` nothing is written; the exit status is 1 when any generated
file differs from a fresh run (``make check-regen``). ``--into`` writes or
compares another folder instead (a copy, in the tests).
``python -m codegen pin VERSION [--file PATH] [--commit SHA]`` pins an upstream
schema file (see ``codegen/pin.py``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from .generate import GENERATED_DIR, generate, stale_files, write
from .pin import pin as pin_version


def regen(check: bool, into: Path) -> int:
    started = time.perf_counter()
    output = generate()
    if check:
        stale = stale_files(output.files, into)
        for path in stale:
            print(f"stale: {into.name}/{path} differs from `make regen` output", file=sys.stderr)
        if stale:
            print(
                "generated/ is out of date or was edited by hand: run `make regen`", file=sys.stderr
            )
            return 1
        print(f"generated/ is up to date ({len(output.files)} files)")
        return 0
    write(output.files, into)
    for line in output.summary:
        print(line)
    print(f"regenerated {len(output.files)} files in {time.perf_counter() - started:.1f} s")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen")
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    parser.add_argument(
        "--into", type=Path, default=GENERATED_DIR, help="the generated folder (default generated/)"
    )
    commands = parser.add_subparsers(dest="command")
    pin = commands.add_parser("pin", help="pin an upstream schema file in schema/pins.json")
    pin.add_argument("version", help="the pin's key, e.g. 2027-01-01")
    pin.add_argument("--file", type=Path, help="the new upstream schema file")
    pin.add_argument("--commit", help="the upstream commit the file comes from")
    args = parser.parse_args(argv)
    if args.command == "pin":
        return pin_version(args.version, args.file, args.commit)
    return regen(args.check, args.into)


if __name__ == "__main__":
    sys.exit(main())
