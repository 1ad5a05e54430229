"""The recall study: every candidate list of a memory's queries traced once, then the final
fusion and the packer replayed offline under any constants, and the constants chosen
leave-one-memory-out (docs/retrieval.md, "Associative pointers and weak matches").

    # 1. trace (one cascade run per query, as deep as the widest budget needs; needs the server)
    python -m benchmarks.recall_study trace --memory conv-30-strong --sample conv-30 \\
        --probes ../shared/data/strong-triggers/conv-30-probes.json
    python -m benchmarks.recall_study trace --memory conv42-strong --sample conv-42 --base conv-42
    # 2. replay a grid of constants on every traced memory, choose them leave-one-memory-out
    python -m benchmarks.recall_study choose --out eval-out/study/choice.json
    #    (--grid: the constants to try; --fixed: settings every variant shares; --unpacked: judge
    #    the recall without a budget by the probes' S@5; docs/retrieval.md has the runs)
    # 3. the unpacked recall under each fusion rule beside every single list it fuses (S@5, R@k)
    python -m benchmarks.recall_study channels
    # 3b. a weak match's pointers against the same breadth in similarity order (the control)
    python -m benchmarks.recall_study pointers
    # 3c. LoCoMo evidence recall of the strong and the weak matches apart
    python -m benchmarks.recall_study matches
    # 3d. every chosen constant again, each varied alone around the shipped settings
    python -m benchmarks.recall_study audit
    # 4. the encoders compared: the same memories imported into a server of the other encoder
    TMEM_ENCODER=all-mpnet-base-v2 python -m benchmarks.recall_study trace ... --dir eval-out/study-mpnet
    python -m benchmarks.recall_study compare eval-out/study eval-out/study-mpnet

A trace holds, per query (the LoCoMo questions of `--sample` whose evidence the memory holds,
and the LoCoMo-Plus probes of `--base` or `--probes`): the scene and item candidates of the
cascade (`Recall.trace`: BM25, dense, SceneCue and its channels, the turn channel, the item
pool), the turn lane, and the cosine of every turn of the memory with the query. A replay runs
the product's own pure functions on it (`select_scenes`, `select_items`, `pack`, and
`Bm25.held` over the scenes' turns for how close a query is in words), so it differs
from `Memory.recall` only in its pool: the trace's pool is the widest any variant uses.
Figures at equal tokens: the flat baselines are cut at the packed evidence's tokens, as
`tmem eval` cuts them; a replay at the default constants gives `tmem eval`'s figures
(docs/retrieval.md). It is the one instrument of the recall explorations: the fusion rules,
the single lists, the packer's constants and the encoders are compared on the same traces.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import functools
import itertools
import json
import pickle
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tmem_graph import api  # noqa: E402
from tmem_graph.config import RetrievalSettings  # noqa: E402
from tmem_graph.evaluate import data as ev  # noqa: E402
from tmem_graph.evaluate.flat import cut_at_budget  # noqa: E402
from tmem_graph.evaluate.runner import Context  # noqa: E402
from tmem_graph.retrieve.cascade import Cascade  # noqa: E402
from tmem_graph.retrieve.evidence import format_evidence  # noqa: E402
from tmem_graph.retrieve.lexical import KINDS, Bm25, query_terms  # noqa: E402
from tmem_graph.retrieve.pack import pack  # noqa: E402
from tmem_graph.retrieve.results import Recall  # noqa: E402
from tmem_graph.retrieve.select import (ItemCandidates, scene_cue, select_cue, select_items, select_lane,  # noqa: E402
                                        select_scenes)

CACHE = Path("eval-out/study")
BUDGETS = (500, 1000, 2000, 4000)
# traced as deep as any variant reads: a weak match's turn lane too, though the default gives it no share
WIDEST = RetrievalSettings(budget_tokens=max(BUDGETS), cue_share=0.5, lane_share=0.4,
                           weak_cue_share=0.5, weak_lane_share=0.4)
TURN_COSINES = "MATCH (t:Turn {memory_id: $m}) WHERE t.embedding IS NOT NULL RETURN t.id AS id, t.embedding AS v"


def trace(args) -> None:
    import numpy as np

    memory = api.Memory(args.memory)
    doc = memory.document()
    ctx = Context.of(memory, memory.encoder.count_tokens, built_only=True)
    root = ev.data_dir()
    samples = ev.load(root / "locomo10.json")
    sample = next(s for s in samples if s["sample_id"] == args.sample)
    held = {t for s in doc.scenes for t in s.turn_ids}
    qas = [q for q in ev.locomo_qas(sample, ev.EvidenceRepairs()) if set(q.evidence) <= held]
    if args.probes:
        probes = ev.probes_from_file(args.probes, args.memory, ev.scene_turns(doc))
    elif args.base:
        probes = [p for p in ev.base_probes(ev.load(root / "locomo_plus_dev.json"), samples, args.base)
                  if {t.id for t in p.cue} <= held]
    else:
        probes = []
    with memory.store.session("READ") as session:
        rows = [r.data() for r in session.run(TURN_COSINES, m=memory.pid)]   # the id its objects carry
    ids = [r["id"] for r in rows]
    matrix = np.array([r["v"] for r in rows], dtype=np.float32)
    cascade = Cascade(memory.store, WIDEST.for_budget())
    queries = [("locomo", q.question, None, {"evidence": q.evidence, "category": q.category}) for q in qas]
    queries += [("plus", p.query, p.query_speaker, {"cue": sorted(t.id for t in p.cue), "relation": p.relation})
                for p in probes]
    out = []
    for n, (kind, text, speaker, gold) in enumerate(queries, 1):
        vector = memory.encoder.encode([text])[0]
        recall = cascade.recall(memory.pid, text, vector, speaker=speaker, without=("recent",), trace=True)
        cos = matrix @ np.array(vector, dtype=np.float32)
        out.append({"kind": kind, "query": text, "gold": gold, "trace": recall.trace, "lane": recall.lane,
                    "turn_scores": {i: float((c + 1) / 2) for i, c in zip(ids, cos)},  # Neo4j's [0, 1] scale
                    "flat": {k: v[:400] for k, v in ctx.flat.rankings(text, vector).items()}})
        print(f"\r{args.memory}: {n}/{len(queries)}", end="", file=sys.stderr)
    print(file=sys.stderr)
    turns = {t.id: t for t in doc.turns}
    scenes = {s.id: {"title": s.title, "time": s.time, "summary": s.summary,
                     "turns": [{"id": t, "speaker": turns[t].speaker, "text": turns[t].text, "time": turns[t].time}
                               for t in s.turn_ids]} for s in doc.scenes}
    args.dir.mkdir(parents=True, exist_ok=True)
    path = args.dir / f"{args.memory}.trace.pkl"
    with open(path, "wb") as f:
        pickle.dump({"memory": args.memory, "speakers": list(doc.speakers), "queries": out, "scenes": scenes,
                     "turn_text": ctx.turn_text, "item_turns": ctx.item_turns, "scene_turns": ctx.scene_turns}, f)
    print(f"{path}: {len(qas)} LoCoMo questions, {len(probes)} LoCoMo-Plus probes")


@dataclasses.dataclass
class Replay:
    """One traced memory, replayed."""

    data: dict
    count: callable
    ranked_first: bool = True   # packed, list the unpacked recall's scenes first (False: the joint order alone)

    @functools.cached_property
    def turn_index(self) -> Bm25:
        """The turns a scene holds, indexed as the memory's Lexicon indexes them (their text
        alone): how close a query is in words."""
        turns = {t["id"]: t["text"] for s in self.data["scenes"].values() for t in s["turns"]}
        return Bm25(((t, {"text": text}) for t, text in turns.items()), KINDS["turn"])

    def words(self, q: dict) -> float | None:
        """The share of the query's word weight its nearest turn in words holds, as the cascade measures it."""
        if "words" not in q:
            q["words"] = self.turn_index.held(query_terms(q["query"]))
        return q["words"]

    @staticmethod
    def match(q: dict) -> float | None:
        """The score of the turn nearest the query in meaning (the traced lane's first), as the cascade reads it."""
        nearest = q["trace"]["lane"]["dense"][:1] if "lane" in q["trace"] else []
        return nearest[0][1] if nearest else None

    def recall(self, q: dict, cfg: RetrievalSettings) -> Recall:
        match, words = self.match(q), self.words(q)
        unsplit, cfg = cfg, cfg.split_for(match, words)   # as the cascade splits a weak match
        deep = cfg.for_budget()
        scenes = q["trace"]["scenes"]
        if cfg.cue_fusion != WIDEST.cue_fusion:   # SceneCue fused again from its traced channels
            scenes = dataclasses.replace(scenes, cue=scene_cue(scenes.cue_lists, cfg, {}))
        chosen = select_scenes(scenes, deep)
        cue = select_cue(scenes, deep)
        for s in chosen + cue:
            stored = self.data["scenes"][s.id]
            s.title, s.summary = stored["title"], stored["summary"]
            s.time = stored["time"] or stored["turns"][0]["time"]   # as the store gives a scene its time
            s.turns = stored["turns"]
        items = select_items(self.item_pool(q["trace"].get("items"), {s.id for s in chosen}), deep)
        depth = cfg.lane_depth()   # the lane's lists as deep as this budget asks them (the trace's are deeper)
        traced = {t.id: t for t in q["lane"]}
        lists = [[(t.id, 0.0) for t in sorted(traced.values(), key=lambda t: t.ranks.get(c, depth + 1))
                  if t.ranks.get(c, depth + 1) <= depth] for c in ("bm25", "dense")]
        lane = [traced[t.id] for t in select_lane(*lists, cfg)]   # fused as the cascade fuses them
        recall = Recall(self.data["memory"], q["query"], scenes=chosen, items=items, cue=cue,
                        lane=lane if cfg.lane_share > 0 else [], turn_scores=q["turn_scores"])
        if cfg.budget_tokens is None:
            return recall
        whole = dataclasses.replace(unsplit, budget_tokens=None).split_for(match, words)
        if self.ranked_first:   # listed first, as the cascade does
            recall.ranked = [s.id for s in select_scenes(scenes, whole)]
        return pack(recall, cfg.budget_tokens, self.count, self.data["speakers"], cfg.lane_share, cfg.cue_share,
                    cfg.joint_k0)

    @staticmethod
    def item_pool(c, scenes: set[str]):
        """The traced item candidates as the cascade gathers them for these scenes: the items of
        the chosen scenes and those reached otherwise (TrigRecall, flat search)."""
        if c is None:
            return ItemCandidates([], [], [], {})
        keep = {i for i, row in c.rows.items() if c.via.get(i, ["scene"]) != ["scene"] or set(row["scene_ids"]) & scenes}
        via = {i: [v for v in c.via[i] if v != "scene" or set(c.rows[i]["scene_ids"]) & scenes] for i in keep}
        return ItemCandidates([x for x in c.bm25 if x[0] in keep], [x for x in c.dense if x[0] in keep],
                              [x for x in c.trigger if x[0] in keep], via, {i: c.rows[i] for i in keep})

    def handed(self, recall: Recall) -> set[str]:
        got = {t["id"] for s in recall.scenes for t in s.turns}
        for item in recall.items:
            got |= set(self.data["item_turns"].get(item.id) or
                       [t for sid in item.scene_ids for t in self.data["scene_turns"].get(sid, [])])
        return got

    def score(self, cfg: RetrievalSettings) -> dict:
        """Per kind: the cascade's figure and dense's (Plus: cue handed; LoCoMo: evidence recall
        against the best flat baseline) at the same tokens, and S@5 / scene R@5."""
        out = {"plus": [], "dense": [], "s1": [], "s5": [], "locomo": [], "flat": [], "r5": []}
        cost = lambda t: self.count(self.data["turn_text"][t])  # noqa: E731
        for q in self.data["queries"]:
            recall = self.recall(q, cfg)
            tokens = self.count(format_evidence(dataclasses.replace(recall, persona=[]), self.data["speakers"]))
            got = self.handed(recall)
            if q["kind"] == "plus":
                cue = set(q["gold"]["cue"])
                out["plus"].append(bool(cue & got))
                out["dense"].append(bool(cue & set(cut_at_budget(q["flat"]["dense"], cost, tokens))))
                out["s1"].append(any(cue & {t["id"] for t in s.turns} for s in recall.scenes[:1]))
                out["s5"].append(any(cue & {t["id"] for t in s.turns} for s in recall.scenes[:5]))
            else:
                gold = set(q["gold"]["evidence"])
                out["locomo"].append(len(gold & got) / len(gold))
                for b in ("bm25", "dense", "hybrid"):
                    out.setdefault(f"flat_{b}", []).append(len(gold & set(cut_at_budget(q["flat"][b], cost, tokens)))
                                                          / len(gold))
        means = {k: statistics.mean(v) if v else None for k, v in out.items()}
        if out["locomo"]:  # the best flat baseline: the best mean, as tmem eval reports them
            means["flat"] = max(means.pop(f"flat_{b}") for b in ("bm25", "dense", "hybrid"))
        return means


