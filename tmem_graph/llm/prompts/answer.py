"""The answer prompts, filled with the recalled evidence.

- `focus` (the default of `Memory.ask` and `tmem ask`; `answering.py` runs it): `KEEP_PROMPT`
  chooses the memory to keep in mind among what the triggers reached, then `FOCUS_PROMPT`
  answers in a sentence or two over the compact evidence, with that memory named. Written for
  the small local model (docs/models.md).
- `assistant`: one call, a sentence or two, "Not in memory" when nothing supports an answer.
- `locomo`: the matched LoCoMo QA prompt of the T-Mem paper (Figure 6, which the paper
  reproduces from the LoCoMo protocol): answers of five or six words, timestamps first. The
  LoCoMo judge runs use it, as the paper's protocol asks.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, create_model

LOCOMO_PROMPT = """You are an intelligent memory assistant tasked with retrieving accurate information from episodic memories.

# CONTEXT:
You have access to episodic memories from conversations between two speakers. These memories contain timestamped information that may be relevant to answering the question.

# INSTRUCTIONS:
- Carefully analyze all provided episodic memories from both speakers.
- Pay special attention to the timestamps to determine the answer.
- If the question asks about a specific event or fact, look for direct evidence in the memories.
- If the memories contain contradictory information, prioritize the most recent memory.
- Convert relative time references (e.g., "last year", "two months ago") to specific dates / months / years based on the memory timestamp; ignore the relative reference in your final answer.
- If the original memory explicitly mentions an exact day of the week (e.g., "Monday"), include that weekday in your answer.
- Focus only on the content of the episodic memories from both speakers. Do not confuse character names mentioned in memories with the actual users who created those memories.
- The answer should be less than 5-6 words.

# APPROACH (Think step by step):
- Examine all memories whose timestamps and content are related to the question.
- If the answer requires calculation (e.g., converting relative time references), show your work; otherwise extract the answer directly.
- Formulate a precise, concise answer based solely on the evidence in the memories, including the weekday if it is explicitly mentioned in the original memory.
- Double-check that the final answer is specific and avoids vague time references.

{context}

Question: {question}

Answer (a short answer string):"""


NOT_IN_MEMORY = "Not in memory."

ASSISTANT_PROMPT = """You help a user by recalling what was said in their past conversations.

# Memories
{context}

# Question
{question}

# How to answer
Reply in one or two short sentences based only on the memories.
If something in the memories matters for the question even though the question does not mention it (an allergy, an injury, a plan, a dislike), take it into account and mention it.
Mention a date only when the question asks when.
If the memories say nothing that answers the question, reply: Not in memory.

Answer:"""

FOCUS_PROMPT = """{context}

Question: {question}
{keep}Answer the question in one or two sentences from the memories above."""

KEEP_LINE = "Keep in mind: {keep}\n"
# appended to the focus prompt when its answer stated a number or a name the memories lack (answering.grounded)
GROUNDED_LINE = " Use only names and numbers that appear in the memories."

KEEP_PROMPT = """Question: {question}

Memories:
{lines}

Which one memory should be kept in mind when answering this question? It may be one the question does not mention: a food someone avoids or cannot eat matters when choosing where to eat, an injury for a sports plan, a pet for a trip. Reply with its number, or 0 if none of them changes the answer."""


def keep_messages(question: str, candidates: list[str]) -> list[dict]:
    """Which of the memories the triggers reached should be kept in mind for `question`."""
    lines = "\n".join(f"{n}. {text}" for n, text in enumerate(candidates, 1))
    return [{"role": "user", "content": KEEP_PROMPT.format(question=question, lines=lines)}]


def keep_schema(candidates: int) -> type[BaseModel]:
    """The reply to `KEEP_PROMPT`: `memory`, a candidate's number or 0 for none, constrained to
    0..`candidates` (the local model decodes to the schema)."""
    return create_model("KeepChoice", memory=(Literal[tuple(range(candidates + 1))], ...))


PROMPTS = {"assistant": ASSISTANT_PROMPT, "focus": FOCUS_PROMPT, "locomo": LOCOMO_PROMPT}
COMPACT = {"focus"}   # the styles that read `compact_evidence`, the others `format_evidence`
TWO_STEP = {"focus"}  # first choose what to keep in mind among what the triggers reached


def split_reply(reply: str) -> tuple[str, str]:
    """(answer, relevant): a "Relevant: … Answer: …" reply cut in two; any other reply is all answer."""
    head, sep, answer = reply.rpartition("Answer:")
    if not sep or not answer.strip():
        return reply.strip(), ""
    return answer.strip(), head.replace("Relevant:", "", 1).strip()


def answer_messages(context: str, question: str, style: str = "assistant", keep: str = "") -> list[dict]:
    """Chat messages asking the answer model to answer `question` from `context`, in one of
    the `PROMPTS` styles (`keep`: what the focus style's first call chose to keep in mind)."""
    if style not in PROMPTS:
        raise ValueError(f"answer style must be one of {', '.join(PROMPTS)}, not {style!r}")
    fields = {"context": context, "question": question}
    if style == "focus":
        fields["keep"] = KEEP_LINE.format(keep=keep) if keep else ""
    return [{"role": "user", "content": PROMPTS[style].format(**fields)}]
