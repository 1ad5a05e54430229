"""The answer set: questions with gold answers over a few memories, answered by the configured
LLM from two kinds of evidence of the same tokens (the cascade's, and dense retrieval over
turns), and scored without an LLM: token F1 against the gold answer and the share of the gold
answer's content words the answer holds (`coverage`).

A set is a `tmem-answers/1` JSON file (fixtures/answers.json):

    {"format": "tmem-answers/1",
     "memories": {"team-dinner": "../examples/team-dinner.json", ...},   # id -> file, relative to the set
     "questions": [{"id": "td-restaurant", "memory": "team-dinner", "speaker": "Alice",
                    "kind": "associative", "question": "...", "answer": "..."},
                   {"id": "c26l-3", "memory": "conv26-local", "locomo": "conv-26", "qa": 3}]}

A LoCoMo question names its sample and its index in the sample's `qa` list; its text, gold
answer and kind (its category) come from the data folder, so the dataset stays out of the set.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from ..errors import ValidationError
from ..answering import answer as answer_from, unsupported
from ..llm.prompts.answer import COMPACT, NOT_IN_MEMORY
from ..model import Turn
from ..retrieve.evidence import asks_when, compact_line, opening, turn_line
from ..textio import parse_json, read_text
from .data import CATEGORIES, data_dir, load
from .flat import cut_at_budget
from .judge import token_f1
from .report import _fmt
from .runner import Context, _mean, answer_coverage

FORMAT = "tmem-answers/1"
KINDS = ("associative", "factual", "temporal", "none")
MODES = ("cascade", "dense")


@dataclass(frozen=True)
class AnswerQuestion:
    id: str
    memory: str
    question: str
    answer: str
    kind: str
    speaker: str | None = None


def load_set(path: Path, root: Path | None = None) -> tuple[dict[str, Path], list[AnswerQuestion]]:
    """The memories (id -> file) and the questions of a set; every problem at once, each
    naming the question (`ValidationError`)."""
    doc = parse_json(read_text(path), path)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValidationError([f"{path}: not a {FORMAT} document (its 'format' must be {FORMAT!r})"])
    memories = doc.get("memories")
    if not isinstance(memories, dict) or not all(isinstance(v, str) for v in memories.values()):
        raise ValidationError([f"{path}: 'memories' must map memory ids to file names"])
    raw = doc.get("questions")
    if not isinstance(raw, list) or not raw:
        raise ValidationError([f"{path}: 'questions' must be a non-empty list"])
    errors: list[str] = []
    samples: dict[str, dict] | None = None
    out, seen = [], set()
    for n, q in enumerate(raw):
        where = f"{path}: questions[{n}]" + (f" ({q.get('id')})" if isinstance(q, dict) and q.get("id") else "")
        if not isinstance(q, dict) or not isinstance(q.get("id"), str):
            errors.append(f"{where}: each question is an object with a string 'id'")
            continue
        if q["id"] in seen:
            errors.append(f"{where}: duplicate id")
        seen.add(q["id"])
        if q.get("memory") not in memories:
            errors.append(f"{where}: memory {q.get('memory')!r} is not in 'memories'")
            continue
        if "locomo" in q:
            if samples is None:
                samples = {s.get("sample_id"): s for s in load((root or data_dir()) / "locomo10.json")}
            sample, index = samples.get(q["locomo"]), q.get("qa")
            qa = sample.get("qa", []) if sample else []
            if not isinstance(index, int) or not 0 <= index < len(qa) or qa[index].get("category") not in CATEGORIES:
                errors.append(f"{where}: no LoCoMo question {q['locomo']!r} qa[{index}] of categories 1-4")
                continue
            kind = "temporal" if CATEGORIES[qa[index]["category"]] == "temporal" else "factual"
            out.append(AnswerQuestion(q["id"], q["memory"], qa[index]["question"], str(qa[index]["answer"]), kind,
                                      q.get("speaker")))
            continue
        missing = [k for k in ("question", "answer", "kind") if not isinstance(q.get(k), str) or not q[k].strip()]
        if missing:
            errors.append(f"{where}: missing {', '.join(missing)}")
        elif q["kind"] not in KINDS:
            errors.append(f"{where}: kind {q['kind']!r} is not one of {', '.join(KINDS)}")
        else:
            out.append(AnswerQuestion(q["id"], q["memory"], q["question"], q["answer"], q["kind"], q.get("speaker")))
    if errors:
        raise ValidationError(errors)
    return {m: (path.parent / f).resolve() for m, f in memories.items()}, out


def coverage(answer: str, gold: str) -> float | None:
    """The share of the gold answer's content words the answer holds (None without any): the
    rule of `runner.answer_coverage`, with the answer where it reads the evidence."""
    return answer_coverage(gold, answer)


@dataclass
class AnswerContext:
    """A memory's evaluation context with its turns, for dense evidence."""

    ctx: Context
    turns: dict[str, Turn]

    @classmethod
    def of(cls, ctx: Context) -> "AnswerContext":
        return cls(ctx, {t.id: t for t in ctx.memory.document().turns})

    def line(self, turn_id: str, compact: bool, dated: bool) -> str:
        """A turn as the cascade's evidence of the same layout writes one: "  Ana [2 April 2024]: …"
        (`format_evidence`), or "Ana: …" with its day only when `dated` (`compact_evidence`)."""
        t = self.turns[turn_id]
        if compact:
            return compact_line(t.speaker, t.text, t.time, dated)
        return turn_line({"speaker": t.speaker, "text": t.text, "time": t.time})

    def dense_evidence(self, question: str, tokens: int, compact: bool = False) -> tuple[str, list[str]]:
        """Dense retrieval over the memory's turns cut at `tokens` (opening and heading
        included), listed in conversation order: what a plain vector search hands over for the
        price of the cascade's evidence, in the same layout (`compact`: days only when the
        question asks when)."""
        dated = asks_when(question)
        head = [opening(self.ctx.speakers), DENSE_HEADING]
        spend = max(0, tokens - self.ctx.count("\n".join(head)))
        chosen = set(cut_at_budget(self.ctx.flat.dense(question),
                                   lambda t: self.ctx.count(self.line(t, compact, dated)), spend))
        ordered = [t for t in self.turns if t in chosen]
        return "\n".join(head + [self.line(t, compact, dated) for t in ordered]), ordered


