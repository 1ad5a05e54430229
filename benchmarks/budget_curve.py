"""Evidence recall and answer coverage against the evidence token budget (docs/evaluation.md):
the cascade packed to each budget (`--budget-tokens`), its main ablations, and the three flat
baselines over turns at each question's packed token count, on one LoCoMo memory.

    python -m benchmarks.fixture import fixtures/conv26-local.json
    python benchmarks/budget_curve.py --memory conv26-local --sample conv-26 --sessions 3 \\
        --budgets 500 1000 2000 4000 --out docs/img/budget-conv26-local.png --json eval-out/budget.json

Also the unpacked default (kS = 5 whole scenes, kI = 15 items) as one more point, for reference.
Every system runs without the `recent` channel and the baselines index only the turns some
scene holds: a fixture exported between a session's add and its build holds that session's
turns pending, which are not part of the sessions built (a finished build has none).
`--scene-tokens` / `--item-tokens` set how deep the cascade goes for a budget
(`config.SCENE_TOKENS`, `config.ITEM_TOKENS`), to measure another depth on the same memory;
`--lane-share 0` measures the packer without its turn lane.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tmem_graph import api, config  # noqa: E402
from tmem_graph.config import Settings  # noqa: E402
from tmem_graph.evaluate import data as ev, runner  # noqa: E402
from tmem_graph.retrieve.presets import EVAL_SETS  # noqa: E402
from tmem_graph.store import Store  # noqa: E402

MAIN = ("full", "w/o item_channel", "w/o scene_layer", "w/o all triggers", "w/o turns")
BASELINES = ("bm25", "dense", "hybrid")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--memory", required=True)
    ap.add_argument("--sample", default="conv-26")
    ap.add_argument("--sessions", type=int)
    ap.add_argument("--budgets", type=int, nargs="+", default=[500, 1000, 2000, 4000])
    ap.add_argument("--out", type=Path, required=True, help="the plot (PNG)")
    ap.add_argument("--json", type=Path, help="every figure, per budget and system")
    ap.add_argument("--scene-tokens", type=int, default=config.SCENE_TOKENS,
                    help="one scene per this many budget tokens (config.SCENE_TOKENS)")
    ap.add_argument("--item-tokens", type=int, default=config.ITEM_TOKENS,
                    help="one item per this many budget tokens (config.ITEM_TOKENS)")
    ap.add_argument("--lane-share", type=float, default=config.RetrievalSettings().lane_share,
                    help="share of the budget the turn lane fills (RetrievalSettings.lane_share; 0: no lane)")
    args = ap.parse_args()
    config.SCENE_TOKENS, config.ITEM_TOKENS = args.scene_tokens, args.item_tokens  # read by for_budget

    sample = next(s for s in ev.load(ev.data_dir() / "locomo10.json") if s["sample_id"] == args.sample)
    qas = [q for q in ev.locomo_qas(sample, ev.EvidenceRepairs()) if ev.within_sessions(q.evidence, args.sessions)]
    systems = [(name, without + ("recent",)) for name, without in EVAL_SETS
               if name in MAIN]
    results: dict[str, dict] = {}
    for budget in [None] + args.budgets:
        store = Store(Settings.from_env().with_retrieval(budget_tokens=budget, lane_share=args.lane_share))
        memory = api.Memory(args.memory, store=store)
        ctx = runner.Context.of(memory, memory.encoder.count_tokens, built_only=True)
        summary = runner.evaluate_locomo(ctx, qas, systems)["summary"]
        store.close()
        key = "default" if budget is None else str(budget)
        results[key] = {name: {k: row[k] for k in ("overall", "overall_raw_turns", "answer_coverage",
                                                   "answer_coverage_non_temporal",
                                                   "tokens_median", "temporal")}
                        for name, row in summary.items()}
        print(key, json.dumps({n: [round(r["overall"], 3), round(r["answer_coverage"] or 0, 3), r["tokens_median"]]
                               for n, r in results[key].items()}), flush=True)
    report = {"memory": args.memory, "sample": args.sample, "sessions": args.sessions, "questions": len(qas),
              "items_credited_by_scene": ctx.items_by_scene, "budgets": args.budgets, "results": results,
              "command": " ".join(sys.argv)}
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2))
    plot(report, args.out)


def plot(report: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    budgets = report["budgets"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, metric, label in ((axes[0], "overall", "evidence recall"), (axes[1], "answer_coverage", "answer coverage")):
        for name in MAIN + BASELINES:
            xs = [report["results"][str(b)][name]["tokens_median"] for b in budgets]
            ys = [report["results"][str(b)][name][metric] or 0 for b in budgets]
            ax.plot(xs, ys, marker="o", linestyle="--" if name in BASELINES else "-", label=name)
        ax.set_xscale("log")
        ax.set_xlabel("evidence tokens (median per question)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=7)
    where = f"sessions 1-{report['sessions']} of " if report["sessions"] else ""
    fig.suptitle(f"{report['memory']}: LoCoMo {where}{report['sample']}, {report['questions']} questions, "
                 f"budgets {', '.join(map(str, budgets))}", fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
