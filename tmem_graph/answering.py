"""Answering a question from recalled evidence with the configured LLM, in one of the answer
styles of `llm.prompts.answer`: one call ("assistant", "locomo"), or two ("focus", for the
small local model): first the model chooses, among what the triggers reached
(`retrieve.evidence.anticipated`), the one memory to keep in mind, if any; then it answers with
that memory named, and the answer carries it (appended when the model's sentence left it out).
The first call is made for a weak match (`Recall.weak`: no turn is close to the question, so
what matters is tied to it by an arc, not by its words) or a question asking for advice, a choice
or a plan (`asks_advice`), and never for one that asks when: a question close to something said
that asks for a fact wants that fact, and a caveat appended to it only dilutes it
(docs/models.md).

The focus style's answer states no number or name that neither the evidence nor the question
holds (`unsupported`): such an answer is asked for once more with the reminder
`GROUNDED_LINE`, and what is still unsupported then is cut out a sentence at a time."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .words import share_in
from .llm.prompts.answer import (GROUNDED_LINE, NOT_IN_MEMORY, TWO_STEP, answer_messages, keep_messages,
                                 keep_schema, split_reply)
from .retrieve.evidence import anticipated, asks_advice, asks_when
from .retrieve.results import Recall

if TYPE_CHECKING:
    from .llm.client import LLMClient

KEPT_IN_ANSWER = 0.5   # an answer holding this share of the kept memory's content words already says it
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# a capitalised word after another word of its sentence: a name (a sentence's first word may be any word)
NAME = re.compile(r"(?<=[\w,;:)] )[A-Z][A-Za-z]+")
SENTENCE = re.compile(r"(?<=[.!?])\s+")


def answer(llm: "LLMClient", context: str, question: str, style: str, recall: Recall | None = None,
           what: str = "") -> tuple[str, str]:
    """(answer, kept): the answer to `question` from `context`, and the memory the focus style
    chose to keep in mind among those `recall`'s triggers reached ("" when none, or another style)."""
    what = what or f"for {question[:60]!r}"
    keep = ""
    if (style in TWO_STEP and recall is not None and (recall.weak or asks_advice(question))
            and not asks_when(question)):
        candidates = anticipated(recall)
        if candidates:
            texts = [text for text, _ in candidates]
            choice = llm.structured(keep_messages(question, texts), keep_schema(len(texts)), stage="answer",
                                    what=f"what to keep in mind {what}")
            keep = texts[choice.memory - 1] if choice.memory else ""
    reply, _ = split_reply(llm.chat(answer_messages(context, question, style, keep), stage="answer", what=what))
    if style in TWO_STEP:
        reply = grounded(llm, reply, context, question, style, keep, what)
    if keep and share_in(keep, reply) < KEPT_IN_ANSWER:
        reply = f"{reply} (Keep in mind: {keep})"
    return reply, keep


def unsupported(answer: str, evidence: str) -> list[str]:
    """The numbers and names (capitalised words after a sentence's first word) `answer` states
    that `evidence` does not hold, in order: "a 150 km race" over evidence without a 150."""
    words = set(re.findall(r"[a-z0-9]+", evidence.lower()))
    numbers = set(NUMBER.findall(evidence))
    out = [n for n in NUMBER.findall(answer) if n not in numbers]
    out += [name for name in NAME.findall(answer) if name.lower() not in words]
    return list(dict.fromkeys(out))


def grounded(llm: "LLMClient", reply: str, context: str, question: str, style: str, keep: str, what: str) -> str:
    """`reply`, or, when it states a number or name the evidence (with the question and the kept
    memory) lacks, the answer asked for once more with `GROUNDED_LINE`; the sentences still
    stating one are cut, and "Not in memory." is what is left when nothing else is."""
    known = f"{context}\n{question}\n{keep}"
    if not unsupported(reply, known):
        return reply
    messages = answer_messages(context, question, style, keep)
    messages[-1]["content"] += GROUNDED_LINE
    again, _ = split_reply(llm.chat(messages, stage="answer", what=f"{what}, its names and numbers from the memories"))
    kept = [s for s in SENTENCE.split(again) if s.strip() and not unsupported(s, known)]
    return " ".join(kept) or NOT_IN_MEMORY
