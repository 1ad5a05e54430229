"""Warm recall (`Memory.recall`, encoding included) of one memory by two checkouts of the code
side by side: an older one (`--old`, a directory holding a `tmem_graph` package, e.g. a git
worktree) and this one, in two long-running worker processes that take turns, a pass over the
queries each, `--rounds` times, so both see the same machine load and the same database.

    git worktree add /tmp/base c11900d
    python -m benchmarks.recall_ab --uri bolt://127.0.0.1:7687 --memory svc-locomo --old /tmp/base \
        --rounds 10 --out /tmp/recall_ab.json

The queries are the memory's own turn and item texts (60 + 60, a fixed sample), or with
`--sample` the first `--queries` LoCoMo questions of that conversation, interleaved with as many
LoCoMo-Plus dev probes of `--plus-base` (the weak matches). `--budget-tokens N` times each query
twice per pass, unpacked and packed to N tokens, the first of the two alternating:

    git worktree add /tmp/before-31 54b1767      # the code before issue #31's changes
    python -m benchmarks.recall_ab --memory conv42-strong --old /tmp/before-31 --sample conv-42 \
        --plus-base conv-42 --queries 20 --budget-tokens 2000 --rounds 6 --out /tmp/recall_ab_31.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks._common import load_average, locomo_queries, pct

WORKER = r"""
import json, sys, time
from tmem_graph import api
from tmem_graph.config import RetrievalSettings, Settings
memory = api.Memory(sys.argv[1], Settings.from_env(uri=sys.argv[2]))
budget = int(sys.argv[3])
kinds = {"unpacked": None, "packed": RetrievalSettings(budget_tokens=budget)} if budget else {"unpacked": None}
queries = json.loads(sys.stdin.readline())
for q in queries[:20]:
    for cfg in kinds.values():
        memory.recall(q, settings=cfg)
print(json.dumps({"ready": True, "code": api.__file__}), flush=True)
for line in sys.stdin:
    times = {kind: [] for kind in kinds}
    for n, q in enumerate(queries):
        for kind in (list(kinds) if n % 2 == 0 else list(kinds)[::-1]):
            t0 = time.perf_counter()
            memory.recall(q, settings=kinds[kind])
            times[kind].append((time.perf_counter() - t0) * 1000)
    print(json.dumps(times), flush=True)
"""



def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--uri", default="bolt://127.0.0.1:7687")
    ap.add_argument("--memory", required=True)
    ap.add_argument("--old", type=Path, required=True, help="a checkout of the older code")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--sample", help="LoCoMo questions of this conversation as the queries (e.g. conv-42)")
    ap.add_argument("--plus-base", help="with --sample, interleave the LoCoMo-Plus dev probes of this base")
    ap.add_argument("--queries", type=int, default=20, help="with --sample, how many of each kind")
    ap.add_argument("--budget-tokens", type=int, default=0, help="also time recall packed to this many tokens")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tmem_graph import api
    from tmem_graph.config import Settings

    if args.sample:
        queries = locomo_queries(args.sample, args.queries, args.plus_base)
    else:
        doc = api.Memory(args.memory, Settings.from_env(uri=args.uri)).export()
        rng = random.Random(5)
        queries = ([t["text"] for t in rng.sample(doc["turns"], min(60, len(doc["turns"])))]
                   + [i["text"] for i in rng.sample(doc["items"], min(60, len(doc["items"])))])
    here = Path(__file__).resolve().parents[1]
    workers = {}
    for side, code in (("old", args.old.resolve()), ("new", here)):
        env = {**os.environ, "PYTHONPATH": str(code)}
        proc = subprocess.Popen([sys.executable, "-c", WORKER, args.memory, args.uri, str(args.budget_tokens)],
                                env=env, cwd=str(code), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        proc.stdin.write(json.dumps(queries) + "\n")
        proc.stdin.flush()
        ready = json.loads(proc.stdout.readline())
        if not Path(ready["code"]).resolve().is_relative_to(code):   # each side runs its own checkout
            sys.exit(f"the {side} worker imported {ready['code']}, not the code in {code}")
        workers[side] = proc
    times: dict[str, dict[str, list[float]]] = {"old": {}, "new": {}}
    for n in range(args.rounds):
        for side in (list(workers) if n % 2 == 0 else list(workers)[::-1]):   # who goes first alternates
            workers[side].stdin.write("run\n")
            workers[side].stdin.flush()
            for kind, values in json.loads(workers[side].stdout.readline()).items():
                times[side].setdefault(kind, []).extend(values)
    for proc in workers.values():
        proc.stdin.close()
        proc.wait(timeout=60)
    out = {"memory": args.memory, "queries": len(queries), "rounds": args.rounds, "old": str(args.old),
           "load_average": load_average()}
    for kind in times["new"]:
        row = {side: {"p50": statistics.median(times[side][kind]), "p95": pct(times[side][kind], 95),
                      "n": len(times[side][kind])} for side in times}
        row["ratio_p50"] = row["new"]["p50"] / row["old"]["p50"]
        row["ratio_p95"] = row["new"]["p95"] / row["old"]["p95"]
        out[kind] = row
    print(json.dumps(out, indent=1))
    if args.out:
        args.out.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
