"""Build a LoCoMo conversation with the fully local model, one session at a time, recording
wall time, LLM calls and tokens per session and stage (docs/benchmarks.md, docs/evaluation.md).

Every session is an incremental ingest into the same memory, exactly as a user's assistant
would extend its memory after each conversation; the model is loaded once. A line of JSON per
finished session is appended to `--log`, so a run stopped at any point keeps its figures, and
re-running the same command resumes: sessions already in the memory add nothing, and LLM
answers already given come from the response cache ($TMEM_HOME/llm-cache.sqlite).
`--plus` then ingests the cue dialogues of the LoCoMo-Plus dev probes stitched into this base
conversation, a few probes per step in probe order (the steps of `tmem eval … --build`), so
that `tmem eval locomo-plus --limit K` evaluates exactly the probes whose cues are built.

    TMEM_HOME=/tmp/eval-home NEO4J_URI=bolt://127.0.0.1:7690 TMEM_LLM_MODEL=local \\
        python benchmarks/local_build.py --sample conv-26 --memory conv26-local \\
        --sessions 19 --plus --log /tmp/eval-home/conv26-build.jsonl
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

from tmem_graph import api
from tmem_graph.config import Settings
from tmem_graph.encode import get_encoder
from tmem_graph.evaluate import data as ev
from tmem_graph.llm.factory import open_llm
from tmem_graph.local import enable_local_llm
from tmem_graph.store import Store
from tmem_graph.transfer import export_memory


def _delta(after: dict, before: dict) -> dict:
    out = {}
    for stage, usage in after.items():
        row = {k: round(v - before.get(stage, {}).get(k, 0), 2) for k, v in vars(usage).items()}
        if any(row.values()):
            out[stage] = row
    return out


def _examples(store: Store, memory_id: str, limit: int) -> list[dict]:
    """A few triggers the model wrote: items' Entity/Bridge and scenes' attributes and Horizon."""
    doc = export_memory(store, memory_id)
    out: list[dict] = []
    for item in doc.items[:limit]:
        for trigger in item.triggers[:1]:
            out.append({"item": item.text, "concept": trigger.concept, "bridge": trigger.bridge,
                        "rationale": trigger.rationale})
    for scene in doc.scenes[:limit]:
        out.append({"scene": scene.title, "scene_trigger": scene.scene_trigger,
                    "horizon": {h.channel: h.text for h in scene.horizon}})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", default="conv-26")
    parser.add_argument("--memory", required=True)
    parser.add_argument("--sessions", type=int, default=None, help="build sessions 1..N (default all)")
    parser.add_argument("--plus", action="store_true", help="then the LoCoMo-Plus dev cues of this base")
    parser.add_argument("--probes-per-step", type=int, default=5,
                        help="cues ingested together (each step is written before the next starts)")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--examples", type=int, default=0, help="print N trigger views at the end")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("neo4j").setLevel(logging.WARNING)

    samples = ev.load(ev.data_dir() / "locomo10.json")
    position = next(n for n, s in enumerate(samples) if s["sample_id"] == args.sample)
    probes = []
    if args.plus:
        probes = ev.base_probes(ev.load(ev.data_dir() / "locomo_plus_dev.json"), samples, args.sample)
    steps = ev.build_steps(samples[position], args.sessions, probes, args.probes_per_step)

    store = Store(Settings.from_env())
    encoder = get_encoder(store.settings.encoder)
    args.log.parent.mkdir(parents=True, exist_ok=True)
    enable_local_llm()
    with open_llm() as llm:
        for name, step_turns in steps:
            before = {k: dict(vars(v)) for k, v in llm.ledger.items()}
            started = time.perf_counter()
            report = api.ingest(args.memory, step_turns, store=store, encoder=encoder, llm=llm,
                                concurrency=args.concurrency)
            row = {"step": name, "turns": len(step_turns), "new_turns": report.new_turns,
                   "seconds": round(time.perf_counter() - started, 1), "model": llm.settings.model,
                   "new_scenes": report.new_scenes, "new_topics": report.new_topics,
                   "new_items": report.new_items, "new_trigger_views": report.new_trigger_views,
                   "llm": _delta(llm.ledger, before), "at": time.strftime("%Y-%m-%dT%H:%M:%S")}
            with args.log.open("a") as out:
                out.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)
    if args.examples:
        for example in _examples(store, args.memory, args.examples):
            print(json.dumps(example))


if __name__ == "__main__":
    main()