def load(paths: list[Path]) -> dict[str, Replay]:
    from tmem_graph.encode import get_encoder

    count = functools.lru_cache(maxsize=None)(get_encoder().count_tokens)
    out = {}
    for path in paths:
        with open(path, "rb") as f:
            data = pickle.load(f)
        out[data["memory"]] = Replay(data, count)
    return out


GRID = {"cue_share": (0.0, 0.1, 0.2, 0.3, 0.4), "lane_share": (0.3, 0.4, 0.5, 0.6), "lane_dense_weight": (1.0, 3.0),
        "cue_from": ("scenecue", "horizon")}
ORDER = {"joint_k0": (1, 5, 30, 60)}   # only the order of the packed scenes: chosen by S@5 alone


def variants(grid: dict = GRID) -> list[dict]:
    out: dict[str, dict] = {}
    for values in itertools.product(*grid.values()):
        v = dict(zip(grid, values))
        if any(sum(x for k, x in v.items() if k in (f"{weak}cue_share", f"{weak}lane_share")) >= 0.95
               for weak in ("", "weak_")):   # the packer's shares leave room for the scenes
            continue
        out.setdefault(json.dumps(effective(v), sort_keys=True), v)
    return list(out.values())


def effective(v: dict) -> dict:
    """A variant without the constants it does not use (one variant of each)."""
    v = dict(v)
    if not v.get("weak_match", 0):
        v = {k: x for k, x in v.items() if not k.startswith("weak_") or k == "weak_match"}
    if not v.get("cue_share", 0) and not (v.get("weak_match", 0)
                                           and v.get("weak_cue_share", RetrievalSettings().weak_cue_share)):
        v.pop("cue_from", None)
    return v