DENSE_HEADING = "## Turns that match"


def import_set_memory(path: Path, memory_id: str, store, root: Path | None = None) -> None:
    """Import a set's memory from its file: a `tmem-memory/1` document, or a fixture whose turn
    texts come back from the data folder (`fixtures.attach`). The file must hold `memory_id`."""
    from ..api import import_memory
    from .fixtures import attach

    doc = parse_json(read_text(path), path)
    if isinstance(doc, dict) and "texts_from" in doc:
        doc = attach(doc, root)
    if not isinstance(doc, dict) or doc.get("memory_id") != memory_id:
        raise ValidationError([f"{path}: holds memory {doc.get('memory_id') if isinstance(doc, dict) else None!r}, "
                               f"the set names it {memory_id!r}"])
    memory, _ = import_memory(doc, store=store)
    memory.close()


def evaluate_answers(questions: list[AnswerQuestion], contexts: dict[str, AnswerContext], llm,
                     modes: Iterable[str] = MODES, style: str = "focus",
                     progress: Callable[[int, int], None] | None = None) -> dict:
    """Answer every question from each mode's evidence with `llm` (stage "answer") and score it."""
    modes = list(modes)
    rows = []
    for n, q in enumerate(questions):
        actx = contexts[q.memory]
        ctx = actx.ctx
        recall = ctx.memory.recall(q.question, speaker=q.speaker, settings=ctx.evidence_settings)
        cascade = ctx.memory.answer_context(recall, style)
        tokens = ctx.count(cascade)
        row = {"id": q.id, "memory": q.memory, "kind": q.kind, "question": q.question, "gold": q.answer,
               "tokens": tokens, "modes": {}}
        for mode in modes:
            context = cascade if mode == "cascade" else actx.dense_evidence(q.question, tokens, style in COMPACT)[0]
            answer, kept = answer_from(llm, context, q.question, style, recall if mode == "cascade" else None,
                                       what=f"{mode} for {q.id}")
            row["modes"][mode] = {"answer": answer, "kept_in_mind": kept, "f1": token_f1(answer, q.answer),
                                  "coverage": coverage(answer, q.answer), "tokens": ctx.count(context),
                                  "unsupported": unsupported(answer, f"{context}\n{q.question}\n{kept}")}
        rows.append(row)
        if progress:
            progress(n + 1, len(questions))
    return {"questions": rows, "summary": summarise_answers(rows, modes)}


def summarise_answers(rows: list[dict], modes: list[str]) -> dict:
    """Mean F1 and coverage per mode, overall and per kind; `not_in_memory`: how often the
    answer was "Not in memory" on a question whose memory holds the answer (and on the others)."""
    def stats(chosen: list[dict], mode: str) -> dict:
        cov = [r["modes"][mode]["coverage"] for r in chosen if r["modes"][mode]["coverage"] is not None]
        return {"f1": _mean([r["modes"][mode]["f1"] for r in chosen]), "coverage": _mean(cov), "n": len(chosen)}

    out = {}
    for mode in modes:
        refused = [r for r in rows if says_not_in_memory(r["modes"][mode]["answer"])]
        out[mode] = {"overall": stats(rows, mode),
                     **{kind: stats([r for r in rows if r["kind"] == kind], mode) for kind in KINDS},
                     "not_in_memory_wrongly": sum(1 for r in refused if r["kind"] != "none"),
                     "not_in_memory_rightly": sum(1 for r in refused if r["kind"] == "none"),
                     # answers stating a number or name their evidence lacks (`answering.unsupported`)
                     "unsupported": sum(1 for r in rows if r["modes"][mode].get("unsupported")),
                     "tokens_median": statistics.median(r["modes"][mode]["tokens"] for r in rows) if rows else None}
    return out


def markdown(summary: dict) -> str:
    """One line per evidence mode: F1 and coverage overall and per kind, wrong refusals."""
    cols = ["overall"] + list(KINDS)
    lines = ["| evidence | " + " | ".join(f"{c} F1 / cov. (n)" for c in cols) + " | 'Not in memory' wrongly / rightly | unsupported names or numbers | tokens (median) |",
             "|---" * (len(cols) + 4) + "|"]
    for mode, row in summary.items():
        cells = [f"{_fmt(row[c]['f1'])} / {_fmt(row[c]['coverage'])} ({row[c]['n']})" for c in cols]
        lines.append(f"| {mode} | " + " | ".join(cells) + f" | {row['not_in_memory_wrongly']} / "
                     f"{row['not_in_memory_rightly']} | {row.get('unsupported', '?')} | {row['tokens_median']} |")
    return "\n".join(lines)


def says_not_in_memory(answer: str) -> bool:
    return NOT_IN_MEMORY.lower().rstrip(".") in answer.lower()

