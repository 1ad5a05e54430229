"""Keep an evaluation memory as a fixture in fixtures/, and load it again on any machine.

    # after `tmem eval locomo-plus --memory conv26-local --base conv-26 --sessions 3 --build`
    python -m benchmarks fixture export conv26-local --sample conv-26 --plus-base conv-26 \\
        -o fixtures/conv26-local.json
    # on a fresh clone: the turns' texts come back from ../shared/data
    python -m benchmarks fixture import fixtures/conv26-local.json [more fixtures …] [--replace]

A fixture is the memory's export without the turn texts the data folder holds
(tmem_graph/evaluate/fixtures.py); what the construction model wrote is kept whole.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tmem_graph import api
from tmem_graph.errors import TmemError
from tmem_graph.evaluate import fixtures


def main(argv: list[str], prog: str) -> None:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("export", help="write a memory as a fixture")
    ex.add_argument("memory")
    ex.add_argument("--sample", required=True, help="the LoCoMo conversation its turns come from")
    ex.add_argument("--plus-base", help="the base of the LoCoMo-Plus cues stitched into it, if any")
    ex.add_argument("-o", "--output", type=Path, required=True)
    im = sub.add_parser("import", help="import fixtures, each one memory, their texts re-attached from the data folder")
    im.add_argument("fixtures", type=Path, nargs="+")
    im.add_argument("--replace", action="store_true")
    args = ap.parse_args(argv)
    try:
        run(args)
    except TmemError as exc:  # a user's mistake or a missing server: the message, not a traceback
        raise SystemExit(f"error: {exc}") from None


def run(args: argparse.Namespace) -> None:
    if args.command == "export":
        document = api.Memory(args.memory).export()
        fixture, stripped = fixtures.strip(document, args.sample, args.plus_base)
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(api.dumps(fixture), encoding="utf-8")
        print(f"{args.output}: {len(document['turns'])} turns ({stripped} texts left to the data folder), "
              f"{len(document['scenes'])} scenes, {len(document['items'])} items")
    else:
        missing = [str(p) for p in args.fixtures if not p.is_file()]
        if missing:   # before any import, so that a typo imports nothing
            raise SystemExit(f"error: no such fixture file: {', '.join(missing)}")
        for path in args.fixtures:   # one after another: each import is whole or nothing
            document = fixtures.attach(json.loads(path.read_text(encoding="utf-8")))
            memory, warnings = api.import_memory(document, replace=args.replace)
            for w in warnings:
                print(f"warning: {path}: {w}")
            print(f"{memory.id}: {memory.stats()['scenes']} scenes imported")

