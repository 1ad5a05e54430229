"""The LLM-judge protocol: LoCoMo answers with the matched prompt, graded CORRECT/WRONG over
several runs, plus token F1; LoCoMo-Plus replies to the trigger query under the binary
memory-awareness judge (prompts and their sources in `llm/prompts/judge.py`)."""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import Callable, Iterable

from ..api import Memory
from ..llm.client import LLMClient
from ..llm.prompts.judge import Verdict, locomo_judge_messages, plus_answer_messages, plus_judge_messages
from .data import CATEGORIES, QA, Probe

RELATIONS = ("causal", "state", "goal", "value")
PUNCTUATION = frozenset(string.punctuation)
Progress = Callable[[int, int], None] | None


def normalize(text: str | int) -> list[str]:
    """SQuAD-style answer tokens: lower case, punctuation and the articles a/an/the removed."""
    text = str(text).lower()
    text = "".join(ch for ch in text if ch not in PUNCTUATION)
    return re.sub(r"\b(a|an|the)\b", " ", text).split()


def token_f1(prediction: str | int, gold: str | int) -> float:
    """Token F1 of `prediction` against `gold` on the multiset of normalized tokens."""
    pred, ref = normalize(prediction), normalize(gold)
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def judge_locomo(memory: Memory, qas: list[QA], llm: LLMClient, runs: int = 3, without: Iterable[str] = (),
                 progress: Progress = None) -> dict:
    """Answer every question with `memory.ask` (stage "answer"), grade it `runs` times (stage
    "judge"); a question scores the share of CORRECT runs. Summary per category and overall."""
    rows = []
    for n, qa in enumerate(qas):
        answer = memory.ask(qa.question, without=without, llm=llm, style="locomo")["answer"]
        gold = qa.answer or ""
        verdicts = [llm.structured(locomo_judge_messages(qa.question, gold, answer, run), Verdict, stage="judge",
                                   what=f"run {run} for {qa.question[:60]!r}") for run in range(1, runs + 1)]
        labels = [v.label for v in verdicts]
        rows.append({"question": qa.question, "category": qa.category, "gold": gold, "answer": answer,
                     "labels": labels, "reasoning": [v.reasoning for v in verdicts],
                     "score": labels.count("CORRECT") / runs, "f1": token_f1(answer, gold)})
        if progress:
            progress(n + 1, len(qas))
    return {"questions": rows, "summary": summarise_locomo(rows, runs)}


def summarise_locomo(rows: list[dict], runs: int) -> dict:
    """Judge accuracy (mean score), mean token F1 and n per category and overall; overall also
    the accuracy of each run."""
    def stats(chosen: list[dict]) -> dict:
        return {"accuracy": _mean([r["score"] for r in chosen]), "f1": _mean([r["f1"] for r in chosen]),
                "n": len(chosen)}

    summary = {label: stats([r for r in rows if r["category"] == c]) for c, label in CATEGORIES.items()}
    summary["overall"] = {**stats(rows), "per_run": [_mean([float(r["labels"][k] == "CORRECT") for r in rows])
                                                     for k in range(runs)]}
    return summary


def judge_locomo_plus(memory: Memory, probes: list[Probe], llm: LLMClient, without: Iterable[str] = (),
                      progress: Progress = None) -> dict:
    """Reply to every trigger query from the recalled evidence (stage "answer") as the other
    speaker, then one binary memory-awareness verdict (stage "judge"). Summary per relation type."""
    speakers = list(memory.store.memory(memory.id)["speakers"] or [])
    rows = []
    for n, p in enumerate(probes):
        recall = memory.recall(p.query, speaker=p.query_speaker, without=without,
                               settings=memory.settings.retrieval.for_answer())   # what `ask` reads
        me = next((s for s in speakers if s != p.query_speaker), "the other speaker")
        messages = plus_answer_messages(memory.evidence(recall), me, p.query_speaker, p.query, p.query_time)
        reply = llm.chat(messages, stage="answer", what=f"for probe {p.index}").strip()
        verdict = llm.structured(plus_judge_messages(p.cue, p.query_speaker, p.query, reply), Verdict,
                                 stage="judge", what=f"for probe {p.index}")
        recalled = {t["id"] for s in recall.scenes for t in s.turns}
        rows.append({"index": p.index, "relation": p.relation, "query": p.query, "reply": reply,
                     "label": verdict.label, "reasoning": verdict.reasoning,
                     "cue_in_evidence": any(t.id in recalled for t in p.cue)})
        if progress:
            progress(n + 1, len(probes))
    return {"probes": rows, "summary": summarise_plus(rows)}


def summarise_plus(rows: list[dict]) -> dict:
    """Judge accuracy (share of CORRECT) and n per relation type and overall."""
    def stats(chosen: list[dict]) -> dict:
        return {"accuracy": _mean([float(r["label"] == "CORRECT") for r in chosen]), "n": len(chosen)}

    return {**{rel: stats([r for r in rows if r["relation"] == rel]) for rel in RELATIONS}, "overall": stats(rows)}
