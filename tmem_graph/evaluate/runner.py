"""Evaluation runs: LoCoMo evidence recall and LoCoMo-Plus cue recall for the cascade, its
ablations and the flat baselines, side by side on the same memory and encoder."""

from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass, field
from typing import Callable, Iterable

from ..api import Memory
from ..construct.checks import content_words
from ..retrieve.evidence import anticipated, format_evidence
from ..retrieve.results import Recall
from ..retrieve.presets import EVAL_SETS
from .data import CATEGORIES, QA, Probe
from .flat import FlatIndex, cut_at_budget

BASELINES = ("bm25", "dense", "hybrid")
TEMPORAL = next(c for c, label in CATEGORIES.items() if label == "temporal")
BUDGETS = ("evidence", "context")  # what the baselines' token budget counts (evaluate_locomo)


@dataclass
class Context:
    """What the metrics need from a memory: turn texts, scene → turns, speakers, token counter."""

    memory: Memory
    count: Callable[[str], int]
    turn_text: dict[str, str] = field(default_factory=dict)
    scene_turns: dict[str, list[str]] = field(default_factory=dict)
    speakers: list[str] = field(default_factory=list)
    flat: FlatIndex | None = None
    item_turns: dict[str, list[str]] = field(default_factory=dict)   # items that recorded their source turns
    items_by_scene: int = 0   # items without source turns: credited with their scenes' turns

    @classmethod
    def of(cls, memory: Memory, count: Callable[[str], int], with_flat: bool = True,
           built_only: bool = False) -> "Context":
        """`built_only`: the flat baselines index only the turns some scene holds (for a
        cascade run without its `recent` channel, on a memory exported between an add and
        its build)."""
        doc = memory.document()
        ctx = cls(memory, count, {t.id: f"{t.speaker}: {t.text}" for t in doc.turns},
                  {s.id: list(s.turn_ids) for s in doc.scenes}, list(doc.speakers),
                  item_turns={i.id: list(i.turn_ids) for i in doc.items if i.turn_ids},
                  items_by_scene=sum(1 for i in doc.items if not i.turn_ids))
        if with_flat:
            held = {t for s in doc.scenes for t in s.turn_ids}
            ids = [t for t in ctx.turn_text if not built_only or t in held]
            ctx.flat = FlatIndex(ids, [ctx.turn_text[i] for i in ids], memory.encoder)
        return ctx

    @property
    def evidence_settings(self):
        """The recall settings of the evidence handed over: what `ask` hands an answer model
        (packed to `answer_budget_tokens` unless a budget is set or the run is unpacked)."""
        return self.memory.settings.retrieval.for_answer()

    def evidence_turns(self, recall: Recall) -> set[str]:
        """Turn ids handed over: the recalled scenes' turns and the turns the recalled items were
        distilled from (exact crediting); an item that did not record them (built before they
        were, or imported without them) credits every turn of its scenes, as `items_by_scene` counts."""
        got = raw_turns(recall)
        for item in recall.items:
            if item.id in self.item_turns:
                got |= set(self.item_turns[item.id])
            else:
                for sid in item.scene_ids:
                    got |= set(self.scene_turns.get(sid, []))
        return got


def raw_turns(recall: Recall) -> set[str]:
    """The turn ids handed over in their own words: the recalled scenes' turns and the recent ones."""
    return {t["id"] for s in recall.scenes for t in s.turns} | {t.id for t in recall.recent}


