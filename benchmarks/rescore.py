"""Re-score every committed evaluation memory from a fresh clone, in one command, no LLM:

    python -m benchmarks rescore                      # every fixture in fixtures/
    python -m benchmarks rescore fixtures/conv26-full.json --out eval-out/rescore

For each fixture (fixtures/README.md) it imports the memory (texts re-attached from
../shared/data; `--replace` replaces a memory of the same id), then runs what
docs/evaluation.md reports on the sessions it has built: `tmem eval construction`, `tmem eval
locomo`, `recall-quality` at 500 … 4,000 evidence tokens and, with LoCoMo-Plus cues stitched
in, `tmem eval locomo-plus` on the probes whose cues are built. Reports go to `<out>/<memory>/`,
the headline figures to the output and `<out>/summary.md`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import HERE as ROOT
from tmem_graph.evaluate.fixtures import built_probes, built_sessions


def run(step: str, argv: list[str], log: list[dict]) -> None:
    started = time.perf_counter()
    print(f"\n== {step}: {' '.join(argv)}", flush=True)
    done = subprocess.run(argv, cwd=ROOT)
    log.append({"step": step, "seconds": round(time.perf_counter() - started, 1), "rc": done.returncode})
    if done.returncode:
        raise SystemExit(f"rescore: {step} failed (exit {done.returncode}); the command is above")


def rescore(path: Path, out: Path, log: list[dict], replace: bool, budgets: list[str]) -> dict:
    fixture = json.loads(path.read_text())
    memory, sources = fixture["memory_id"], fixture.get("texts_from", {})
    sample, plus = sources.get("locomo"), sources.get("locomo_plus_base")
    if not sample:
        raise SystemExit(f"rescore: {path}: no texts_from.locomo, not a LoCoMo fixture")
    sessions, probes = built_sessions(fixture), built_probes(fixture) if plus else 0
    where = out / memory
    kit, tmem = [sys.executable, "-m", "benchmarks"], [sys.executable, "-m", "tmem_graph.cli"]
    run(f"{memory}: schema", tmem + ["schema", "apply"], log)   # idempotent; a fresh server has none
    run(f"{memory}: import", kit + ["fixture", "import", str(path)] + (["--replace"] if replace else []), log)
    if sessions == 0:
        print(f"{memory}: no session fully built, nothing to score")
        return {"memory": memory, "sessions": 0}
    scope = ["--sessions", str(sessions)]
    run(f"{memory}: construction", tmem + ["eval", "construction", "--memory", memory, "--sample", sample,
                                           *scope, "--out", str(where)], log)
    run(f"{memory}: locomo", tmem + ["eval", "locomo", "--memory", memory, "--sample", sample, *scope,
                                     "--no-ablations", "--out", str(where)], log)
    run(f"{memory}: recall quality", kit + ["recall-quality", "--memory", memory, "--sample", sample, *scope,
                                              "--budgets", *budgets, "--plot", str(where / "budget.png"),
                                              "--json", str(where / "budget.json")], log)
    if plus and probes:
        run(f"{memory}: locomo-plus", tmem + ["eval", "locomo-plus", "--memory", memory, "--base", plus,
                                              *scope, "--limit", str(probes), "--no-ablations",
                                              "--out", str(where)], log)
    return {"memory": memory, "sessions": sessions, "probes": probes, "out": str(where)}


def headline(done: dict) -> list[str]:
    """The figures docs/evaluation.md's targets name, read back from one memory's reports."""
    where = Path(done["out"])
    c = json.loads((where / "construction.json").read_text())["memories"][done["memory"]]
    lines = [f"### {done['memory']} (sessions 1-{done['sessions']}, {done.get('probes', 0)} probes)", "",
             f"construction: observation coverage {c['observation_coverage']}, sessions without items "
             f"{c['sessions_without_items'] or 'none'}, topics {c['topics']} (largest share "
             f"{c['largest_topic_share']}), persona supported {c['persona_supported']}, trigger copies "
             f"{c['trigger_copies']['forward']}", "",
             "| budget | full: recall / coverage / coverage w/o temporal | best flat: the same | lead, points |",
             "|---|---|---|---|"]
    metrics = ("overall", "answer_coverage", "answer_coverage_non_temporal")
    for budget, row in json.loads((where / "budget.json").read_text())["results"].items():
        flat = {k: v for k, v in row.items() if k in ("bm25", "dense", "hybrid")}
        best = {m: max(flat, key=lambda k, m=m: flat[k].get(m) or 0) for m in metrics}
        full = row["full"]
        lines.append(f"| {budget} | " + " / ".join(f"{full.get(m) or 0:.3f}" for m in metrics) + " | "
                     + " / ".join(f"{flat[best[m]].get(m) or 0:.3f} ({best[m]})" for m in metrics) + " | "
                     + " / ".join(f"{100 * ((full.get(m) or 0) - (flat[best[m]].get(m) or 0)):+.1f}"
                                  for m in metrics) + " |")
    plus = where / "locomo_plus.json"
    if plus.is_file():
        summary = json.loads(plus.read_text())["summary"]
        lines += ["", "LoCoMo-Plus cue S@5: " + ", ".join(f"{k} {v['S@5']:.3f}" for k, v in summary.items()),
                  "LoCoMo-Plus cue handed at the same tokens: "
                  + ", ".join(f"{k} {v['cue handed']:.3f}" for k, v in summary.items() if v.get("cue handed") is not None)]
    return lines + [""]


def main(argv: list[str], prog: str) -> None:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    ap.add_argument("fixtures", nargs="*", type=Path, help="fixture files (default: every fixtures/*.json)")
    ap.add_argument("--out", type=Path, default=ROOT / "eval-out" / "rescore")
    ap.add_argument("--replace", action="store_true",
                    help="replace memories of the fixtures' ids already on the server (they are deleted first)")
    ap.add_argument("--budgets", nargs="+", default=["500", "1000", "2000", "4000"], help="evidence budgets")
    args = ap.parse_args(argv)
    args.out = args.out.resolve()   # the steps run from the repository's root
    paths = args.fixtures or sorted((ROOT / "fixtures").glob("*.json"))
    missing = [p for p in paths if not p.is_file()]
    if missing:
        raise SystemExit(f"rescore: no such fixture: {', '.join(map(str, missing))}")
    log: list[dict] = []
    started = time.perf_counter()
    done = [rescore(p.resolve(), args.out, log, args.replace, args.budgets) for p in paths]
    lines = [line for d in done if d["sessions"] for line in headline(d)]
    lines += [f"{len(log)} steps in {time.perf_counter() - started:.0f} s; reports in {args.out}"]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "summary.md").write_text("\n".join(lines) + "\n")
    (args.out / "steps.json").write_text(json.dumps(log, indent=1))
    print("\n" + "\n".join(lines))