def objective(figures: dict) -> float:
    """What a memory's constants are judged by: the mean lead over dense at equal tokens of the
    cue handed (LoCoMo-Plus) plus that of evidence recall over the best flat baseline (LoCoMo),
    over the budgets; a memory without one of the kinds counts the other. Unpacked (`--unpacked`):
    scene S@5 of the LoCoMo-Plus probes."""
    if list(figures) == [None]:
        return figures[None]["s5"]
    leads = []
    for per in figures.values():
        if per["plus"] is not None:
            leads.append(per["plus"] - per["dense"])
        if per["locomo"] is not None:
            leads.append(per["locomo"] - per["flat"])
    return statistics.mean(leads)


def choose(args) -> None:
    memories = load(sorted(args.dir.glob("*.trace.pkl")) if not args.traces else args.traces)
    table: dict[str, dict[str, dict]] = {}
    grid = variants(args.grid)
    budgets = [None] if args.unpacked else BUDGETS
    for n, v in enumerate(grid, 1):
        key = json.dumps(v, sort_keys=True)
        table[key] = {m: {b: r.score(RetrievalSettings(budget_tokens=b, **{**args.fixed, **v})) for b in budgets}
                      for m, r in memories.items()}
        print(f"\r{n}/{len(grid)}", end="", file=sys.stderr)
    print(file=sys.stderr)
    report = {"grid": args.grid, "fixed": args.fixed, "unpacked": args.unpacked, "memories": list(memories),
              "leave_one_out": {}}
    for held in memories:
        best = max(table, key=lambda k: statistics.mean(objective(table[k][m]) for m in memories if m != held))
        report["leave_one_out"][held] = {"constants": json.loads(best), "figures": table[best][held]}
    every = max(table, key=lambda k: statistics.mean(objective(table[k][m]) for m in memories))
    report["all"] = {"constants": json.loads(every), "figures": {m: table[every][m] for m in memories}}
    report["table"] = table
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, default=str))
    print(render(report))


