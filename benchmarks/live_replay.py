"""A conversation replayed live against one batch ingest of it: LLM calls, tokens and wall
time of each, and how fast freshly added turns are written and recalled.

The batch ingests LoCoMo conv-26 in one call. The replay adds it an exchange (`--chunk` turns)
at a time, building after every add as a live application's worker would, then flushes at
the end. After each add, the last added turn's own words are recalled: the turn must come
back in `recent` (or in a scene, once built), and the add and that recall are timed.

The LLM is the auto-replying stub of `tests/fixtures/auto_llm.py` sleeping `--latency`
seconds per call (a filler, never a product default); tokens are counted with the encoder's
WordPiece tokenizer.

    TMEM_LLM_CACHE=off python -m benchmarks.live_replay --uri bolt://127.0.0.1:7689 \
        --sample conv-26 --latency 1 --chunk 2 --concurrency 8 --out /tmp/live_replay.json
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
from tmem_graph.construct.pipeline import Builder
from tmem_graph.encode import get_encoder
from tmem_graph.evaluate.data import data_dir
from tmem_graph.llm.client import LLMClient, LLMSettings
from tmem_graph.store import Store
from tests.fixtures.auto_llm import serve


def usage(llm: LLMClient) -> dict:
    rows = {k: vars(v) for k, v in llm.ledger.items()}
    total = {key: sum(r.get(key, 0) for r in rows.values()) for key in ("calls", "prompt_tokens", "completion_tokens")}
    return {"stages": {k: {"calls": r["calls"], "prompt_tokens": r["prompt_tokens"],
                           "completion_tokens": r["completion_tokens"]} for k, r in rows.items()}, **total}



def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--uri", default="bolt://127.0.0.1:7687")
    ap.add_argument("--sample", default="conv-26")
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--chunk", type=int, default=2, help="turns per add (2: an exchange)")
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    encoder = get_encoder()
    turns = read_conversation(data_dir() / "locomo10.json", "locomo", args.sample)
    store = Store(Settings.from_env(uri=args.uri))
    store.apply_schema(encoder.dim)
    server = serve(args.latency, encoder.count_tokens)
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    out: dict = {"sample": args.sample, "turns": len(turns), "latency_s": args.latency, "chunk": args.chunk,
                 "concurrency": args.concurrency}
    try:
        batch_id, live_id = f"bench-live-batch-{args.sample}", f"bench-live-replay-{args.sample}"
        for m in (batch_id, live_id):
            if store.exists(m):
                store.drop(m)

        llm = LLMClient(LLMSettings(base_url=url, model="auto"))
        t0 = time.perf_counter()
        api.ingest(batch_id, turns, store=store, encoder=encoder, llm=llm, concurrency=args.concurrency)
        out["batch"] = {"wall_s": time.perf_counter() - t0, **usage(llm)}
        print("batch", json.dumps(out["batch"])[:300], flush=True)

        llm = LLMClient(LLMSettings(base_url=url, model="auto"))
        builder = Builder(store, llm, encoder, args.concurrency)
        memory = api.Memory(live_id, store=store, encoder=encoder)
        add_ms, recall_ms, build_s, found = [], [], [], 0
        t0 = time.perf_counter()
        for start in range(0, len(turns), args.chunk):
            chunk = turns[start:start + args.chunk]
            t1 = time.perf_counter()
            memory.add(chunk)
            add_ms.append((time.perf_counter() - t1) * 1000)
            t1 = time.perf_counter()
            got = memory.recall(chunk[-1].text)
            recall_ms.append((time.perf_counter() - t1) * 1000)
            held = {t.id for t in got.recent} | {t["id"] for s in got.scenes for t in s.turns}
            found += chunk[-1].id in held
            t1 = time.perf_counter()
            builder.build(live_id)
            build_s.append(time.perf_counter() - t1)
        t1 = time.perf_counter()
        builder.build(live_id, flush=True)
        build_s.append(time.perf_counter() - t1)
        out["replay"] = {"wall_s": time.perf_counter() - t0, **usage(llm), "adds": len(add_ms),
                         "add_ms": {"p50": statistics.median(add_ms), "p95": pct(add_ms, 95)},
                         "fresh_recall_ms": {"p50": statistics.median(recall_ms), "p95": pct(recall_ms, 95)},
                         "fresh_turn_recalled": found / len(add_ms),
                         "build_s": {"p50": statistics.median(build_s), "max": max(build_s), "sum": sum(build_s)}}
        same = [s["turn_ids"] for s in api.Memory(batch_id, store=store).export()["scenes"]] == \
               [s["turn_ids"] for s in api.Memory(live_id, store=store).export()["scenes"]]
        out["same_scenes"] = same
        out["ratio_calls"] = out["replay"]["calls"] / out["batch"]["calls"]
        out["ratio_tokens"] = ((out["replay"]["prompt_tokens"] + out["replay"]["completion_tokens"])
                               / (out["batch"]["prompt_tokens"] + out["batch"]["completion_tokens"]))
        print(json.dumps({k: v for k, v in out.items() if k not in ("batch",)}, indent=1)[:3000], flush=True)
    finally:
        server.shutdown()
        store.close()
    if args.out:
        args.out.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
