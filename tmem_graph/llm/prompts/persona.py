"""Persona: a per-speaker profile of standing facts, updated window by window, each statement
citing the turns it rests on."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ._format import most, render_turns


class PersonaStatement(BaseModel):
    text: str = Field(description="one sentence about the speaker", json_schema_extra=most(chars=300))
    turns: list[int] = Field(default_factory=list,
                             description="numbers of the new turns it rests on; [] if kept from the current profile",
                             json_schema_extra=most(items=4))


class PersonaOut(BaseModel):
    statements: list[PersonaStatement] = Field(json_schema_extra=most(items=20))


def persona_messages(speaker: str, current: str | None, turns) -> list[dict]:
    """The speaker's persona after reading `turns` (numbered), starting from `current`."""
    user = (f"Keep a profile of {speaker}: identity, occupation, family and friends, preferences, "
            "personality, values and important life events with their dates. Only what the dialogue "
            f"says about {speaker}; never guess an age, a job or a place that nobody said. Return the "
            "updated profile as statements: keep each statement of the current profile that is still "
            "true (with turns []), and add what the new dialogue says, each new statement with the "
            "numbers of the turns it rests on. At most 20 statements, one sentence each. "
            "Reply with JSON {\"statements\": [{\"text\", \"turns\"}]}."
            f"\n\nCurrent profile:\n{current or '(empty)'}\n\n"
            f"New dialogue:\n{render_turns(turns, numbered=True)}")
    return [{"role": "user", "content": user}]



def persona_retry_messages(messages: list[dict], speaker: str) -> list[dict]:
    """The same request once more, with one rule added, after a reply that copied lines of the
    dialogue (a question, a line under a speaker's name, words in the first or second person)
    instead of saying what they tell about `speaker`. The rule is added to the request rather
    than answered after the reply: shown its own reply, the 1.5B model repeats it."""
    rule = (f"\n\nEach statement is a fact about {speaker} in the third person, never a line of the "
            f"dialogue: not \"{speaker}: I booked a class.\" but \"{speaker} booked a class.\"")
    return messages[:-1] + [{**messages[-1], "content": messages[-1]["content"] + rule}]
