"""What the `recent` channel (turns no scene holds yet) costs a recall: the cascade with the
channel on and off, interleaved query by query, on a built memory with no pending turns and
after N pending turns are added to a copy of it.

The memory is an existing built one (e.g. `svc-locomo`, written by
benchmarks/service_latency.py); copies of its built part are made by export and import (so all
hold the same scenes, and none of its pending turns), then N turns of another LoCoMo
conversation are added to a copy as pending (N = 0 first).
Queries are the LoCoMo questions of the memory's sample; vectors are encoded once, so only
the two queries of the cascade are timed.

    python -m benchmarks.recent_cost --uri bolt://127.0.0.1:7687 --memory svc-locomo \
        --pending 24 200 --queries 150 --out /tmp/recent_cost.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from benchmarks._common import pct
from tmem_graph import api
from tmem_graph.config import Settings
from tmem_graph.construct.inputs import read_conversation
from tmem_graph.encode import get_encoder
from tmem_graph.evaluate.data import data_dir, load
from tmem_graph.retrieve.cascade import Cascade
from tmem_graph.store import Store



def timed(cascade: Cascade, memory_id: str, queries: list[tuple[str, list[float]]]) -> dict:
    on, off, found = [], [], 0
    for text, vector in queries:  # interleaved: on, then off, query by query
        t0 = time.perf_counter()
        got = cascade.recall(memory_id, text, vector)
        on.append((time.perf_counter() - t0) * 1000)
        found += bool(got.recent)
        t0 = time.perf_counter()
        cascade.recall(memory_id, text, vector, without=["recent"])
        off.append((time.perf_counter() - t0) * 1000)
    return {"on_ms": {"p50": statistics.median(on), "p95": pct(on, 95)},
            "off_ms": {"p50": statistics.median(off), "p95": pct(off, 95)},
            "ratio_p50": statistics.median(on) / statistics.median(off), "recalls_with_recent": found}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--uri", default="bolt://127.0.0.1:7687")
    ap.add_argument("--memory", required=True, help="a built memory (its sample's questions are the queries)")
    ap.add_argument("--sample", default="conv-26")
    ap.add_argument("--pending-from", default="conv-30", help="the sample whose turns are added as pending")
    ap.add_argument("--pending", type=int, nargs="+", default=[24, 200])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    encoder = get_encoder()
    store = Store(Settings.from_env(uri=args.uri))
    sample = next(s for s in load(data_dir() / "locomo10.json") if s["sample_id"] == args.sample)
    texts = [q["question"] for q in sample["qa"]][:args.queries]
    vectors = encoder.encode(texts)
    queries = list(zip(texts, vectors))
    cascade = Cascade(store, store.settings.retrieval)
    out = {"memory": args.memory, "queries": len(queries), "runs": {}}
    extra = read_conversation(data_dir() / "locomo10.json", "locomo", args.pending_from)
    doc = api.Memory(args.memory, store=store).export()
    held = {t for s in doc["scenes"] for t in s["turn_ids"]}
    doc["turns"] = [t for t in doc["turns"] if t["id"] in held]  # the built memory alone: nothing pending
    for n in [0] + args.pending:
        copy = f"{args.memory}-pending-{n}"
        if store.exists(copy):
            store.drop(copy)
        api.import_memory({**doc, "memory_id": copy}, store=store, encoder=encoder)
        if n:
            api.Memory(copy, store=store, encoder=encoder).add(
                [{"speaker": t.speaker, "text": t.text, "time": t.time} for t in extra[:n]])
        for text, vector in queries[:20]:  # warm-up
            cascade.recall(copy, text, vector)
        out["runs"][f"{n} pending"] = timed(cascade, copy, queries)
        print(f"{n} pending", json.dumps(out["runs"][f"{n} pending"]), flush=True)
        store.drop(copy)
    store.close()
    if args.out:
        args.out.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
