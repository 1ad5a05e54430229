"""Cost of building a memory with the write path, with a scripted LLM (no model quality
involved): LLM calls and prompt/completion tokens per stage and per 100 turns, and wall time
with a simulated per-call latency at several concurrencies.

The scripted LLM is an OpenAI-compatible HTTP stub on loopback that writes a plausible,
schema-valid reply for every stage (segmentation every ~8 turns, one topic per 3 scenes,
3 atomic items per scene plus connected items, 3 triggers per item, 4 attributes and 5
Horizon projections per scene) after sleeping `--latency` seconds. Tokens are counted with
the encoder's WordPiece tokenizer (all-MiniLM-L6-v2), not the LLM's.

    python -m benchmarks.ingest_cost --uri bolt://127.0.0.1:7689 --sample conv-26 \
        --latency 1 --concurrency 1 8 --out /tmp/ingest_cost.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from tmem_graph import api
from tmem_graph.config import Settings
from tmem_graph.construct.inputs import read_conversation
from tmem_graph.encode import get_encoder
from tmem_graph.llm.client import LLMClient, LLMSettings
from tmem_graph.store import Store
from tests.fixtures.auto_llm import serve

def _data() -> Path:
    from tmem_graph.evaluate.data import data_dir

    return data_dir() / "locomo10.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--uri", default="bolt://127.0.0.1:7687")
    ap.add_argument("--data", type=Path, default=None, help="locomo10.json (default: the shared data folder)")
    ap.add_argument("--sample", default="conv-26")
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    encoder = get_encoder()
    count = encoder.count_tokens
    turns = read_conversation(args.data or _data(), "locomo", args.sample)
    store = Store(Settings.from_env(uri=args.uri))
    store.apply_schema(encoder.dim)
    server = serve(args.latency, count)
    results = {"sample": args.sample, "turns": len(turns), "latency_s": args.latency, "runs": []}
    for conc in args.concurrency:
        memory_id = f"bench-ingest-{args.sample}-c{conc}"
        if store.exists(memory_id):
            store.drop(memory_id)
        llm = LLMClient(LLMSettings(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", model="auto"))
        t0 = time.perf_counter()
        report = api.ingest(memory_id, turns, store=store, encoder=encoder, llm=llm, concurrency=conc)
        wall = time.perf_counter() - t0
        stages = {k: vars(v) for k, v in llm.ledger.items()}
        results["runs"].append({"concurrency": conc, "wall_s": wall, "stages": stages,
                                "report": vars(report) | {"ledger": None}})
        store.drop(memory_id)
    server.shutdown()
    first = results["runs"][0]["stages"]
    per100 = 100 / len(turns)
    print(f"{args.sample}: {len(turns)} turns; simulated latency {args.latency} s per call\n")
    print("| stage | calls | prompt tokens | completion tokens | calls / 100 turns | tokens / 100 turns |")
    print("|---|---|---|---|---|---|")
    total = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
    for stage, u in first.items():
        for k in total:
            total[k] += u[k]
        print(f"| {stage} | {u['calls']} | {u['prompt_tokens']} | {u['completion_tokens']} | "
              f"{u['calls'] * per100:.1f} | {(u['prompt_tokens'] + u['completion_tokens']) * per100:.0f} |")
    print(f"| **total** | {total['calls']} | {total['prompt_tokens']} | {total['completion_tokens']} | "
          f"{total['calls'] * per100:.1f} | {(total['prompt_tokens'] + total['completion_tokens']) * per100:.0f} |\n")
    print("| concurrency | wall time (s) | scenes | topics | items | trigger views |")
    print("|---|---|---|---|---|---|")
    for run in results["runs"]:
        r = run["report"]
        print(f"| {run['concurrency']} | {run['wall_s']:.0f} | {r['new_scenes']} | {r['new_topics']} | "
              f"{r['new_items']} | {r['new_trigger_views']} |")
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
