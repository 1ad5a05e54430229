"""Recall latency before and after a change of the cascade, side by side in one run.

The package as it was at a git ref (`--before`, default the commit before the lanes fusion)
is unpacked into a temporary folder under another name and imported next to today's, so both
cascades run in one process against one server and one memory, interleaved query by query
(the machine's load falls on both alike). The memory is the LoCoMo-sized synthetic memory of
benchmarks/recall_latency.py (600 turns, 60 scenes, 500 items, 2,460 trigger views); the
query vectors are encoded once, so the figures are the cascade alone:

    python -m benchmarks.fusion_latency --queries 200 --out /tmp/fusion_latency.json

`--memory` runs them on memories already in the database instead (each query on each memory),
`--budget-tokens` with a token budget (packed evidence, the turn lane asked for). It also times the pure fusion step (`select_scenes` + `select_items` on recorded candidates).
Figures in docs/benchmarks.md ("Fusion latency").
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.recall_latency import QUERIES
from tests.fixtures.synthetic import synthetic_memory
from benchmarks._common import pct
from tmem_graph import api
from tmem_graph.config import Settings
from tmem_graph.retrieve.cascade import Cascade
from tmem_graph.retrieve.select import select_items, select_scenes

MEMORY_ID = "bench-fusion-latency"
BEFORE = "9246c6a"  # the last commit with plain RRF as the only fusion


def package_at(ref: str, into: Path, name: str = "tmem_before"):
    """Import the package as it was at `ref` (and its cypher/ folder) under the name `name`."""
    root = Path(__file__).resolve().parents[1]
    archive = subprocess.run(["git", "-C", str(root), "archive", ref, "tmem_graph", "cypher"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    (into / "tmem_graph").rename(into / name)
    sys.path.insert(0, str(into))
    return importlib.import_module(f"{name}.retrieve.cascade"), importlib.import_module(f"{name}.store")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default=BEFORE, help="git ref of the cascade to compare with")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--memory", action="append", help="an existing memory to recall from (repeatable)")
    ap.add_argument("--budget-tokens", type=int, help="recall with this evidence budget")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()

    settings = Settings.from_env()
    if args.budget_tokens:
        settings = settings.with_retrieval(budget_tokens=args.budget_tokens)
    if args.memory:
        memory, memories = api.Memory(args.memory[0], settings=settings), args.memory
    else:
        doc = synthetic_memory(MEMORY_ID, n_items=500, n_scenes=60, turns_per_scene=10, horizon_per_scene=12)
        memory, _ = api.import_memory(doc, settings, replace=True)
        memories = [MEMORY_ID]
    memories = [memory.store.memory(m)["pid"] for m in memories]   # the cascades take the id its objects carry
    queries = [QUERIES[n % len(QUERIES)] for n in range(args.queries)]
    vectors = dict(zip(QUERIES, memory.encoder.encode(QUERIES)))

    with tempfile.TemporaryDirectory() as tmp:
        old_cascade, old_store = package_at(args.before, Path(tmp))
        before_store = old_store.Store(settings)
        before = old_cascade.Cascade(before_store, settings.retrieval.for_budget())
        after = Cascade(memory.store, settings.retrieval.for_budget())
        times = {"before": [], "after": []}
        for m in memories:
            for _ in range(3):  # warm-up: both query plans cached, both pools started
                before.recall(m, queries[0], vectors[queries[0]])
                after.recall(m, queries[0], vectors[queries[0]])
        for n, (q, m) in enumerate((q, m) for q in queries for m in memories):
            runs = (("before", before), ("after", after)) if n % 2 == 0 else (("after", after), ("before", before))
            for name, cascade in runs:
                t0 = time.perf_counter()
                cascade.recall(m, q, vectors[q])
                times[name].append((time.perf_counter() - t0) * 1000)
        traces = [after.recall(memories[0], q, vectors[q], trace=True).trace for q in QUERIES]
        for cascade in (before, after):   # a cascade with its own threads (before the two-query one)
            if hasattr(cascade, "close"):
                cascade.close()
        before_store.close()

    fusion_us = []
    for _ in range(5):
        for trace in traces:
            t0 = time.perf_counter()
            select_scenes(trace["scenes"], settings.retrieval)
            select_items(trace["items"], settings.retrieval)
            fusion_us.append((time.perf_counter() - t0) * 1e6)
    if not args.memory:
        memory.drop()

    summary = {name: {"median_ms": statistics.median(v), "p95_ms": pct(v, 95)} for name, v in times.items()}
    summary["ratio_median_after_over_before"] = summary["after"]["median_ms"] / summary["before"]["median_ms"]
    summary["ratio_p95_after_over_before"] = summary["after"]["p95_ms"] / summary["before"]["p95_ms"]
    summary["fusion_step_us"] = {"median": statistics.median(fusion_us), "p95": pct(fusion_us, 95)}
    args.out.write_text(json.dumps({"before": args.before, "queries": len(queries), "memories": memories,
                                    "budget_tokens": args.budget_tokens, "summary": summary,
                                    "times_ms": times}, indent=2))
    print(f"{len(queries)} queries × {len(memories)} memories, interleaved; before = {args.before}, "
          f"after = this checkout; budget {args.budget_tokens or 'none (unpacked)'}")
    print("| cascade | median ms | p95 ms |")
    print("|---|---|---|")
    for name in ("before", "after"):
        print(f"| {name} | {summary[name]['median_ms']:.1f} | {summary[name]['p95_ms']:.1f} |")
    print(f"ratio after/before: median {summary['ratio_median_after_over_before']:.2f}, "
          f"p95 {summary['ratio_p95_after_over_before']:.2f}; fusion step alone: median "
          f"{summary['fusion_step_us']['median']:.0f} µs, p95 {summary['fusion_step_us']['p95']:.0f} µs")


if __name__ == "__main__":
    main()
