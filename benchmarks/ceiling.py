"""How far any split of the same tokens between the cascade and flat retrieval could go
(docs/evaluation.md, "What bounds the targets: the ceiling at the same tokens").

    python benchmarks/ceiling.py plus --memory conv26-full --base conv-26 --json eval-out/ceiling-plus.json
    python benchmarks/ceiling.py plus --memory conv-30-strong \\
        --probes ../shared/data/strong-triggers/conv-30-probes.json
    python benchmarks/ceiling.py locomo --memory conv26-full --sample conv-26 --json eval-out/ceiling-locomo.json

`plus`: for each budget (the unpacked default, then each `--budgets`), the share of probes whose
handed-over evidence holds a cue turn (`cue handed`, as `tmem eval locomo-plus` counts it):

- `cascade`: the packed recall as the product hands it over (its turn lane included);
- `cascade, no lane`: the same recall with `lane_share` 0, the cascade's scenes and items only;
- `dense`: flat dense retrieval over turns cut at the cascade's evidence tokens of that probe;
- `ceiling`: a probe counts if the cascade without its lane or dense, each given all of those
  tokens, hands over a cue turn. Any split of the same tokens between the cascade's choice and
  the turns dense ranks first hands over a subset of what the two hand over whole, so no lane
  rule can do better than this.

And once per memory, `reach`: the share of probes whose cue scene is among the scenes the
cascade's fusion ranks at all (`k_scenes` raised to `--reach-depth`), i.e. what a deeper
recall of the same rankings could find.

`locomo`: for each budget, the mean evidence recall (exact crediting) of the packed cascade,
of the cascade without its lane, of hybrid retrieval over turns at the cascade's tokens, and the
ceiling: a gold turn counts if the cascade without its lane or hybrid, each given all of those
tokens, hands it over.

Every system runs without the `recent` channel and the baselines index only the turns some
scene holds, as in the budget curve.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tmem_graph import api  # noqa: E402
from tmem_graph.config import Settings  # noqa: E402
from tmem_graph.evaluate import data as ev, runner  # noqa: E402
from tmem_graph.evaluate.flat import cut_at_budget  # noqa: E402
from tmem_graph.retrieve.evidence import format_evidence  # noqa: E402
from tmem_graph.store import Store  # noqa: E402

PLUS = ("cascade", "cascade, no lane", "dense", "ceiling")
LOCOMO = ("cascade", "cascade, no lane", "hybrid", "ceiling")


def load_probes(args, memory: api.Memory) -> list[ev.Probe]:
    if args.probes:
        return ev.probes_from_file(args.probes, args.memory, ev.scene_turns(memory.document()))
    return ev.base_probes(ev.load(ev.data_dir() / "locomo_plus_dev.json"),
                          ev.load(ev.data_dir() / "locomo10.json"), args.base)


def handed(ctx: runner.Context, query: str, speaker: str | None, gold: set[str], settings,
           baseline: str) -> dict[str, float]:
    """The share of `gold` that the packed cascade, the cascade without its lane, `baseline` at
    the cascade's evidence tokens, and the ceiling (the two latter whole, together) hand over."""
    def recall(cfg):
        return ctx.memory.recall(query, speaker=speaker, without=("recent",), settings=cfg)

    product = recall(settings)
    tokens = ctx.count(format_evidence(dataclasses.replace(product, persona=[]), ctx.speakers))
    alone = ctx.evidence_turns(recall(dataclasses.replace(settings, lane_share=0.0))
                               if settings.budget_tokens else product)
    ranking = ctx.flat.rankings(query)[baseline]
    flat = set(cut_at_budget(ranking, lambda t: ctx.count(ctx.turn_text[t]), tokens))
    return {"cascade": len(gold & ctx.evidence_turns(product)) / len(gold),
            "cascade, no lane": len(gold & alone) / len(gold), baseline: len(gold & flat) / len(gold),
            "ceiling": len(gold & (alone | flat)) / len(gold)}


def table(results: dict[str, dict], systems: tuple[str, ...]) -> str:
    flat = systems[2]
    lines = ["| evidence | " + " | ".join(systems) + f" | ceiling − {flat} |", "|---" * (len(systems) + 2) + "|"]
    lines += [f"| {key} | " + " | ".join(f"{row[n]:.3f}" for n in systems)
              + f" | {100 * (row['ceiling'] - row[flat]):+.1f} |" for key, row in results.items()]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    modes = ap.add_subparsers(dest="mode", required=True)
    plus = modes.add_parser("plus", help="LoCoMo-Plus: a cue turn handed over, against dense over turns")
    where = plus.add_mutually_exclusive_group()
    where.add_argument("--base", default="conv-26", help="the LoCoMo conversation whose dev probes are stitched in")
    where.add_argument("--probes", type=Path, help="a probe file naming each probe's cue scene (imported memories)")
    plus.add_argument("--limit", type=int, help="only the first N probes (those whose cues are built)")
    plus.add_argument("--reach-depth", type=int, default=60, help="k_scenes for `reach`")
    locomo = modes.add_parser("locomo", help="LoCoMo: evidence recall, against hybrid over turns")
    locomo.add_argument("--sample", default="conv-26")
    locomo.add_argument("--sessions", type=int)
    for mode in (plus, locomo):
        mode.add_argument("--memory", required=True)
        mode.add_argument("--budgets", type=int, nargs="+", default=[500, 1000, 2000, 4000])
        mode.add_argument("--json", type=Path)
    args = ap.parse_args()

    store = Store(Settings.from_env())
    memory = api.Memory(args.memory, store=store)
    ctx = runner.Context.of(memory, memory.encoder.count_tokens, built_only=True)
    base = memory.settings.retrieval
    if args.mode == "plus":
        probes = load_probes(args, memory)[:args.limit]
        cases = [(p.query, p.query_speaker, {t.id for t in p.cue}) for p in probes]
        systems, baseline = PLUS, "dense"
    else:
        sample = next(s for s in ev.load(ev.data_dir() / "locomo10.json") if s["sample_id"] == args.sample)
        qas = [q for q in ev.locomo_qas(sample, ev.EvidenceRepairs()) if ev.within_sessions(q.evidence, args.sessions)]
        cases = [(q.question, None, set(q.evidence)) for q in qas]
        systems, baseline = LOCOMO, "hybrid"
    report = {"memory": args.memory, "mode": args.mode, "cases": len(cases), "command": " ".join(sys.argv)}
    if args.mode == "plus":
        # a cue handed over counts once, whichever of its turns
        deep = dataclasses.replace(base, k_scenes=args.reach_depth)
        reached = sum(1 for query, speaker, cue in cases if cue & runner.raw_turns(
            memory.recall(query, speaker=speaker, without=("recent",), settings=deep)))
        report |= {"source": str(args.probes or args.base), "reach": round(reached / len(cases), 3),
                   "reach_depth": args.reach_depth}
    results: dict[str, dict] = {}
    for budget in [None] + args.budgets:
        settings = dataclasses.replace(base, budget_tokens=budget)
        rows = [handed(ctx, query, speaker, gold, settings, baseline) for query, speaker, gold in cases]
        if args.mode == "plus":
            rows = [{name: float(share > 0) for name, share in row.items()} for row in rows]
        key = "default" if budget is None else str(budget)
        results[key] = {name: round(sum(r[name] for r in rows) / len(rows), 3) for name in systems}
        print(key, json.dumps(results[key]), flush=True)
    report["results"] = results
    if "reach" in report:
        print(f"reach (k_scenes {args.reach_depth}): {report['reach']}")
    print(table(results, systems))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2))
    store.close()


if __name__ == "__main__":
    main()