# Every constant the study chose, each varied alone around the shipped settings (docs/retrieval.md,
# "Every constant, chosen again"): the packer's and the weak match's by the objective, packed at
# the four budgets; the order a weak match's unpacked scenes are listed in by their S@5.
AUDIT = {"lane_share": (0.3, 0.4, 0.5), "lane_k0": (3, 5, 10, 20), "associative_share": (0.2, 0.4, 0.6),
         "associative_order": ("scenecue", "strongest(horizon,dense)", "horizon"), "opening_tokens": (15, 25, 40),
         "weak_match": (0.72, 0.74, 0.76, 0.78), "weak_words": (0.3, 0.38, 0.45),
         "weak_associative_share": (0.6, 0.8, 1.0), "weak_cue_share": (0.8, 0.85, 0.9),
         "weak_lane_share": (0.0, 0.05), "cue_from": ("strongest(horizon,dense)", "horizon", "scenecue")}
AUDIT_UNPACKED = {"weak_listed_share": (0.8, 1.0),
                  "weak_associative_order": ("strongest(horizon,dense)", "horizon+scenecue+dense", "horizon")}


def audit(args) -> None:
    """Each constant of AUDIT (and AUDIT_UNPACKED, by unpacked S@5) varied alone, the others as
    shipped: per value the objective of every memory, and leave-one-memory-out which value each
    fold chooses (a tie goes to the shipped value) and the held-out memory's figure with it."""
    memories = load(sorted(args.dir.glob("*.trace.pkl")))
    shipped = RetrievalSettings()
    seen: dict[str, dict[str, float]] = {}

    def figures(changes: dict, unpacked: bool) -> dict[str, float]:
        key = json.dumps([unpacked, dataclasses.asdict(dataclasses.replace(shipped, **changes))], sort_keys=True)
        if key not in seen:
            budgets = [None] if unpacked else BUDGETS
            seen[key] = {m: 100 * objective({b: r.score(dataclasses.replace(shipped, budget_tokens=b, **changes))
                                             for b in budgets}) for m, r in memories.items()}
        return seen[key]

    report = {}
    for grid, unpacked in ((AUDIT, False), (AUDIT_UNPACKED, True)):
        for name, values in grid.items():
            table = {v: figures({name: v}, unpacked) for v in values}
            ours = getattr(shipped, name)
            folds = {}
            for held in memories:
                rest = {v: statistics.mean(f[m] for m in memories if m != held) for v, f in table.items()}
                best = max(rest.values())
                pick = ours if rest.get(ours) == best else max(rest, key=rest.get)
                folds[held] = {"value": pick, "held_out": table[pick][held], "shipped": table[ours][held]}
            report[name] = {"shipped": ours, "unpacked": unpacked, "table": {str(v): f for v, f in table.items()},
                            "folds": folds}
            print(f"{name}: " + ", ".join(f"{m} {f['value']}" for m, f in folds.items()),
                  file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, default=str))
    names = list(memories)
    print("| constant (shipped) | value: mean objective over the six | folds choosing each value | "
          "held-out figure, fold's choice − shipped |")
    print("|---|---|---|---|")
    for name, r in report.items():
        means = " / ".join(f"{v} {statistics.mean(f.values()):.2f}" for v, f in r["table"].items())
        counts = collections.Counter(str(f["value"]) for f in r["folds"].values())
        moved = " / ".join(f"{r['folds'][m]['held_out'] - r['folds'][m]['shipped']:+.2f}" for m in names)
        kind = " (S@5, unpacked)" if r["unpacked"] else ""
        print(f"| `{name}` ({r['shipped']}){kind} | {means} | "
              f"{', '.join(f'{v}: {n}' for v, n in counts.items())} | {moved} |")
    print(f"\nheld-out figures in the order {', '.join(names)}; objective in points (S@5 × 100 unpacked)")


