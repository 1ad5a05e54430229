"""The final scene fusion, compared offline on exactly the same candidates.

For every LoCoMo-Plus probe (cue recall: the rank of the cue's scene) and every LoCoMo
question (scene-level evidence recall) of one memory, the cascade recalls once with
`trace=True`, which keeps the scene layer's candidates (the pool's BM25 and dense rankings,
SceneCue and its three channels), with a pool widened to every scene a SceneCue channel
found; each variant then takes the pool its own SceneCue would have made (`restrict`) and
applies the product's own `select_scenes`, so the variants differ in nothing but the fusion:

    # the strong-trigger memory of shared/data/strong-triggers (probes name their cue scene)
    python benchmarks/fusion.py --memory conv-30-strong --sample conv-30 \\
        --probes ../shared/data/strong-triggers/conv-30-probes.json --out /tmp/fusion-conv30.json
    # a memory built by `tmem eval locomo-plus --build` (stitched probes, LoCoMo questions)
    python benchmarks/fusion.py --memory conv26-local --base conv-26 --sessions 3 --out /tmp/fusion-conv26.json

Besides the variants, three reference orders: flat dense over scene dialogues ("dialogue"),
the SceneCue order alone ("cue only") and the best Horizon view alone ("horizon only").
Used in docs/retrieval.md ("Fusion").
"""

from __future__ import annotations

import argparse
import json
import statistics
from dataclasses import replace
from pathlib import Path

from tmem_graph import api
from tmem_graph.config import RetrievalSettings
from tmem_graph.evaluate import data as ev
from tmem_graph.retrieve.fuse import rrf, strongest
from tmem_graph.retrieve.select import SceneCandidates, scene_cue, select_scenes

WIDE = RetrievalSettings(cue_top=10_000)  # the traced recall: SceneCue puts all it finds in the pool

# name -> (final fusion, SceneCue fusion, other changes); the candidates are the same for all
VARIANTS = {
    "rrf, SceneCue rrf (old default)": ("rrf", "rrf", {}),
    "rrf, no cue list (reference code without its reranker)": ("rrf", "rrf", {"cue_in_fusion": False}),
    "rrf": ("rrf", "strongest", {}),
    "rrf_tail": ("rrf_tail", "strongest", {}),
    "score": ("score", "strongest", {}),
    "lanes 0.2": ("lanes", "strongest", {"associative_share": 0.2}),
    "lanes 0.4 (default)": ("lanes", "strongest", {}),
    "lanes 0.6": ("lanes", "strongest", {"associative_share": 0.6}),
    "lanes 0.4, SceneCue rrf": ("lanes", "rrf", {}),
}
REFERENCES = ("flat dense over scene dialogues", "SceneCue rrf alone", "SceneCue strongest alone",
              "best Horizon view alone")


def settings_of(base: RetrievalSettings) -> dict[str, RetrievalSettings]:
    return {name: replace(base, fusion=fusion, cue_fusion=cue, **changes)
            for name, (fusion, cue, changes) in VARIANTS.items()}


def restrict(cands: SceneCandidates, cfg: RetrievalSettings) -> SceneCandidates:
    """The candidates a recall with `cfg` would have had: the traced pool holds every scene any
    SceneCue channel found (WIDE); keep the scenes reached otherwise and this SceneCue's top."""
    cue = scene_cue(cands.cue_lists, cfg, {})
    keep = {s for s, via in cands.via.items() if set(via) & {"topic", "bm25", "dense"}}
    keep |= {s for s, _ in cue[:cfg.cue_top]}
    return SceneCandidates(bm25=[(s, v) for s, v in cands.bm25 if s in keep],
                           dense=[(s, v) for s, v in cands.dense if s in keep],
                           cue=cue, cue_lists=cands.cue_lists, via=cands.via)


def orders(cands, variants: dict[str, RetrievalSettings]) -> dict[str, list[str]]:
    """Scene ids in fused order for every variant, then the reference orders."""
    out = {name: [s.id for s in select_scenes(restrict(cands, cfg), cfg)] for name, cfg in variants.items()}
    lists = cands.cue_lists
    out["flat dense over scene dialogues"] = [s for s, _ in lists.get("dialogue", [])]
    out["SceneCue rrf alone"] = [s for s, _ in rrf({n: [s for s, _ in r] for n, r in lists.items()}, 30)]
    out["SceneCue strongest alone"] = [s for s, _ in strongest(lists)]
    out["best Horizon view alone"] = [s for s, _ in lists.get("horizon", [])]
    return out


