"""Evidence recall and answer coverage per evidence token budget (docs/evaluation.md): the
cascade packed to each budget, its main ablations, and the flat baselines over turns at each
question's packed tokens, on one LoCoMo memory; the unpacked default as one more column.

    python -m benchmarks fixture import fixtures/conv26-local.json
    python -m benchmarks recall-quality --memory conv26-local --sample conv-26 --sessions 3 \\
        --budgets 500 1000 2000 4000 --plot docs/img/budget-conv26-local.png --json eval-out/budget.json

Every system runs without the `recent` channel and the baselines index only the turns some
scene holds (a fixture's pending turns are not part of the sessions built). `--lane-share 0`:
the packer without its turn lane.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tmem_graph import api
from tmem_graph.config import RetrievalSettings, Settings
from tmem_graph.evaluate import data as ev, runner
from tmem_graph.retrieve.presets import EVAL_SETS
from tmem_graph.store import Store

MAIN = ("full", "w/o item_channel", "w/o scene_layer", "w/o all triggers", "w/o turns")
BASELINES = ("bm25", "dense", "hybrid")
FIGURES = ("overall", "overall_raw_turns", "answer_coverage", "answer_coverage_non_temporal", "tokens_median",
           "temporal")


def main(argv: list[str], prog: str) -> None:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    ap.add_argument("--memory", required=True)
    ap.add_argument("--sample", default="conv-26")
    ap.add_argument("--sessions", type=int, help="only the questions whose evidence lies in sessions 1-N")
    ap.add_argument("--questions", type=int, help="only the first N of those questions (a quick run)")
    ap.add_argument("--budgets", type=int, nargs="+", default=[500, 1000, 2000, 4000])
    ap.add_argument("--lane-share", type=float, default=RetrievalSettings().lane_share,
                    help="share of the budget the turn lane fills (RetrievalSettings.lane_share; 0: no lane)")
    ap.add_argument("--plot", "--out", dest="plot", type=Path, help="a plot of both figures per budget (PNG)")
    ap.add_argument("--json", type=Path, help="every figure, per budget and system")
    args = ap.parse_args(argv)

    sample = next(s for s in ev.load(ev.data_dir() / "locomo10.json") if s["sample_id"] == args.sample)
    qas = [q for q in ev.locomo_qas(sample, ev.EvidenceRepairs()) if ev.within_sessions(q.evidence, args.sessions)]
    qas = qas[:args.questions]
    systems = [(name, without + ("recent",)) for name, without in EVAL_SETS if name in MAIN]
    results: dict[str, dict] = {}
    for budget in [None] + args.budgets:
        store = Store(Settings.from_env().with_retrieval(budget_tokens=budget, lane_share=args.lane_share))
        memory = api.Memory(args.memory, store=store)
        ctx = runner.Context.of(memory, memory.encoder.count_tokens, built_only=True)
        summary = runner.evaluate_locomo(ctx, qas, systems)["summary"]
        store.close()
        results["default" if budget is None else str(budget)] = {
            name: {k: row[k] for k in FIGURES} for name, row in summary.items()}
    report = {"memory": args.memory, "sample": args.sample, "sessions": args.sessions, "questions": len(qas),
              "items_credited_by_scene": ctx.items_by_scene, "budgets": args.budgets, "results": results,
              "command": " ".join(sys.argv)}
    print(table(report))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2))
    if args.plot:
        plot(report, args.plot)


def table(report: dict) -> str:
    """Evidence recall / answer coverage / median tokens, a row per system, a column per budget."""
    budgets = list(report["results"])
    where = f"sessions 1-{report['sessions']} of " if report["sessions"] else ""
    lines = [f"{report['memory']}: LoCoMo {where}{report['sample']}, {report['questions']} questions; "
             "evidence recall / answer coverage / median tokens", "",
             "| system | " + " | ".join(budgets) + " |", "|---" * (len(budgets) + 1) + "|"]
    for name in MAIN + BASELINES:
        cells = [report["results"][b].get(name) for b in budgets]
        lines.append(f"| {name} | " + " | ".join(
            f"{c['overall']:.3f} / {c['answer_coverage'] or 0:.3f} / {c['tokens_median']:.0f}" if c else "-"
            for c in cells) + " |")
    return "\n".join(lines)


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