def render(report: dict) -> str:
    if report.get("unpacked"):
        lines = ["| held-out memory | constants chosen without it | S@5 (unpacked) |", "|---|---|---|"]
        lines += [f"| {m} | {', '.join(f'{k} {x}' for k, x in effective(r['constants']).items())} | "
                  f"{r['figures'][None]['s5']:.3f} |" for m, r in report["leave_one_out"].items()]
        return "\n".join(lines + [f"\nchosen on every memory: {report['all']['constants']}"])
    lines = ["| held-out memory | constants chosen without it | cue handed − dense at 500 / 1,000 / 2,000 / 4,000 | "
             "recall − best flat | S@5 (2,000) |", "|---|---|---|---|---|"]
    for m, r in report["leave_one_out"].items():
        f = r["figures"]
        c = r["constants"]
        lead = lambda a, b: " / ".join("–" if f[x][a] is None else f"{100 * (f[x][a] - f[x][b]):+.1f}"  # noqa: E731
                                       for x in f)
        lines.append(f"| {m} | {', '.join(f'{k} {x}' for k, x in effective(c).items())} | "
                     f"{lead('plus', 'dense')} | {lead('locomo', 'flat')} | "
                     f"{'–' if f[2000]['s5'] is None else format(f[2000]['s5'], '.3f')} |")
    c = report["all"]["constants"]
    lines.append(f"\nchosen on every memory: {c}")
    return "\n".join(lines)


