"""How the cascade's last scene fusion trades lexical against associative evidence.

For every LoCoMo-Plus probe (cue recall) and every LoCoMo question (scene-level evidence
recall) of one memory, the cascade recalls with a scene budget large enough to return its
whole scene pool together with each scene's rank in every list (dialogue, Scene trigger,
Horizon, the SceneCue fusion "cue", pool BM25 "bm25", pool cosine "dense"). The final fusion is
then recomputed offline for a few variants, so they are compared on exactly the same pools:

    python benchmarks/scene_fusion.py --memory conv26-local --base conv-26 --plus-limit 41 \\
        --sessions 3 --out /tmp/scene_fusion.json

Used in docs/retrieval.md ("Scene fusion") to choose the default of `bm25_weight`.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from tmem_graph import api
from tmem_graph.config import RetrievalSettings
from tmem_graph.evaluate import data as ev

# name -> weight of each list in the final RRF (k0 = 60); lists left out weigh 0
VARIANTS = {
    "bm25+dense+cue (reference + cue)": {"bm25": 1, "dense": 1, "cue": 1},
    "bm25 x0.5 + dense + cue": {"bm25": 0.5, "dense": 1, "cue": 1},
    "dense+cue (no bm25)": {"dense": 1, "cue": 1},
    "bm25+dense (reference)": {"bm25": 1, "dense": 1},
    "cue only": {"cue": 1},
    "dense only": {"dense": 1},
    "bm25 only": {"bm25": 1},
}


def fused(scenes: list, weights: dict[str, float], k0: int = 60) -> list[str]:
    """Scene ids ordered by weighted RRF of their ranks (ties: the cascade's own order)."""
    score = {s.id: sum(w / (k0 + s.ranks[name]) for name, w in weights.items() if name in s.ranks)
             for s in scenes}
    order = {s.id: n for n, s in enumerate(scenes)}
    return sorted(score, key=lambda sid: (-score[sid], order[sid]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memory", required=True)
    ap.add_argument("--base", default="conv-26")
    ap.add_argument("--plus-limit", type=int, default=None, help="first N probes of the base (those built)")
    ap.add_argument("--sessions", type=int, default=None, help="LoCoMo questions with evidence in 1..N")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()

    root = ev.data_dir()
    samples = ev.load(root / "locomo10.json")
    position = next(n for n, s in enumerate(samples) if s["sample_id"] == args.base)
    probes = ev.base_probes(ev.load(root / "locomo_plus_dev.json"), samples, args.base)[:args.plus_limit]
    qas = [q for q in ev.locomo_qas(samples[position], ev.EvidenceRepairs())
           if ev.within_sessions(q.evidence, args.sessions)]
    memory = api.Memory(args.memory)
    wide = RetrievalSettings(k_scenes=200)

    plus = {name: [] for name in VARIANTS}
    for p in probes:
        scenes = memory.recall(p.query, speaker=p.query_speaker, settings=wide).scenes
        cue_scenes = {s.id for s in scenes if {t.id for t in p.cue} & {t["id"] for t in s.turns}}
        for name, weights in VARIANTS.items():
            order = fused(scenes, weights)
            plus[name].append(next((n for n, sid in enumerate(order, 1) if sid in cue_scenes), None))

    locomo = {name: {k: [] for k in (1, 3, 5)} for name in VARIANTS}
    for qa in qas:
        scenes = memory.recall(qa.question, settings=wide).scenes
        turns = {s.id: {t["id"] for t in s.turns} for s in scenes}
        gold = set(qa.evidence)
        for name, weights in VARIANTS.items():
            order = fused(scenes, weights)
            for k in (1, 3, 5):
                got = set().union(*(turns[sid] for sid in order[:k]))
                locomo[name][k].append(len(gold & got) / len(gold))

    def share(ranks: list, k: int) -> float:
        return sum(1 for r in ranks if r is not None and r <= k) / len(ranks) if ranks else float("nan")

    rows = {name: {"plus_S@1": share(plus[name], 1), "plus_S@5": share(plus[name], 5),
                   "plus_median_rank": statistics.median([r if r is not None else 999 for r in plus[name]])
                   if plus[name] else None,
                   **{f"locomo_scene_R@{k}": statistics.mean(v) if v else None
                      for k, v in locomo[name].items()}}
            for name in VARIANTS}
    args.out.write_text(json.dumps({"memory": args.memory, "probes": len(probes), "questions": len(qas),
                                    "variants": rows, "plus_ranks": plus}, indent=2))
    print(f"{len(probes)} probes, {len(qas)} questions, memory {args.memory}")
    print("| final scene fusion | Plus S@1 | Plus S@5 | median cue rank | LoCoMo scene R@1 | R@3 | R@5 |")
    print("|---|---|---|---|---|---|---|")
    for name, r in rows.items():
        print(f"| {name} | {r['plus_S@1']:.3f} | {r['plus_S@5']:.3f} | {r['plus_median_rank']} | "
              + " | ".join(f"{r[f'locomo_scene_R@{k}']:.3f}" for k in (1, 3, 5)) + " |")


if __name__ == "__main__":
    main()