def evaluate_locomo(ctx: Context, qas: list[QA], systems: Iterable[tuple[str, tuple]] = EVAL_SETS,
                    baselines: bool = True, progress=None, budget_of: str = "evidence") -> dict:
    """Evidence recall per category for every system; baselines at each query's full-cascade
    token budget.

    `tokens` counts the evidence (the context block without the persona: the recalled scenes
    and items, which the budgets kS and kI rank) or, with `budget_of="context"`, the whole
    block `ask` hands over, persona included; `persona_tokens` is the persona's share either way.
    """
    if budget_of not in BUDGETS:
        raise ValueError(f"budget_of must be one of {BUDGETS}, not {budget_of!r}")
    systems = list(systems)
    rows: list[dict] = []
    for n, qa in enumerate(qas):
        gold = set(qa.evidence)
        row = {"question": qa.question, "category": qa.category, "evidence": qa.evidence, "systems": {}}
        budget = None
        for name, without in systems:
            recall = ctx.memory.recall(qa.question, without=without, settings=ctx.evidence_settings)
            # the context block of `Memory.evidence`, with the speakers read once per run
            whole = ctx.count(format_evidence(recall, ctx.speakers))
            evidence = ctx.count(format_evidence(dataclasses.replace(recall, persona=[]), ctx.speakers))
            got = ctx.evidence_turns(recall)
            tokens = whole if budget_of == "context" else evidence
            row["systems"][name] = {"recall": len(gold & got) / len(gold), "tokens": tokens,
                                    "recall_raw_turns": len(gold & raw_turns(recall)) / len(gold),
                                    "persona_tokens": whole - evidence,
                                    "answer_coverage": answer_coverage(qa.answer, format_evidence(
                                        dataclasses.replace(recall, persona=[]), ctx.speakers))}
            if budget is None:
                budget = tokens
        if baselines and ctx.flat is not None:
            for name, ranking in ctx.flat.rankings(qa.question).items():
                chosen = cut_at_budget(ranking, lambda t: ctx.count(ctx.turn_text[t]), budget or 0)
                row["systems"][name] = {"recall": len(gold & set(chosen)) / len(gold),
                                        "recall_raw_turns": len(gold & set(chosen)) / len(gold),
                                        "tokens": sum(ctx.count(ctx.turn_text[t]) for t in chosen),
                                        "persona_tokens": 0, "answer_coverage": answer_coverage(
                                            qa.answer, "\n".join(ctx.turn_text[t] for t in chosen))}
        rows.append(row)
        if progress:
            progress(n + 1, len(qas))
    return {"questions": rows, "summary": summarise(rows)}


def answer_coverage(answer: str | None, evidence: str) -> float | None:
    """The share of the gold answer's content words found in the evidence text handed to the
    answer model (`construct.checks.content_words`: no function words, plurals folded); None
    for an answer without content words. Fair to scenes, items and turns alike: only the
    text handed over counts, whatever object carried it. Dates count as written: an answer
    "7 May 2023" meets "2023" but not "May" in an ISO time stamp."""
    words = content_words(answer)
    return len(words & content_words(evidence)) / len(words) if words else None