def compare(args) -> None:
    """Two trace folders (one per encoder) side by side at the product's default constants: per
    memory traced in both and per budget, the cue handed and dense's, evidence recall and the
    best flat baseline's, S@5 at the unpacked default, and the objective constants are chosen by
    (`objective`, in points): with a setting that only a trace can change (the two folders traced
    under its two values), the choice leave-one-memory-out is read off that column."""
    sides = [load(sorted(d.glob("*.trace.pkl"))) for d in args.dirs]
    settings = args.settings or [{}, {}]
    print("| memory | traces | cue handed (dense) at 500 / 1,000 / 2,000 / 4,000 | "
          "LoCoMo recall (best flat) at the same budgets | S@5 | objective |")
    print("|---|---|---|---|---|---|")
    for memory in sorted(set(sides[0]) & set(sides[1])):
        for d, side, changes in zip(args.dirs, sides, settings):
            replay = side[memory]
            figures = [replay.score(RetrievalSettings(budget_tokens=b, **changes)) for b in BUDGETS]
            cell = lambda a, b: " / ".join("–" if f[a] is None else f"{f[a]:.3f} ({f[b]:.3f})"  # noqa: E731
                                           for f in figures)
            s5 = replay.score(RetrievalSettings(**changes))["s5"]
            print(f"| {memory} | {d} | {cell('plus', 'dense')} | {cell('locomo', 'flat')} | "
                  f"{'–' if s5 is None else format(s5, '.3f')} | "
                  f"{100 * objective(dict(zip(BUDGETS, figures))):.2f} |")


# The fusions compared beside the single lists (`channels`): the default and the other rules of
# `RetrievalSettings.fusion` (a weak match's associative order applies to each), and the fusion
# before lanes and weak matches (docs/retrieval.md, "Fusion").
FUSIONS = {"lanes (default)": {}, "rrf": {"fusion": "rrf"}, "rrf_tail": {"fusion": "rrf_tail"},
           "score": {"fusion": "score"},
           "before lanes (rrf, SceneCue rrf)": {"fusion": "rrf", "cue_fusion": "rrf", "weak_match": 0.0},
           "no cue list (reference code without its reranker)": {"fusion": "rrf", "cue_fusion": "rrf",
                                                                  "cue_in_fusion": False, "weak_match": 0.0}}


REFERENCE_CUE = RetrievalSettings(cue_fusion="rrf")


def single_lists(replay: Replay, q: dict) -> dict[str, list[str]]:
    """Every ranking a traced query holds, as scenes best first: the final fusion's own lists over
    the pool (bm25, dense: the scene vector), SceneCue's order and its channels over every scene
    they found, and flat dense over turns read as scenes (a scene at the place of its first turn;
    the turn channel's order over the pool is the same, as the pool holds every scene it ranks)."""
    c = q["trace"]["scenes"]
    out = {"bm25": c.bm25, "dense (scene vector)": c.dense, "SceneCue": c.cue,
           **{f"SceneCue: {n}": r for n, r in c.cue_lists.items()}}
    out = {n: [s for s, _ in r] for n, r in out.items() if r}
    out["SceneCue, channels by RRF (the reference)"] = [s for s, _ in scene_cue(c.cue_lists, REFERENCE_CUE, {})]
    home = {t: s for s, turns in replay.data["scene_turns"].items() for t in turns}
    out["flat dense over turns"] = list(dict.fromkeys(home[t] for t in q["flat"]["dense"] if t in home))
    return out


def scene_figures(replay: Replay, order) -> dict:
    """S@1 and S@5 of the LoCoMo-Plus probes (the cue scene's place) and scene R@1 / R@3 / R@5 of
    the LoCoMo questions (the share of their evidence turns inside the first k scenes, items not
    counted) for `order(q)`, a query's scenes best first."""
    turns = replay.data["scene_turns"]
    out: dict[str, list] = {"s1": [], "s5": [], "r1": [], "r3": [], "r5": []}
    for q in replay.data["queries"]:
        ranked = order(q)
        if q["kind"] == "plus":
            cue = set(q["gold"]["cue"])
            hit = [bool(cue & set(turns.get(s, ()))) for s in ranked[:5]]
            out["s1"].append(any(hit[:1]))
            out["s5"].append(any(hit))
        else:
            gold = set(q["gold"]["evidence"])
            for k in (1, 3, 5):
                got = {t for s in ranked[:k] for t in turns.get(s, ())}
                out[f"r{k}"].append(len(gold & got) / len(gold))
    return {k: statistics.mean(v) if v else None for k, v in out.items()}


