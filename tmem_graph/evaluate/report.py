"""Reports of an evaluation run: JSON, a Markdown table and a PNG plot per run."""

from __future__ import annotations

import json
from pathlib import Path

from .data import CATEGORIES


def markdown_locomo(summary: dict) -> str:
    cols = list(CATEGORIES.values()) + ["overall", "answer_coverage", "tokens_median", "tokens_p95",
                                        "persona_median"]
    lines = ["| system | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for name, row in summary.items():
        cells = [_fmt(row.get(c)) for c in cols]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def markdown_plus(summary: dict) -> str:
    cols = ["S@1", "S@5", "S@5 causal", "S@5 state", "S@5 goal", "S@5 value", "cue handed", "cue first quarter",
            "cue statement handed", "statement first quarter", "cue to keep in mind"]
    lines = ["| system | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for name, row in summary.items():
        lines.append(f"| {name} | " + " | ".join(_fmt(row.get(c)) for c in cols) + " |")
    return "\n".join(lines)


def markdown_per_sample(per_sample: dict[str, dict], metric: str, counts: dict[str, int]) -> str:
    """One line per sample: its number of questions (or probes) and `metric` for every system."""
    systems = list(next(iter(per_sample.values()), {}))
    lines = [f"{metric} per sample:", "", "| sample | n | " + " | ".join(systems) + " |",
             "|---" * (len(systems) + 2) + "|"]
    for name, summary in per_sample.items():
        lines.append(f"| {name} | {counts.get(name, 0)} | "
                     + " | ".join(_fmt(summary[s].get(metric)) for s in systems) + " |")
    return "\n".join(lines)


JUDGE_COLUMNS = {"accuracy": "judge accuracy", "f1": "token F1", "n": "n"}


def markdown_judge(summary: dict, group: str = "category") -> str:
    """The LLM-judge table: one row per category (or relation type) and overall."""
    cols = [c for c in JUDGE_COLUMNS if any(c in row for row in summary.values())]
    lines = [f"| {group} | " + " | ".join(JUDGE_COLUMNS[c] for c in cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for name, row in summary.items():
        lines.append(f"| {name} | " + " | ".join(_fmt(row.get(c)) for c in cols) + " |")
    return "\n".join(lines)


def _fmt(value) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if isinstance(value, float) and value <= 1 else f"{value:g}"


def plot_locomo(summary: dict, path: Path, title: str) -> None:
    """Grouped bars: evidence recall per category for every system."""
    _bars(summary, list(CATEGORIES.values()) + ["overall"], "evidence recall", path, title)


def plot_plus(summary: dict, path: Path, title: str) -> None:
    """Grouped bars: cue recall S@5 per relation type and overall (and S@1) for every system."""
    _bars({name: {**{c.split()[-1]: row.get(c) for c in row if c.startswith("S@5 ")},
                  "S@5": row.get("S@5"), "S@1": row.get("S@1")} for name, row in summary.items()},
          ["causal", "state", "goal", "value", "S@5", "S@1"], "cue recall (S@5 unless S@1)", path, title)


# tab10 and then black, grey-blue, olive: eleven systems (8 cascades, 3 baselines) in distinct colours
COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
          "#17becf", "#000000", "#5b6c8f", "#6b8e23"]


def _bars(summary: dict, cats: list[str], ylabel: str, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    systems = list(summary)
    width = 0.8 / max(1, len(systems))
    fig, ax = plt.subplots(figsize=(11, 4.5))
    for n, name in enumerate(systems):
        values = [summary[name].get(c) or 0 for c in cats]
        ax.bar([x + n * width for x in range(len(cats))], values, width, label=name, color=COLORS[n % len(COLORS)])
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(cats))], cats)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(out_dir: Path, name: str, result: dict, table: str, header: str) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{name}.json").write_text(json.dumps(result, indent=2, ensure_ascii=False))
    (out_dir / f"{name}.md").write_text(f"{header}\n\n{table}\n")
    return out_dir