def first_rank(order: list[str], targets: set[str]) -> int | None:
    return next((n for n, sid in enumerate(order, 1) if sid in targets), None)


def share(ranks: list, k: int) -> float | None:
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks) if ranks else None


def load_probes(args) -> list[tuple[str, str | None, set[str] | None, set[str] | None]]:
    """(query, speaker, cue scene ids or None, cue turn ids or None) for every probe."""
    if args.probes:
        return [(p["query"], p.get("speaker"), {p["cue_scene"]}, None)
                for p in json.loads(Path(args.probes).read_text(encoding="utf-8"))
                if p.get("memory_id", args.memory) == args.memory]
    root = ev.data_dir()
    samples = ev.load(root / "locomo10.json")
    probes = ev.base_probes(ev.load(root / "locomo_plus_dev.json"), samples, args.base)[:args.plus_limit]
    return [(p.query, p.query_speaker, None, {t.id for t in p.cue}) for p in probes]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memory", required=True)
    ap.add_argument("--probes", help="probe file naming each cue scene (strong-trigger memories)")
    ap.add_argument("--base", help="base conversation of stitched probes (a memory built by --build)")
    ap.add_argument("--sample", help="LoCoMo questions of this conversation (default: --base)")
    ap.add_argument("--without", default="", help="comma list of cascade components to switch off")
    ap.add_argument("--plus-limit", type=int, default=None, help="first N probes of the base (those built)")
    ap.add_argument("--sessions", type=int, default=None, help="LoCoMo questions with evidence in 1..N")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()

    memory = api.Memory(args.memory)
    variants = settings_of(RetrievalSettings())
    without = [w for w in args.without.split(",") if w]
    names = [*variants, *REFERENCES]

    plus = {name: [] for name in names}
    turns_of = {s.id: set(s.turn_ids) for s in memory.document().scenes}
    for query, speaker, cue_scenes, cue_turns in load_probes(args):
        cands = memory.recall(query, speaker=speaker, without=without, settings=WIDE, trace=True).trace["scenes"]
        targets = cue_scenes or {sid for sid, turns in turns_of.items() if turns & cue_turns}
        for name, order in orders(cands, variants).items():
            plus[name].append(first_rank(order, targets))

    locomo = {name: {k: [] for k in (1, 3, 5)} for name in names}
    qas = []
    if args.sample or args.base:
        root = ev.data_dir()
        sample = next(s for s in ev.load(root / "locomo10.json") if s["sample_id"] == (args.sample or args.base))
        qas = [q for q in ev.locomo_qas(sample, ev.EvidenceRepairs()) if ev.within_sessions(q.evidence, args.sessions)]
    for qa in qas:
        cands = memory.recall(qa.question, without=without, settings=WIDE, trace=True).trace["scenes"]
        gold = set(qa.evidence)
        for name, order in orders(cands, variants).items():
            for k in (1, 3, 5):
                got = set().union(*(turns_of[sid] for sid in order[:k]))
                locomo[name][k].append(len(gold & got) / len(gold))

    rows = {name: {"plus_S@1": share(plus[name], 1), "plus_S@5": share(plus[name], 5),
                   "plus_S@10": share(plus[name], 10),
                   "plus_median_rank": statistics.median([r or 999 for r in plus[name]]) if plus[name] else None,
                   **{f"locomo_scene_R@{k}": statistics.mean(v) if v else None for k, v in locomo[name].items()}}
            for name in names}
    args.out.write_text(json.dumps({"memory": args.memory, "without": without, "probes": len(plus[names[0]]), "questions": len(qas),
                                    "variants": VARIANTS, "rows": rows, "plus_ranks": plus}, indent=2))
    fmt = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
    print(f"{len(plus[names[0]])} probes, {len(qas)} questions, memory {args.memory}")
    print("| final scene fusion | Plus S@1 | S@5 | S@10 | median cue rank | LoCoMo scene R@1 | R@3 | R@5 |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in rows.items():
        print(f"| {name} | {fmt(r['plus_S@1'])} | {fmt(r['plus_S@5'])} | {fmt(r['plus_S@10'])} | "
              f"{r['plus_median_rank']} | " + " | ".join(fmt(r[f'locomo_scene_R@{k}']) for k in (1, 3, 5)) + " |")


if __name__ == "__main__":
    main()
