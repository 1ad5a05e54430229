"""Recall as a memory grows: warm recall over HTTP, a fresh process's first recall, and what a
process holds after recalling every memory, side by side with an older checkout.

`load` imports synthetic memories (`tests/fixtures/synthetic.py`; the `fake:384` encoder, so
that no model's encoding enters the figures) into NEO4J_URI's database: `scale-<n>` for each
`--items n`, `--small` memories of 20 items (`scale-small-NNNN`), and the example (`scale-example`):

    TMEM_ENCODER=fake:384 python -m benchmarks scale load --items 1000 --items 10000 --small 1000

`run` starts `tmem serve` from this checkout (and with `--old DIR` from an older checkout beside
it); then per memory `--queries` recalls over HTTP, the servers in turn, and `--fresh` times a
fresh `tmem recall` of each checkout; and each server's RSS when idle and after every recall:

    TMEM_ENCODER=fake:384 python -m benchmarks scale run --memory scale-example --memory scale-1000 \\
        --memory scale-10000 --old /tmp/old --queries 100 --fresh 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np

from benchmarks.common import HERE, load_average, pct, proc_status, serve, stop
from tests.conftest import load_fixture
from tests.fixtures.synthetic import CHANNELS, FEELINGS, PLACES, THINGS, VERBS, synthetic_memory
from tmem_graph import api
from tmem_graph.config import Settings
from tmem_graph.encode import Encoder
from tmem_graph.encode.fake import FakeEncoder


class CachedFake(Encoder):
    """`fake:384`'s vectors (a text's: the normalised sum of its words'), each word's computed
    once: the synthetic vocabulary is small, so many times faster; the servers encode the queries
    with `fake:384` itself."""

    def __init__(self, dim: int = 384):
        self.fake, self.name, self.dim, self.words = FakeEncoder(dim), f"fake:{dim}", dim, {}

    def encode(self, texts, batch_size: int = 64) -> list[list[float]]:
        out = []
        for text in texts:
            words = re.findall(r"\w+", text.lower())
            new = [w for w in dict.fromkeys(words) if w not in self.words]
            self.words.update(zip(new, map(np.asarray, self.fake.encode(new))))
            total = sum((self.words[w] for w in words), np.zeros(self.dim))
            norm = float(np.linalg.norm(total))
            out.append((total / norm).tolist() if norm > 0 else [1.0] + [0.0] * (self.dim - 1))
        return out


def load(items: list[int], small: int) -> None:
    settings = Settings.from_env()
    encoder = CachedFake(384)
    api.apply_schema(settings, encoder=encoder)
    docs = [("scale-example", lambda: {**load_fixture(), "memory_id": "scale-example"})]
    docs += [(f"scale-{n}", lambda n=n: synthetic_memory(f"scale-{n}", n_items=n)) for n in items]
    docs += [(f"scale-small-{k:04d}", lambda k=k: synthetic_memory(f"scale-small-{k:04d}", n_items=20, seed=k))
             for k in range(small)]
    for name, doc in docs:
        t0 = time.perf_counter()
        memory, _ = api.import_memory(doc(), settings, encoder=encoder, replace=True)
        memory.close()
        if not name.startswith("scale-small-") or name.endswith("0"):
            print(f"{name}: {time.perf_counter() - t0:.1f} s", flush=True)


def queries(n: int, seed: int = 11) -> list[str]:
    """Questions in the synthetic memories' vocabulary, some with the example's words."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        out.append(rng.choice([
            f"When was I {rng.choice(FEELINGS)} about {rng.choice(THINGS)}?",
            f"What happened near {rng.choice(PLACES)} with {rng.choice(THINGS)}?",
            f"Who {rng.choice(VERBS)} {rng.choice(THINGS)}?",
            f"Any {rng.choice(CHANNELS).replace('_', ' ')} around {rng.choice(THINGS)} lately?",
            "Where should the team go for dinner on Friday?",
        ]))
    return out


def run(memories: list[str], old: Path | None, n: int, fresh: int, out: Path | None) -> None:
    sides = {"new": HERE} | ({"old": old} if old else {})
    servers = {name: serve(path) for name, path in sides.items()}
    result: dict = {"load_start": load_average(), "memories": memories, "http": {}, "fresh": {}, "rss": {}}
    try:
        with httpx.Client(timeout=600) as client:
            for name, (proc, url) in servers.items():   # the encoder and the driver warm, as in a running service
                client.post(f"{url}/memories/scale-example/recall", json={"query": "dinner"}).raise_for_status()
                result["rss"][name] = {"idle": proc_status(proc.pid, "VmRSS")["VmRSS"]}
            qs = queries(n)
            for memory in memories:
                times: dict[str, list[float]] = {name: [] for name in servers}
                for k, q in enumerate(qs):
                    order = list(servers.items())
                    for name, (_, url) in (order if k % 2 == 0 else order[::-1]):
                        t0 = time.perf_counter()
                        client.post(f"{url}/memories/{memory}/recall", json={"query": q}).raise_for_status()
                        times[name].append((time.perf_counter() - t0) * 1000)
                result["http"][memory] = {name: {"p50": statistics.median(t), "p95": pct(t, 95)}
                                          for name, t in times.items()}
            for name, (proc, _) in servers.items():
                status = proc_status(proc.pid, "VmRSS", "VmHWM")
                result["rss"][name].update(after=status["VmRSS"], peak=status["VmHWM"])
        for memory in memories:
            result["fresh"][memory] = {}
            for name, path in sides.items():
                walls = []
                for _ in range(fresh):
                    t0 = time.perf_counter()
                    done = subprocess.run([sys.executable, "-m", "tmem_graph.cli", "recall", memory,
                                           "Where should the team go for dinner on Friday?"],
                                          cwd=path, env={**os.environ, "PYTHONPATH": str(path)},
                                          capture_output=True, text=True)
                    walls.append((time.perf_counter() - t0) * 1000)
                    if done.returncode:
                        raise SystemExit(f"{name} recall of {memory} failed: {done.stderr[-500:]}")
                result["fresh"][memory][name] = statistics.median(walls)
    finally:
        for proc, _ in servers.values():
            stop(proc)
    result["load_end"] = load_average()
    names = list(sides)[::-1]   # old first: "before → today"
    print(f"\nload {result['load_start']} → {result['load_end']}; checkouts: {' → '.join(names)}\n")
    print("| memory | HTTP p50 / p95 | fresh `tmem recall` |\n|---|---|---|")
    for memory in memories:
        http, fresh = result["http"][memory], result["fresh"][memory]
        print(f"| {memory} | " + " → ".join(f"{http[n]['p50']:.1f} / {http[n]['p95']:.1f} ms" for n in names)
              + " | " + " → ".join(f"{fresh[n] / 1000:.2f} s" for n in names) + " |")
    print("\nserver RSS, idle → after every recall: " + ", ".join(
        f"{n} {result['rss'][n]['idle'] / 2**20:.0f} → {result['rss'][n]['after'] / 2**20:.0f} MiB" for n in names))
    if out:
        out.write_text(json.dumps(result, indent=1))


def main(argv: list[str], prog: str) -> None:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("load")
    p.add_argument("--items", type=int, action="append", default=[])
    p.add_argument("--small", type=int, default=0)
    p = sub.add_parser("run")
    p.add_argument("--memory", action="append", required=True)
    p.add_argument("--old", type=Path)
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--fresh", type=int, default=3)
    p.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.command == "load":
        load(args.items, args.small)
    else:
        run(args.memory, args.old, args.queries, args.fresh, args.out)

