"""Per-memory BM25 (tmem_graph/retrieve/lexical.py): what its stemmer buys, and what loading a
memory's Statistics (read once per version per process) costs.

    python -m benchmarks.lexical stemming     # LoCoMo, all ten conversations: BM25 over turns
    python -m benchmarks.lexical load --memory conv26-full --memory conv47-strong
    python -m benchmarks.lexical cold --memory conv26-full --sample conv-26 --threads 8 --old /tmp/base

`stemming`: for each LoCoMo question (categories 1-4, repaired evidence), BM25 over the turns of
its conversation ranks them; the share of its evidence turns within the first 5 / 10 / 20, with
the Porter stems recall uses and with the same analysis unstemmed. No database, no encoder.
`load`: the `retrieve/statistics` query and the Statistics' build, each the median of 5 runs.
`cold`: `--threads` recalls of one memory started at once on an empty cache (as after a write,
when every caller of a service meets the new version), by this checkout and by `--old` (a
directory holding an older `tmem_graph`), each in a process of its own, alternating: the time
until the last of them returns and how many times the memory was loaded.
Figures in docs/retrieval.md ("Lexical ranking", "Exact vector rankings").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from benchmarks._common import load_average, locomo_queries
from tmem_graph.config import Settings
from tmem_graph.evaluate.data import EvidenceRepairs, data_dir, load, locomo_qas
from tmem_graph.retrieve import lexical
from tmem_graph.store import Store

DEPTHS = (5, 10, 20)


def conversation_turns(sample: dict) -> list[tuple[str, str]]:
    conv = sample["conversation"]
    return [(t["dia_id"], t.get("text", "")) for key, turns in conv.items()
            if key.startswith("session_") and isinstance(turns, list) for t in turns]


def stemming() -> None:
    porter = lexical.stem
    found = defaultdict(lambda: defaultdict(float))
    questions = 0
    for sample in load(data_dir() / "locomo10.json"):
        turns = conversation_turns(sample)
        qas = locomo_qas(sample, EvidenceRepairs())
        questions += len(qas)
        for name, stem in (("stemmed", porter), ("unstemmed", lambda w: w)):
            lexical.stem = stem   # the analysis with and without its last step
            lexical.counted.cache_clear()   # texts analysed the other way are kept there
            index = lexical.Bm25(((i, {"text": t}) for i, t in turns), {"text": 1.0})
            for qa in qas:
                ranked = [k for k, _ in index.rank(lexical.query_terms(qa.question))]
                for depth in DEPTHS:
                    found[name][depth] += len(set(ranked[:depth]) & set(qa.evidence)) / len(qa.evidence)
        lexical.stem = porter
        lexical.counted.cache_clear()
    print(f"LoCoMo, 10 conversations, {questions} questions: evidence turns ranked by BM25 over the turns")
    print("| analysis | " + " | ".join(f"R@{d}" for d in DEPTHS) + " |")
    print("|---|" + "---|" * len(DEPTHS))
    for name in ("stemmed", "unstemmed"):
        print(f"| {name} | " + " | ".join(f"{found[name][d] / questions:.3f}" for d in DEPTHS) + " |")


def load_cost(memories: list[str]) -> None:
    print("| memory | objects | query ms | build ms |")
    print("|---|---|---|---|")
    with Store(Settings.from_env()) as store:
        for memory_id in memories:
            fetch, build = [], []
            for _ in range(5):
                t0 = time.perf_counter()
                row = store.run("retrieve/statistics", memory_id=store.memory(memory_id)["pid"],
                                keys=lexical.statistics_keys())[0]
                t1 = time.perf_counter()
                lexicon = lexical.build(row)
                fetch.append((t1 - t0) * 1000)
                build.append((time.perf_counter() - t1) * 1000)
            held = sum(lexicon.docs.values()) + sum(lexicon.counts.values())
            print(f"| {memory_id} | {held} | {statistics.median(fetch):.1f} | {statistics.median(build):.1f} |")


COLD = r"""
import json, sys, threading, time
from tmem_graph import api
from tmem_graph.retrieve.lexical import CACHE
memory, threads, rounds = api.Memory(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
queries = json.loads(sys.stdin.read())
memory.recall(queries[0])   # the encoder and the driver warm, as in a running service
run, loads = memory.store.run, []
def counting(name, **params):
    if name == "retrieve/statistics":
        loads.append(name)
    return run(name, **params)
memory.store.run = counting
out = []
for r in range(rounds):
    CACHE._held.clear()   # as after a write: the version in the cache is not the memory's
    loads.clear()
    start, ends = threading.Barrier(threads + 1), []
    def one(q):
        start.wait()
        memory.recall(q)
        ends.append(time.perf_counter())
    workers = [threading.Thread(target=one, args=(queries[(r * threads + n) % len(queries)],)) for n in range(threads)]
    for w in workers:
        w.start()
    start.wait()
    t0 = time.perf_counter()
    for w in workers:
        w.join()
    out.append({"last_ms": (max(ends) - t0) * 1000, "first_ms": (min(ends) - t0) * 1000, "loads": len(loads)})
print(json.dumps({"code": api.__file__, "rounds": out}))
"""


def cold(args) -> None:
    """`--threads` recalls at once on an empty cache, this checkout and `--old` in turn."""
    queries = locomo_queries(args.sample, 40)
    sides = {"old": args.old, "new": Path(__file__).resolve().parents[1]}
    got: dict[str, list[dict]] = {side: [] for side in sides}
    for n in range(args.processes):
        for side in (list(sides) if n % 2 == 0 else list(sides)[::-1]):
            env = {**os.environ, "PYTHONPATH": str(sides[side])}
            done = subprocess.run([sys.executable, "-c", COLD, args.memory, str(args.threads), str(args.rounds)],
                                  input=json.dumps(queries), env=env, capture_output=True, text=True, check=True,
                                  cwd=str(sides[side]))
            result = json.loads(done.stdout)
            assert result["code"].startswith(str(sides[side])), result["code"]   # the checkout asked for
            got[side] += result["rounds"]
    print(f"{args.memory}: {args.threads} recalls at once on an empty cache, {args.processes} processes × "
          f"{args.rounds} rounds per checkout (load average {load_average()})")
    print("| checkout | loads per round | first returns, median ms | last returns, median ms |")
    print("|---|---|---|---|")
    for side, rounds in got.items():
        print(f"| {side} | {statistics.median(r['loads'] for r in rounds):g} "
              f"| {statistics.median(r['first_ms'] for r in rounds):.0f} "
              f"| {statistics.median(r['last_ms'] for r in rounds):.0f} |")
    ratio = statistics.median(r["last_ms"] for r in got["new"]) / statistics.median(r["last_ms"] for r in got["old"])
    print(f"last returns, new / old: {ratio:.2f}×")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("stemming")
    cost = sub.add_parser("load")
    cost.add_argument("--memory", action="append", required=True)
    at_once = sub.add_parser("cold")
    at_once.add_argument("--memory", required=True)
    at_once.add_argument("--sample", required=True, help="the LoCoMo conversation whose questions are recalled")
    at_once.add_argument("--old", type=Path, required=True)
    at_once.add_argument("--threads", type=int, default=8)
    at_once.add_argument("--rounds", type=int, default=3)
    at_once.add_argument("--processes", type=int, default=4)
    args = ap.parse_args()
    if args.command == "stemming":
        stemming()
    elif args.command == "load":
        load_cost(args.memory)
    else:
        cold(args)


if __name__ == "__main__":
    main()
