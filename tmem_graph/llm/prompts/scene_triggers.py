"""Scene trigger (situation, object, event, emotion) and Horizon projections of one scene."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ._format import render_turns

HORIZON_CHANNELS = {
    "personal_arc": "how the speaker may change because of this (before -> after)",
    "avoidance_habit": "what the speaker may now avoid or watch for, and where that could show up",
    "goal_arc": "a commitment made here, and the cost, fatigue or replacement that may follow",
    "belief_in_action": "a stated principle, and where reality may test it",
    "legacy_anchor": "a concrete object, person or ritual that may come back later",
}


class Horizon(BaseModel):
    personal_arc: str | None = None
    avoidance_habit: str | None = None
    goal_arc: str | None = None
    belief_in_action: str | None = None
    legacy_anchor: str | None = None


class SceneTriggersOut(BaseModel):
    situation: str = Field(description="the situation or setting, one sentence")
    object: str = Field(description="the essential entity, item or person, one sentence")
    event: str = Field(description="the abstracted action or change, one sentence")
    emotion: str = Field(description="the emotional arc, one sentence")
    horizon: Horizon


def scene_trigger_messages(turns) -> list[dict]:
    """The Scene trigger and the five Horizon projections of the scene made of `turns`."""
    channels = "\n".join(f"- {k}: {v}" for k, v in HORIZON_CHANNELS.items())
    user = ("Read this scene of a conversation.\n\n"
            f"{render_turns(turns)}\n\n"
            "1. Describe it abstractly in four sentences: situation, object, event, emotion.\n"
            "2. Look ahead: for each channel below, write one sentence (under 35 words) about a FUTURE "
            "situation in which this scene will matter, in words that a later message could use; use "
            f"null when the scene gives no signal for a channel.\n{channels}\n\n"
            "Reply with JSON {\"situation\", \"object\", \"event\", \"emotion\", \"horizon\": {channel: "
            "sentence or null}}.")
    return [{"role": "user", "content": user}]