def channels(args) -> None:
    """Per traced memory: the unpacked recall under each fusion rule beside every single list it
    fuses, by S@1 / S@5 (LoCoMo-Plus probes) and scene R@1 / R@3 / R@5 (LoCoMo questions)."""
    cell = lambda x: "–" if x is None else f"{x:.3f}"  # noqa: E731
    for memory, replay in load(sorted(args.dir.glob("*.trace.pkl"))).items():
        rows = {f"fusion: {name}": scene_figures(replay, lambda q, c=RetrievalSettings(**changes):
                                                 [s.id for s in replay.recall(q, c).scenes])
                for name, changes in FUSIONS.items()}
        lists = {id(q): single_lists(replay, q) for q in replay.data["queries"]}   # once per query
        names = sorted({n for per in lists.values() for n in per})
        rows |= {n: scene_figures(replay, lambda q, n=n: lists[id(q)].get(n, [])) for n in names}
        print(f"\n{memory} ({args.dir}): "
              f"{sum(q['kind'] == 'plus' for q in replay.data['queries'])} probes, "
              f"{sum(q['kind'] == 'locomo' for q in replay.data['queries'])} LoCoMo questions\n")
        print("| order | S@1 | S@5 | scene R@1 | R@3 | R@5 |\n|---|---|---|---|---|---|")
        for name, f in rows.items():
            print(f"| {name} | " + " | ".join(cell(f[k]) for k in ("s1", "s5", "r1", "r3", "r5")) + " |")


def by_similarity(replay: Replay) -> Replay:
    """The same traces with the Horizon family's scene order replaced by a similarity order (each
    scene by its turn nearest the query): pointers as broad as the product's, but not the triggers'."""
    queries = []
    for q in replay.data["queries"]:
        best = {sid: max(q["turn_scores"].get(t, -1.0) for t in turns)
                for sid, turns in replay.data["scene_turns"].items() if turns}
        scenes = q["trace"]["scenes"]
        order = sorted(best.items(), key=lambda pair: (-pair[1], pair[0]))
        scenes = dataclasses.replace(scenes, cue_lists={**scenes.cue_lists, "horizon": order})
        queries.append({**q, "trace": {**q["trace"], "scenes": scenes}})
    return Replay({**replay.data, "queries": queries}, replay.count)


def pointers(args) -> None:
    """The control of the weak match's pointers: cue handed at each budget with the product's
    pointers (`cue_from`'s list), with the Horizon family's order alone, with pointers drawn in
    similarity order (the similarity order in the Horizon family's place, drawn from it alone),
    and by dense over turns at the product's tokens (docs/retrieval.md, "Pointers, not turns")."""
    print(f"| memory | pointers from `{RetrievalSettings().cue_from}` | from `horizon` | "
          "one best turn per scene, by similarity | dense over turns |")
    print("|---|---|---|---|---|")
    for memory, replay in load(sorted(args.dir.glob("*.trace.pkl"))).items():
        product = [replay.score(RetrievalSettings(budget_tokens=b)) for b in BUDGETS]
        horizon = [replay.score(RetrievalSettings(budget_tokens=b, cue_from="horizon")) for b in BUDGETS]
        similar = by_similarity(replay)
        control = [similar.score(RetrievalSettings(budget_tokens=b, cue_from="horizon")) for b in BUDGETS]
        cells = [" / ".join(f"{f[k]:.3f}" for f in figures)
                 for figures, k in ((product, "plus"), (horizon, "plus"), (control, "plus"), (product, "dense"))]
        print(f"| {memory} | " + " | ".join(cells) + " |")


