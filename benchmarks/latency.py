"""Warm recall latency (`Memory.recall`, encoding included) of one memory per configuration:
unpacked, packed to each `--budgets` value, and each combination of the `--vary` settings
(`FIELD=V1,V2`, a `RetrievalSettings` field), interleaved query by query; with `--old DIR` (an
older checkout) the same in a worker of that code, the two taking turns, `--rounds` passes each.
The stages are those the recall reports itself (`Recall.timings_ms`). Queries: the first
`--queries` LoCoMo questions of `--sample` (with as many LoCoMo-Plus probes of `--plus-base`,
the weak matches), else texts of the memory's own turns and items.

    python -m benchmarks latency --memory conv42-strong --sample conv-42 --plus-base conv-42 \
        --queries 40 --budgets 500 2000 4000 --vary lane_share=0,0.4 --old /tmp/before --rounds 6
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.common import HERE, load_average, locomo_queries, own_texts, summary
from tmem_graph import api

# Runs in the checkout measured (PYTHONPATH): only the public API. stdin: the memory, the
# configurations ({name: {"settings": {RetrievalSettings field: value}, "without": [...]}}) and
# the queries, one JSON line each; then one line per pass, answered by one line of timings.
WORKER = r"""
import dataclasses, json, sys, time
from tmem_graph import api
memory_id, configs, queries = (json.loads(sys.stdin.readline()) for _ in range(3))
memory = api.Memory(memory_id)
base = memory.settings.retrieval
runs = {name: (dataclasses.replace(base, **c["settings"]), c["without"]) for name, c in configs.items()}
for q in queries[:10]:
    for cfg, without in runs.values():
        memory.recall(q, settings=cfg, without=without)
print(json.dumps({"code": api.__file__}), flush=True)
for n, _ in enumerate(sys.stdin):
    times = {name: [] for name in runs}
    for k, q in enumerate(queries):
        for name in (list(runs) if (n + k) % 2 == 0 else list(runs)[::-1]):
            cfg, without = runs[name]
            t0 = time.perf_counter()
            r = memory.recall(q, settings=cfg, without=without)
            times[name].append({"wall": (time.perf_counter() - t0) * 1000, **r.timings_ms})
    print(json.dumps(times), flush=True)
"""


def configurations(budgets: list[int], vary: list[tuple[str, list]], without: list[str]) -> dict[str, dict]:
    """{name: settings} of every run: unpacked, then each budget × each combination of `vary`."""
    out = {"unpacked": {"settings": {}, "without": without}}
    fields = [name for name, _ in vary]
    for budget in budgets:
        for values in itertools.product(*(vs for _, vs in vary)):
            name = f"budget {budget}" + "".join(f", {f} {v}" for f, v in zip(fields, values))
            out[name] = {"settings": {"budget_tokens": budget, **dict(zip(fields, values))}, "without": without}
    return out


def worker(code: Path, memory: str, configs: dict, queries: list[str]) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", WORKER], env={**os.environ, "PYTHONPATH": str(code)},
                            cwd=str(code), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for line in (memory, configs, queries):
        proc.stdin.write(json.dumps(line) + "\n")
    proc.stdin.flush()
    ready = json.loads(proc.stdout.readline() or '{"code": "nothing (its error is above)"}')["code"]
    if not Path(ready).resolve().is_relative_to(code):   # each side runs its own checkout's code
        raise SystemExit(f"the worker of {code} imported {ready}, not that checkout's code")
    return proc


def main(argv: list[str], prog: str) -> None:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    ap.add_argument("--memory", required=True)
    ap.add_argument("--sample", help="LoCoMo questions of this conversation as the queries (e.g. conv-42)")
    ap.add_argument("--plus-base", help="with --sample, interleave the LoCoMo-Plus dev probes of this base")
    ap.add_argument("--queries", type=int, default=60, help="how many queries of each kind")
    ap.add_argument("--budgets", type=int, nargs="*", default=[500, 2000, 4000])
    ap.add_argument("--vary", action="append", default=[], metavar="FIELD=V1,V2",
                    help="run each budget once per value of this RetrievalSettings field (repeatable)")
    ap.add_argument("--without", default="", help="components switched off in every run (e.g. recent)")
    ap.add_argument("--old", type=Path, help="a checkout of older code, measured beside this one")
    ap.add_argument("--rounds", type=int, default=1, help="passes over the queries per checkout")
    ap.add_argument("--out", type=Path, help="every timing, as JSON")
    args = ap.parse_args(argv)
    vary = [(f, [json.loads(v) if v[:1].isdigit() or v in ("true", "false") else v for v in vs.split(",")])
            for f, _, vs in (x.partition("=") for x in args.vary)]
    configs = configurations(args.budgets, vary, [w for w in args.without.split(",") if w])
    queries = (locomo_queries(args.sample, args.queries, args.plus_base) if args.sample
               else own_texts(api.Memory(args.memory).export(), args.queries))
    sides = {"new": HERE} | ({"old": args.old.resolve()} if args.old else {})
    workers = {side: worker(code, args.memory, configs, queries) for side, code in sides.items()}
    times: dict[str, dict[str, list[dict]]] = {side: {name: [] for name in configs} for side in sides}
    for n in range(args.rounds):
        for side in (list(workers) if n % 2 == 0 else list(workers)[::-1]):   # who goes first alternates
            workers[side].stdin.write("run\n")
            workers[side].stdin.flush()
            for name, runs in json.loads(workers[side].stdout.readline()).items():
                times[side][name] += runs
    for proc in workers.values():
        proc.stdin.close()
        proc.wait(timeout=60)
    table = {side: {name: {stage: summary([r[stage] for r in runs if stage in r])
                           for stage in ("wall", "encode", "cascade", "pack") if any(stage in r for r in runs)}
                    for name, runs in by_name.items()} for side, by_name in times.items()}
    print(f"{args.memory}: {len(queries)} queries × {args.rounds} round(s), load average {load_average()}\n")
    print("| checkout | recall | p50 ms | p95 ms | p50 / unpacked | encode p50 | cascade p50 | pack p50 |"
          + (" p50 new / old |" if args.old else ""))
    print("|---" * (8 + bool(args.old)) + "|")
    for side, rows in table.items():
        for name, row in rows.items():
            ratio = (f" {row['wall']['p50'] / table['old'][name]['wall']['p50']:.2f} |"
                     if args.old and side == "new" else " - |" if args.old else "")
            print(f"| {side} | {name} | {row['wall']['p50']:.1f} | {row['wall']['p95']:.1f} | "
                  f"{row['wall']['p50'] / rows['unpacked']['wall']['p50']:.2f} | "
                  + " | ".join(f"{row[s]['p50']:.1f}" if s in row else "-" for s in ("encode", "cascade", "pack"))
                  + " |" + ratio)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"memory": args.memory, "queries": queries, "configurations": configs,
                                        "old": str(args.old) if args.old else None, "summary": table,
                                        "times_ms": times, "load_average": load_average()}, indent=1))
