"""Scene card: title, summary and third-person narrative of one scene."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ._format import most, render_turns


class SceneCard(BaseModel):
    title: str = Field(description="10-20 words, specific and searchable: who, what", json_schema_extra=most(chars=200))
    summary: str = Field(description="2-4 sentences: who did what, in what context, why", json_schema_extra=most(chars=800))
    narrative: str = Field(description="third-person retelling in time order, with names, dates, places, feelings",
                           json_schema_extra=most(chars=2000))


def scene_card_messages(turns) -> list[dict]:
    """Ask for the card of the scene made of `turns`."""
    user = ("Describe this scene of a conversation so that it can be found and understood later "
            "without the dialogue. Use names, not pronouns; keep concrete details (dates, places, "
            "numbers, titles, feelings); write relative times as 'relative phrase (absolute date)' "
            "using the timestamps. Reply with JSON {\"title\", \"summary\", \"narrative\"}.\n\n"
            f"The scene:\n{render_turns(turns)}")
    return [{"role": "user", "content": user}]