def summarise(rows: list[dict]) -> dict:
    """Mean recall per category and overall, median and p95 tokens, for every system."""
    out: dict[str, dict] = {}
    for name in rows[0]["systems"] if rows else []:
        per = {label: [r["systems"][name]["recall"] for r in rows if r["category"] == c]
               for c, label in CATEGORIES.items()}
        tokens = sorted(r["systems"][name]["tokens"] for r in rows)
        coverage = [r["systems"][name]["answer_coverage"] for r in rows
                    if r["systems"][name].get("answer_coverage") is not None]
        beside = [r["systems"][name]["answer_coverage"] for r in rows if r["category"] != TEMPORAL
                  and r["systems"][name].get("answer_coverage") is not None]
        out[name] = {**{k: _mean(v) for k, v in per.items()},
                     "overall": _mean([r["systems"][name]["recall"] for r in rows]),
                     # the evidence turns handed over in their own words, items not credited
                     "overall_raw_turns": _mean([r["systems"][name].get("recall_raw_turns", r["systems"][name]["recall"])
                                                 for r in rows]),
                     "answer_coverage": _mean(coverage),
                     # without the temporal questions: their gold answers name days in words, which
                     # the cascade's evidence writes and the flat baselines' turns do not carry
                     "answer_coverage_non_temporal": _mean(beside),
                     "tokens_median": statistics.median(tokens),
                     "tokens_p95": tokens[int(0.95 * (len(tokens) - 1))],
                     "persona_median": statistics.median(r["systems"][name].get("persona_tokens", 0) for r in rows)}
    return out


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def evaluate_locomo_plus(ctx: Context, probes: list[Probe], systems=EVAL_SETS, baselines=True) -> dict:
    """Cue recall: the rank of the first recalled scene holding a cue turn (success@1, @5),
    per relation type; baselines: the rank of the first cue turn among all turns. And at the
    same tokens (`handed`): whether a cue turn is in the evidence handed over (a scene's turns
    or an item's source turns, as `Context.evidence_turns` credits them), the baselines cut at
    the full cascade's evidence tokens for that probe (`tokens`), as `evaluate_locomo` cuts them;
    and where in that evidence the cue stands (`position`, `cue_position`); for the cascade's
    systems, whether a cue turn is among the candidates the focus answer style chooses what to
    keep in mind from (`candidates`, `retrieve.evidence.anticipated`); and where the cue's first
    turn stands (`statement`): the words the cue is about, where the reply to them alone
    ("That family scare clearly changed your habits.") names nothing a reader can use."""
    rows = []
    for p in probes:
        cue = {t.id for t in p.cue}
        texts = [t.text for t in p.cue]
        row = {"index": p.index, "relation": p.relation, "systems": {}, "handed": {}, "position": {},
               "statement": {}, "candidates": {}, "tokens": None}
        for name, without in systems:
            recall = ctx.memory.recall(p.query, speaker=p.query_speaker, without=without,
                                       settings=ctx.evidence_settings)
            ranks = [n for n, s in enumerate(recall.scenes, 1) if cue & {t["id"] for t in s.turns}]
            row["systems"][name] = ranks[0] if ranks else None
            row["handed"][name] = bool(cue & ctx.evidence_turns(recall))
            evidence = format_evidence(recall, ctx.speakers)
            row["position"][name] = cue_position(evidence, texts)
            row["statement"][name] = cue_position(evidence, texts[:1])
            row["candidates"][name] = any(cue & set(ids) for _, ids in anticipated(recall))
            if row["tokens"] is None:
                row["tokens"] = ctx.count(format_evidence(dataclasses.replace(recall, persona=[]), ctx.speakers))
        if baselines and ctx.flat is not None:
            for name, ranking in ctx.flat.rankings(p.query).items():
                ranks = [n for n, t in enumerate(ranking, 1) if t in cue]
                row["systems"][name] = ranks[0] if ranks else None
                chosen = cut_at_budget(ranking, lambda t: ctx.count(ctx.turn_text[t]), row["tokens"] or 0)
                row["handed"][name] = bool(cue & set(chosen))
                evidence = "\n".join(ctx.turn_text[t] for t in chosen)
                row["position"][name] = cue_position(evidence, texts)
                row["statement"][name] = cue_position(evidence, texts[:1])
        rows.append(row)
    return {"probes": rows, "summary": summarise_plus(rows)}


def cue_position(evidence: str, texts: list[str]) -> float | None:
    """Where the cue stands in an evidence block: the offset of the earliest of the cue turns'
    texts over the block's length (0: its first line); None when no cue turn is in it in its own
    words. A reader uses a cue at the head of its evidence far more often than one in the middle
    (docs/evaluation.md)."""
    found = [evidence.find(text) for text in texts if text]
    found = [at for at in found if at >= 0]
    return min(found) / len(evidence) if found else None


def summarise_plus(rows: list[dict]) -> dict:
    """S@1, S@5 and S@5 per relation type for every system, `cue handed`: the share of probes
    whose evidence, at the full cascade's tokens, holds a cue turn, and `cue first quarter`:
    the share whose evidence holds one in its first quarter (by characters), and `cue to keep in
    mind`: the share whose keep-in-mind candidates hold one (the cascade's systems only)."""
    summary = {}
    for name in rows[0]["systems"] if rows else []:
        ranks = [r["systems"][name] for r in rows]
        handed = [r["handed"][name] for r in rows if name in r.get("handed", {})]
        summary[name] = {"S@1": _share(ranks, 1), "S@5": _share(ranks, 5),
                         **{f"S@5 {rel}": _share([r["systems"][name] for r in rows if r["relation"] == rel], 5)
                            for rel in ("causal", "state", "goal", "value")},
                         "cue handed": sum(handed) / len(handed) if handed else None,
                         "cue first quarter": _quarter([r["position"].get(name) for r in rows
                                                        if name in r.get("position", {})]),
                         "cue statement handed": _true_share([r["statement"][name] is not None for r in rows
                                                              if name in r.get("statement", {})]),
                         "statement first quarter": _quarter([r["statement"].get(name) for r in rows
                                                              if name in r.get("statement", {})]),
                         "cue to keep in mind": _true_share([r["candidates"][name] for r in rows
                                                             if name in r.get("candidates", {})])}
    return summary


def _true_share(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def _quarter(positions: list) -> float | None:
    return _true_share([at is not None and at < 0.25 for at in positions])


def _share(ranks: list, k: int) -> float | None:
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks) if ranks else None
