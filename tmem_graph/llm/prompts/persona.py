"""Persona: a per-speaker summary of standing traits, updated window by window."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ._format import most, render_turns


class PersonaOut(BaseModel):
    summary: str = Field(description="identity, occupation, relations, preferences, traits, key life events with dates",
                         json_schema_extra=most(chars=2400))


def persona_messages(speaker: str, current: str | None, turns) -> list[dict]:
    """The speaker's persona after reading `turns`, starting from `current`."""
    user = (f"Keep a profile of {speaker}: identity, occupation, family and friends, preferences, "
            "personality, values and important life events with their dates. Only what the dialogue "
            f"says about {speaker}.\n\nCurrent profile:\n{current or '(empty)'}\n\n"
            f"New dialogue:\n{render_turns(turns)}\n\n"
            "Return the updated profile (at most 200 words), keeping what is still true. "
            "Reply with JSON {\"summary\"}.")
    return [{"role": "user", "content": user}]
