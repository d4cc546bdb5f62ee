"""``python -m codegen [--check] [--into DIR]``: regenerate everything under ``generated/``.

With ``--check`` nothing is written; the exit status is 1 when any generated
file differs from a fresh run (``make check-regen``). ``--into`` writes or
compares another folder instead (a copy, in the tests).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from .generate import GENERATED_DIR, generate, stale_files, write


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen")
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    parser.add_argument(
        "--into", type=Path, default=GENERATED_DIR, help="the generated folder (default generated/)"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    output = generate()
    if args.check:
        stale = stale_files(output.files, args.into)
        for path in stale:
            print(
                f"stale: {args.into.name}/{path} differs from `make regen` output", file=sys.stderr
            )
        if stale:
            print(
                "generated/ is out of date or was edited by hand: run `make regen`", file=sys.stderr
            )
            return 1
        print(f"generated/ is up to date ({len(output.files)} files)")
        return 0
    write(output.files, args.into)
    for line in output.summary:
        print(line)
    print(f"regenerated {len(output.files)} files in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
