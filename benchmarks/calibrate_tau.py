"""Calibrate TrigRecall's cosine gate τ for an encoder.

Data: benchmarks/data/tau_pairs.json, 30 hand-written (item, concept, bridge, query) cases in
which the query shares no content word with the item and matters because of the item's
Bridge situation. For each query, the positive score is the best cosine over its own item's
views (concept, bridge, joint = concept | bridge), the negatives are the best cosines over
every other item's views. τ is chosen as the smallest gate that lets through at most 5 % of
negative (query, other item) pairs, and the recall of positives at that gate is reported.

    python benchmarks/calibrate_tau.py [--encoder NAME] [--max-fpr 0.05]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from tmem_graph.encode import get_encoder

DATA = Path(__file__).parent / "data" / "tau_pairs.json"


def views(case: dict) -> list[str]:
    return [case["concept"], case["bridge"], f"{case['concept']} | {case['bridge']}"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--encoder", default="all-MiniLM-L6-v2")
    ap.add_argument("--max-fpr", type=float, default=0.05)
    args = ap.parse_args()
    cases = json.loads(DATA.read_text())
    enc = get_encoder(args.encoder)
    q = enc.encode([c["query"] for c in cases])
    v = [enc.encode(views(c)) for c in cases]
    dot = lambda a, b: sum(x * y for x, y in zip(a, b))  # noqa: E731
    best = [[max(dot(q[i], w) for w in v[j]) for j in range(len(cases))] for i in range(len(cases))]
    pos = [best[i][i] for i in range(len(cases))]
    neg = sorted(best[i][j] for i in range(len(cases)) for j in range(len(cases)) if i != j)
    tau = neg[int((1 - args.max_fpr) * len(neg))]
    rank1 = sum(1 for i in range(len(cases)) if max(range(len(cases)), key=lambda j: best[i][j]) == i)
    print(f"encoder {args.encoder}: {len(cases)} queries, {len(neg)} negative pairs")
    print(f"positives: median {statistics.median(pos):.3f}, min {min(pos):.3f}, max {max(pos):.3f}")
    print(f"negatives: median {statistics.median(neg):.3f}, p95 {tau:.3f}, max {neg[-1]:.3f}")
    print(f"own item ranked first among {len(cases)}: {rank1}/{len(cases)}")
    for gate in sorted({round(tau, 2), 0.3, 0.35, 0.4, 0.45, 0.5}):
        tp = sum(p >= gate for p in pos) / len(pos)
        fp = sum(n >= gate for n in neg) / len(neg)
        print(f"tau {gate:.2f}: positives kept {tp:.2f}, negatives let through {fp:.3f}")
    print(f"suggested tau (negatives let through <= {args.max_fpr:.0%}): {tau:.2f}")


if __name__ == "__main__":
    main()
