"""Fusion variants explored and not adopted, compared offline on traced candidates.

`trace` recalls every probe and LoCoMo question of a memory once, as benchmarks/fusion.py does
(pool widened to all SceneCue found), and pickles the scene candidates; `compare` applies each
variant to the pickles. The variants are built from the product's own pure functions
(`fusion.restrict`, `fuse.rrf`, `fuse.lanes`):

    python -m benchmarks.fusion_explore trace --memory conv-30-strong --sample conv-30 \\
        --probes ../shared/data/strong-triggers/conv-30-probes.json --out /tmp/c30.pkl
    python -m benchmarks.fusion_explore trace --memory conv26-local --base conv-26 --sessions 3 --out /tmp/c26.pkl
    python -m benchmarks.fusion_explore compare /tmp/c30.pkl /tmp/c26.pkl

Columns: Plus S@1, S@5, LoCoMo scene R@1, R@3, R@5. Figures in docs/retrieval.md ("Explored and
not adopted").
"""

from __future__ import annotations

import argparse
import pickle
import statistics
from pathlib import Path

from benchmarks import fusion as F
from tmem_graph import api
from tmem_graph.config import RetrievalSettings
from tmem_graph.evaluate import data as ev
from tmem_graph.retrieve.fuse import lanes, rrf

BASE = RetrievalSettings()


def ordered(c, cfg: RetrievalSettings, share: float, first_to_cue: bool = False,
            dialogue_in_descriptive: bool = False, cue_in_descriptive: bool = False) -> list[str]:
    """Scene ids of one lanes-shaped variant on the candidates a recall with `cfg` would have."""
    c = F.restrict(c, cfg)
    pool = set(c.pool)
    cue = [s for s, _ in c.cue[:cfg.cue_top] if s in pool]
    lists = {"bm25": [s for s, _ in c.bm25], "dense": c.pool}
    if dialogue_in_descriptive:
        lists["dialogue"] = [s for s, _ in c.cue_lists.get("dialogue", []) if s in pool]
    if cue_in_descriptive:
        lists["cue"] = cue
    descriptive = [s for s, _ in rrf(lists, cfg.k0)]
    if first_to_cue and cue:
        rest = lanes([d for d in descriptive if d != cue[0]], cue[1:], cfg.k_scenes - 1, share)
        return [cue[0]] + [s for s, _ in rest]
    return [s for s, _ in lanes(descriptive, cue, cfg.k_scenes, share)]


def head_z(c) -> float:
    """SceneCue's (strongest) score of its first scene: how far it stands out in its channel."""
    return c.cue[0][1] if c.cue else 0.0


VARIANTS = {
    "lanes 0.4 (default)": lambda c: ordered(c, BASE, 0.4),
    "lanes 0.6": lambda c: ordered(c, BASE, 0.6),
    "share 0.6 when SceneCue's head z >= 2.5": lambda c: ordered(c, BASE, 0.6 if head_z(c) >= 2.5 else 0.4),
    "first place to SceneCue's head when z >= 2.5":
        lambda c: ordered(c, BASE, 0.4, first_to_cue=head_z(c) >= 2.5),
    "dialogue ranking in the descriptive lane": lambda c: ordered(c, BASE, 0.4, dialogue_in_descriptive=True),
    "SceneCue inside the descriptive RRF too": lambda c: ordered(c, BASE, 0.4, cue_in_descriptive=True),
}


def trace(args) -> None:
    memory = api.Memory(args.memory)
    turns_of = {s.id: set(s.turn_ids) for s in memory.document().scenes}
    plus = []
    for query, speaker, cue_scenes, cue_turns in F.load_probes(args):
        c = memory.recall(query, speaker=speaker, settings=F.WIDE, trace=True).trace["scenes"]
        plus.append((c, cue_scenes or {s for s, t in turns_of.items() if t & cue_turns}))
    sample = next(s for s in ev.load(ev.data_dir() / "locomo10.json") if s["sample_id"] == (args.sample or args.base))
    locomo = [(memory.recall(q.question, settings=F.WIDE, trace=True).trace["scenes"], set(q.evidence))
              for q in ev.locomo_qas(sample, ev.EvidenceRepairs()) if ev.within_sessions(q.evidence, args.sessions)]
    memory.close()
    args.out.write_bytes(pickle.dumps({"plus": plus, "locomo": locomo, "turns_of": turns_of}))
    print(f"traced {len(plus)} probes, {len(locomo)} questions into {args.out}")


def compare(args) -> None:
    for path in args.traces:
        data = pickle.loads(path.read_bytes())
        print(f"{path}: {len(data['plus'])} probes, {len(data['locomo'])} questions")
        for name, order in VARIANTS.items():
            ranks = [F.first_rank(order(c), targets) for c, targets in data["plus"]]
            recall = {k: [] for k in (1, 3, 5)}
            for c, gold in data["locomo"]:
                top = order(c)
                for k in recall:
                    got = set().union(*(data["turns_of"][s] for s in top[:k]))
                    recall[k].append(len(gold & got) / len(gold))
            figures = [F.share(ranks, 1), F.share(ranks, 5), *(statistics.mean(v) for v in recall.values())]
            print(f"  {name:46s} " + " ".join(f"{x:.3f}" for x in figures))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("trace")
    t.add_argument("--memory", required=True)
    t.add_argument("--probes")
    t.add_argument("--base")
    t.add_argument("--sample")
    t.add_argument("--plus-limit", type=int, default=None)
    t.add_argument("--sessions", type=int, default=None)
    t.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("compare")
    c.add_argument("traces", type=Path, nargs="+")
    args = ap.parse_args()
    trace(args) if args.cmd == "trace" else compare(args)


if __name__ == "__main__":
    main()
