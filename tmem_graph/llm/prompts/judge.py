"""Evaluation prompts: the LoCoMo CORRECT/WRONG grader, and LoCoMo-Plus's reply prompt and
binary memory-awareness judge.

Sources. LoCoMo answers use the matched QA prompt of the paper's Figure 6 (`answer.py`). The
grader follows the LLM-judge protocol of Li et al. (2025, MemOS; the Mem0/LoCoMo
CORRECT/WRONG grader): lenient on wording, date formats and relative dates that denote the
same period. The LoCoMo-Plus prompts follow the protocol of Li et al. (2026, LoCoMo-Plus): the
assistant continues the conversation after the trigger query, and a binary judge asks whether
the reply shows awareness of the cue dialogue. The wording of all three prompts here was
written for this project; it is not the text of those papers' prompts.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ._format import most, render_turns


class Verdict(BaseModel):
    reasoning: str = Field(description="one or two sentences comparing the reply with the reference",
                           json_schema_extra=most(chars=800))
    label: Literal["CORRECT", "WRONG"]


LOCOMO_JUDGE = """You grade the answers of a memory assistant. A question was asked about earlier conversations between two people; you see the question, the gold answer written by the benchmark's annotators, and the answer the assistant generated. Label the generated answer CORRECT or WRONG.

Grade generously:
- CORRECT when it gives the fact the gold answer gives or is about the same thing, even if it is worded differently, shorter, longer, or adds details that do not contradict the gold answer.
- For a date, a time or a duration: CORRECT when it denotes the same day, month, year or period as the gold answer, whatever the format ("7 May 2023", "May 7th, 2023", "2023-05-07"). A relative expression ("the week before 9 June 2023") and an absolute one ("early June 2023") are both fine when they denote the same period.
- WRONG when it names a different person, thing, place, number or period, contradicts the gold answer, or does not answer (for example "unknown" or "not mentioned").

First say in one or two sentences how the generated answer compares with the gold answer, then give the label. Reply with JSON {{"reasoning", "label": "CORRECT" or "WRONG"}}.

Question: {question}
Gold answer: {gold}
Generated answer: {answer}

Grading run {run}."""


PLUS_ANSWER = """You are {me}, in a long-running conversation with {other}. Below are memories of your earlier conversations with {other}, recalled for their latest message. Reply to that message as {me} would, in one to three natural sentences in the first person. Where something in the memories bears on what {other} says (an earlier plan, a state, a reason or a value they told you about), let it shape your reply; leave out memories that have nothing to do with it.

{context}

It is now {time}. {other} says: "{query}"

{me}:"""


PLUS_JUDGE = """You judge whether a reply in a conversation shows memory of an earlier exchange. Some time ago two people had a short exchange (the cue). Later one of them said something (the trigger) that is connected to the cue without repeating it: it may report an outcome of what the cue describes, touch a state, goal or value stated there, or go against it. You see the cue, the trigger and the reply given to the trigger.

- CORRECT when the reply shows awareness of the cue: it refers to it explicitly or implicitly, or its content is clearly shaped by what the cue says (a reminder, a question about it, advice that follows from it, noticing a change or a contradiction).
- WRONG when the reply is generic, something that anyone who had not heard the cue could have said, or when it contradicts the cue.

First say in one or two sentences which part of the reply, if any, connects to the cue, then give the label. Reply with JSON {{"reasoning", "label": "CORRECT" or "WRONG"}}.

Cue:
{cue}

Trigger ({speaker}): "{query}"

Reply:
{reply}"""


def locomo_judge_messages(question: str, gold: str, answer: str, run: int = 1) -> list[dict]:
    """The grader's messages for one generated answer; `run` numbers the independent runs."""
    # The run number makes the messages of the runs differ: the response cache keys on the
    # messages, so identical runs would all return the first run's verdict. It comes last so
    # the runs share the cached prompt prefix.
    text = LOCOMO_JUDGE.format(question=question, gold=gold, answer=answer, run=run)
    return [{"role": "user", "content": text}]


def plus_answer_messages(context: str, me: str, other: str, query: str, time: str) -> list[dict]:
    """The reply of `me` to `other`'s trigger query, given the recalled evidence `context`."""
    text = PLUS_ANSWER.format(context=context, me=me, other=other, query=query, time=time)
    return [{"role": "user", "content": text}]


def plus_judge_messages(cue, speaker: str, query: str, reply: str) -> list[dict]:
    """The binary memory-awareness judge: does `reply` to the trigger `query` draw on the `cue` turns?"""
    text = PLUS_JUDGE.format(cue=render_turns(cue), speaker=speaker, query=query, reply=reply)
    return [{"role": "user", "content": text}]
