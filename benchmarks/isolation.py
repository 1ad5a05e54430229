"""Does a memory's recall move when other memories are imported beside it? Recall every LoCoMo
question of one conversation from its memory, write the recalls, and compare two such runs.

    python -m benchmarks.fixture import fixtures/conv30-full.json          # on a fresh server
    python -m benchmarks.isolation recall --memory conv30-full --sample conv-30 --out before.json
    python -m benchmarks.fixture import fixtures/conv26-full.json fixtures/conv42-strong.json …
    python -m benchmarks.isolation recall --memory conv30-full --sample conv-30 --out after.json
    python -m benchmarks.isolation diff before.json after.json

Each question is recalled unpacked and packed at `--budget-tokens` (2,000 by default); a
recall is its `--json` document without timings. `diff` counts the recalls that differ at all,
those whose scenes (ids, in order) differ, and those whose packed evidence turns differ.
docs/retrieval.md, "Exact vector rankings", holds the figures.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tmem_graph import api
from tmem_graph.config import RetrievalSettings
from tmem_graph.evaluate import data as ev


def recall_all(memory_id: str, sample: str, budget: int) -> dict:
    """Every question of `sample` recalled from `memory_id`, unpacked and packed at `budget`."""
    conv = next(s for s in ev.load(ev.data_dir() / "locomo10.json") if s["sample_id"] == sample)
    memory = api.Memory(memory_id)
    out = {}
    for n, qa in enumerate(conv["qa"]):
        for name, settings in (("unpacked", None), ("packed", RetrievalSettings(budget_tokens=budget))):
            doc = memory.recall(qa["question"], settings=settings).to_json()
            doc.pop("timings_ms", None)
            out[f"{n}/{name}"] = doc
    return out


def turns_of(doc: dict) -> list:
    """The evidence turns of a recall, in order: its scenes' turns (a packed recall's lane turns
    are in its scenes' excerpts), then the recent ones."""
    return [t["id"] for s in doc["scenes"] for t in s["turns"]] + [t["id"] for t in doc["recent"]]


def diff(a: dict, b: dict) -> dict:
    """How many recalls of two runs differ, by kind (unpacked / packed)."""
    counts: dict = {}
    for key in sorted(set(a) & set(b)):
        kind = key.split("/")[1]
        c = counts.setdefault(kind, {"recalls": 0, "differ": 0, "scenes_differ": 0, "turns_differ": 0})
        c["recalls"] += 1
        c["differ"] += a[key] != b[key]
        c["scenes_differ"] += [s["id"] for s in a[key]["scenes"]] != [s["id"] for s in b[key]["scenes"]]
        c["turns_differ"] += turns_of(a[key]) != turns_of(b[key])
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("recall", help="recall every question of a conversation and write the recalls")
    rec.add_argument("--memory", required=True)
    rec.add_argument("--sample", required=True, help="the LoCoMo conversation whose questions to recall")
    rec.add_argument("--budget-tokens", type=int, default=2000)
    rec.add_argument("--out", type=Path, required=True)
    cmp = sub.add_parser("diff", help="count the recalls two runs differ in")
    cmp.add_argument("a", type=Path)
    cmp.add_argument("b", type=Path)
    args = ap.parse_args()
    if args.command == "recall":
        args.out.write_text(json.dumps(recall_all(args.memory, args.sample, args.budget_tokens)), encoding="utf-8")
    else:
        a, b = (json.loads(p.read_text(encoding="utf-8")) for p in (args.a, args.b))
        print(json.dumps(diff(a, b), indent=1))


if __name__ == "__main__":
    main()
