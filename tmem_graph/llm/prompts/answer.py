"""The answer prompt: the matched LoCoMo QA prompt of the T-Mem paper (Figure 6, which the
paper reproduces from the LoCoMo protocol), filled with the recalled evidence."""

from __future__ import annotations

ANSWER_PROMPT = """You are an intelligent memory assistant tasked with retrieving accurate information from episodic memories.

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


def answer_messages(context: str, question: str) -> list[dict]:
    """Chat messages asking the answer model to answer `question` from `context`."""
    return [{"role": "user", "content": ANSWER_PROMPT.format(context=context, question=question)}]
