"""Warm recall (`Memory.recall`, encoding included) of one memory by two checkouts of the code
side by side: an older one (`--old`, a directory holding a `tmem_graph` package, e.g. a git
worktree) and this one, in two long-running worker processes that take turns, a pass over the
queries each, `--rounds` times, so both see the same machine load and the same database.

    git worktree add /tmp/base c11900d
    python -m benchmarks.recall_ab --uri bolt://127.0.0.1:7687 --memory svc-locomo --old /tmp/base \
        --rounds 10 --out /tmp/recall_ab.json

The queries are the memory's own turn and item texts (60 + 60, a fixed sample).
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

from benchmarks._common import pct

WORKER = r"""
import json, sys, time
from tmem_graph import api
from tmem_graph.config import Settings
memory = api.Memory(sys.argv[1], Settings.from_env(uri=sys.argv[2]))
queries = json.loads(sys.stdin.readline())
for q in queries[:20]:
    memory.recall(q)
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    times = []
    for q in queries:
        t0 = time.perf_counter()
        memory.recall(q)
        times.append((time.perf_counter() - t0) * 1000)
    print(json.dumps(times), flush=True)
"""



def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--uri", default="bolt://127.0.0.1:7687")
    ap.add_argument("--memory", required=True)
    ap.add_argument("--old", type=Path, required=True, help="a checkout of the older code")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tmem_graph import api
    from tmem_graph.config import Settings

    doc = api.Memory(args.memory, Settings.from_env(uri=args.uri)).export()
    rng = random.Random(5)
    queries = ([t["text"] for t in rng.sample(doc["turns"], min(60, len(doc["turns"])))]
               + [i["text"] for i in rng.sample(doc["items"], min(60, len(doc["items"])))])
    here = Path(__file__).resolve().parents[1]
    workers = {}
    for side, code in (("old", args.old.resolve()), ("new", here)):
        env = {**os.environ, "PYTHONPATH": str(code)}
        proc = subprocess.Popen([sys.executable, "-c", WORKER, args.memory, args.uri], env=env, cwd=str(code),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        proc.stdin.write(json.dumps(queries) + "\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["ready"]
        workers[side] = proc
    times: dict[str, list[float]] = {"old": [], "new": []}
    for _ in range(args.rounds):
        for side, proc in workers.items():
            proc.stdin.write("run\n")
            proc.stdin.flush()
            times[side] += json.loads(proc.stdout.readline())
    for proc in workers.values():
        proc.stdin.close()
        proc.wait(timeout=60)
    out = {"memory": args.memory, "queries": len(queries), "rounds": args.rounds, "old": str(args.old),
           **{side: {"p50": statistics.median(v), "p95": pct(v, 95), "n": len(v)} for side, v in times.items()}}
    out["ratio_p50"] = out["new"]["p50"] / out["old"]["p50"]
    out["ratio_p95"] = out["new"]["p95"] / out["old"]["p95"]
    print(json.dumps(out, indent=1))
    if args.out:
        args.out.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