def listing(args) -> None:
    """The order packed scenes are listed in: S@5 of the packed evidence (its first five scenes)
    at each budget, listed in the joint order of the fusion and the pointers alone, and with the
    scenes the recall without a budget hands over first (the product); the unpacked recall's
    S@5 beside them (docs/retrieval.md, "The order the pointers are listed in"); and S@1 of the
    unpacked recall with a weak match's descriptive lane first and with its associative lane
    first (the product: `weak_associative_first`)."""
    print("| memory | joint order alone, 500 / 1,000 / 2,000 / 4,000 | the unpacked recall's scenes first | unpacked "
          "| unpacked S@1, descriptive first / associative first |")
    print("|---|---|---|---|---|")
    for memory, replay in load(sorted(args.dir.glob("*.trace.pkl"))).items():
        cells = []
        for first in (False, True):
            side = dataclasses.replace(replay, ranked_first=first)
            cells.append(" / ".join(f"{side.score(RetrievalSettings(budget_tokens=b))['s5']:.3f}" for b in BUDGETS))
        lead = [replay.score(RetrievalSettings(weak_associative_first=first)) for first in (False, True)]
        print(f"| {memory} | " + " | ".join(cells) + f" | {lead[1]['s5']:.3f} | "
              + " / ".join(f"{f['s1']:.3f}" for f in lead) + " |")


def matches(args) -> None:
    """LoCoMo evidence recall split by the match (weak in meaning and in words:
    `RetrievalSettings.weak`): per memory and budget, the cascade and the best flat baseline on
    each part (docs/evaluation.md, "Where the targets stand")."""
    cfg = RetrievalSettings()
    print("| memory | match | questions | recall (best flat) at 500 / 1,000 / 2,000 / 4,000 |")
    print("|---|---|---|---|")
    for memory, replay in load(sorted(args.dir.glob("*.trace.pkl"))).items():
        every = replay.data["queries"]
        locomo = [q for q in every if q["kind"] != "plus"]
        for kind in ("strong", "weak"):
            part = [q for q in locomo if (kind == "weak") == cfg.weak(replay.match(q), replay.words(q))]
            replay.data["queries"] = part
            try:
                figures = [replay.score(RetrievalSettings(budget_tokens=b)) for b in BUDGETS] if part else []
            finally:
                replay.data["queries"] = every
            print(f"| {memory} | {kind} | {len(part)} | "
                  + " / ".join(f"{f['locomo']:.3f} ({f['flat']:.3f})" for f in figures) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    t = sub.add_parser("trace")
    t.add_argument("--memory", required=True)
    t.add_argument("--sample", required=True, help="the LoCoMo conversation whose questions to trace")
    t.add_argument("--base", help="trace the LoCoMo-Plus dev probes stitched into this base")
    t.add_argument("--probes", type=Path, help="or the probes of an imported memory (shared/data/strong-triggers)")
    c = sub.add_parser("choose")
    c.add_argument("--traces", type=Path, nargs="*")
    c.add_argument("--out", type=Path, default=CACHE / "choice.json")
    c.add_argument("--grid", type=json.loads, default=GRID,
                   help='the constants to try, as JSON: {"cue_share": [...], "lane_share": [...], '
                        '"lane_dense_weight": [...]} (default: GRID)')
    c.add_argument("--fixed", type=json.loads, default={},
                   help="settings every variant shares, as JSON (e.g. the constants a first choice picked)")
    c.add_argument("--unpacked", action="store_true",
                   help="judge the recall without a budget by the LoCoMo-Plus probes' scene S@5")
    h = sub.add_parser("channels", help="the fusion rules beside every single list, unpacked")
    o = sub.add_parser("pointers", help="a weak match's pointers against the same breadth in similarity order")
    w = sub.add_parser("matches", help="LoCoMo evidence recall split into strong and weak matches")
    g = sub.add_parser("listing", help="packed S@5 with the joint order alone and with the unpacked recall's first")
    a = sub.add_parser("audit", help="every chosen constant varied alone around the shipped settings, "
                                     "leave-one-memory-out")
    a.add_argument("--out", type=Path, default=CACHE / "audit.json")
    for p in (t, c, h, o, w, g, a):
        p.add_argument("--dir", type=Path, default=CACHE, help="where traces are written and read "
                       "(one folder per encoder: a memory's trace is named after the memory)")
    k = sub.add_parser("compare")
    k.add_argument("dirs", type=Path, nargs=2, help="two trace folders, e.g. one per encoder")
    k.add_argument("--settings", type=json.loads, nargs=2, help="the settings each side runs with, as two JSON "
                   "objects (default: the defaults on both; e.g. '{}' '{\"weak_match\": 0.74}' for MPNet's threshold)")
    args = ap.parse_args()
    {"trace": trace, "choose": choose, "compare": compare, "channels": channels,
     "pointers": pointers, "matches": matches, "listing": listing, "audit": audit}[args.command](args)


if __name__ == "__main__":
    main()
