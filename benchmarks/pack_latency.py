"""What one evidence budget costs a recall: `Memory.recall` unpacked (kS, kI) and packed to each
budget (`budget_tokens`, retrieve/pack.py), interleaved question by question on one memory so
that every configuration sees the same machine load (docs/benchmarks.md).

    python -m benchmarks.fixture import fixtures/conv26-local.json
    python -m benchmarks.pack_latency --memory conv26-local --sample conv-26 --queries 60 --out /tmp/pack.json

The query's encoding is included (as a user sees it); each configuration runs every question
once unmeasured first. `--scene-tokens 300 250` runs every budget once per value of
`config.SCENE_TOKENS` (how deep the cascade goes for a budget), old and new side by side;
`--lane-shares 0 0.4` once per value of `RetrievalSettings.lane_share` (0: no turn lane).
`--lane-tokens 1000000000 25` once per value of `config.LANE_TOKENS` (a huge value: the turn lane
at its old depth, `candidates`), `--weak-matches 0 0.76` once per value of
`RetrievalSettings.weak_match` (0: no split), `--weak-shares 0.3:0.5 0.9:0` once per pair of a weak
match's `weak_cue_share`:`weak_lane_share`, `--weak-orders scenecue horizon+scenecue+dense` runs
the unpacked recall once per value of `RetrievalSettings.weak_associative_order`; `--plus-base conv-42` adds the LoCoMo-Plus dev
probes of that base to the questions (their queries are the weak matches).

    python -m benchmarks.pack_latency --memory conv42-strong --sample conv-42 --plus-base conv-42 \
        --queries 40 --budgets 2000 --lane-tokens 1000000000 25 --weak-matches 0 0.76 --out /tmp/weak.json
    python -m benchmarks.pack_latency --memory conv42-strong --sample conv-42 --plus-base conv-42 \
        --queries 40 --budgets --weak-orders horizon+scenecue horizon+scenecue+dense --out /tmp/order.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from benchmarks._common import load_average, locomo_queries, machine
from tmem_graph import api, config
from tmem_graph.config import RetrievalSettings


def _shares(text: str) -> tuple[float, float]:
    cue, lane = text.split(":")
    return float(cue), float(lane)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memory", required=True)
    ap.add_argument("--sample", default="conv-26")
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--budgets", type=int, nargs="*", default=[500, 2000, 4000])
    ap.add_argument("--scene-tokens", type=int, nargs="+", default=[config.SCENE_TOKENS],
                    help="values of config.SCENE_TOKENS to run each budget with")
    ap.add_argument("--lane-shares", type=float, nargs="+", default=[RetrievalSettings().lane_share],
                    help="values of RetrievalSettings.lane_share to run each budget with (0: no turn lane)")
    ap.add_argument("--lane-tokens", type=int, nargs="+", default=[config.LANE_TOKENS],
                    help="values of config.LANE_TOKENS to run each budget with (how deep the turn lane asks)")
    ap.add_argument("--weak-matches", type=float, nargs="+", default=[RetrievalSettings().weak_match],
                    help="values of RetrievalSettings.weak_match to run each budget with (0: no split)")
    ap.add_argument("--weak-shares", nargs="+", type=_shares,
                    default=[(RetrievalSettings().weak_cue_share, RetrievalSettings().weak_lane_share)],
                    help="pairs CUE:LANE of RetrievalSettings.weak_cue_share and weak_lane_share to run each "
                    "budget with")
    ap.add_argument("--weak-orders", nargs="+", default=[RetrievalSettings().weak_associative_order],
                    choices=config.ASSOCIATIVE_ORDERS, help="values of RetrievalSettings.weak_associative_order "
                    "to run the unpacked recall with")
    ap.add_argument("--plus-base", help="add the LoCoMo-Plus dev probes of this base conversation")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    questions = locomo_queries(args.sample, args.queries, args.plus_base)
    memory = api.Memory(args.memory)
    depths, shares = len(args.scene_tokens) > 1, len(args.lane_shares) > 1
    lanes, weak = len(args.lane_tokens) > 1, len(args.weak_matches) > 1
    pairs = len(args.weak_shares) > 1
    orders = len(args.weak_orders) > 1
    configs = {"unpacked" + (f", weak order {o}" if orders else ""):
               (RetrievalSettings(weak_associative_order=o), config.SCENE_TOKENS, config.LANE_TOKENS)
               for o in args.weak_orders} | {
        f"budget {b}" + (f", a scene per {st} tokens" if depths else "") + (f", lane share {ls:g}" if shares else "")
        + (f", a lane turn per {lt} tokens" if lanes else "") + (f", weak match {wm:g}" if weak else "")
        + (f", weak shares {ws[0]:g}:{ws[1]:g}" if pairs else ""):
            (RetrievalSettings(budget_tokens=b, lane_share=ls, weak_match=wm, weak_cue_share=ws[0],
                               weak_lane_share=ws[1]), st, lt)
        for b in args.budgets for st in args.scene_tokens for ls in args.lane_shares
        for lt in args.lane_tokens for wm in args.weak_matches for ws in args.weak_shares}
    times: dict[str, list[float]] = {name: [] for name in configs}

    def recall(q: str, name: str) -> None:
        # read by RetrievalSettings.for_budget and lane_depth at each recall
        cfg, config.SCENE_TOKENS, config.LANE_TOKENS = configs[name]
        memory.recall(q, settings=cfg)

    for q in questions[:10]:                           # warm the server's caches and the encoder
        for name in configs:
            recall(q, name)
    for n, q in enumerate(questions):
        names = list(configs) if n % 2 == 0 else list(reversed(configs))
        for name in names:
            started = time.perf_counter()
            recall(q, name)
            times[name].append(1000 * (time.perf_counter() - started))
    table = {name: {"p50_ms": round(statistics.median(t), 1),
                    "p95_ms": round(statistics.quantiles(t, n=20)[18], 1)} for name, t in times.items()}
    base = next(iter(table.values()))["p50_ms"]
    for row in table.values():
        row["ratio_p50"] = round(row["p50_ms"] / base, 2)
    args.out.write_text(json.dumps({"machine": machine(), "load_average": load_average(),
                                    "memory": args.memory, "queries": len(questions), "results": table,
                                    "times_ms": times}, indent=1))
    print("| recall | p50 ms | p95 ms | p50 / the first |\n|---|---|---|---|")
    for name, row in table.items():
        print(f"| {name} | {row['p50_ms']} | {row['p95_ms']} | {row['ratio_p50']} |")


if __name__ == "__main__":
    main()
