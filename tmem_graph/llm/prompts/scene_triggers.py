"""Scene trigger (situation, object, event, emotion) and Horizon projections of one scene."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ._format import most, render_turns

HORIZON_CHANNELS = {
    "personal_arc": "how the speaker may change because of this (before -> after)",
    "avoidance_habit": "what the speaker may now avoid or watch for, and where that could show up",
    "goal_arc": "a commitment made here, and the cost, fatigue or replacement that may follow",
    "belief_in_action": "a stated principle, and where reality may test it",
    "legacy_anchor": "a concrete object, person or ritual that may come back later",
}


class Horizon(BaseModel):
    personal_arc: str | None = Field(default=None, json_schema_extra=most(chars=300))
    avoidance_habit: str | None = Field(default=None, json_schema_extra=most(chars=300))
    goal_arc: str | None = Field(default=None, json_schema_extra=most(chars=300))
    belief_in_action: str | None = Field(default=None, json_schema_extra=most(chars=300))
    legacy_anchor: str | None = Field(default=None, json_schema_extra=most(chars=300))


class SceneTriggersOut(BaseModel):
    situation: str = Field(description="the situation or setting, one sentence", json_schema_extra=most(chars=300))
    object: str = Field(description="the essential entity, item or person, one sentence", json_schema_extra=most(chars=300))
    event: str = Field(description="the abstracted action or change, one sentence", json_schema_extra=most(chars=300))
    emotion: str = Field(description="the emotional arc, one sentence", json_schema_extra=most(chars=300))
    horizon: Horizon


def scene_trigger_messages(turns) -> list[dict]:
    """The Scene trigger and the five Horizon projections of the scene made of `turns`."""
    channels = "\n".join(f"- {k}: {v}" for k, v in HORIZON_CHANNELS.items())
    # instructions first, the scene last: consecutive calls share a cached prompt prefix
    user = ("Read this scene of a conversation (below).\n"
            "1. Describe it abstractly in four sentences: situation, object, event, emotion.\n"
            "2. Look ahead: for each channel below, write one sentence (under 35 words) about a FUTURE "
            "situation in which this scene will matter, in words that a later message could use; use "
            f"null when the scene gives no signal for a channel.\n{channels}\n\n"
            "Reply with JSON {\"situation\", \"object\", \"event\", \"emotion\", \"horizon\": {channel: "
            "sentence or null}}.\n\n"
            f"The scene:\n{render_turns(turns)}")
    return [{"role": "user", "content": user}]


def horizon_retry_messages(messages: list[dict], reply_json: str, channels: list[str]) -> list[dict]:
    """The same request once more, after a reply whose projections for `channels` restated the scene."""
    named = ", ".join(channels)
    return messages + [
        {"role": "assistant", "content": reply_json},
        {"role": "user", "content": f"The look-ahead for {named} above repeats what happens in the scene. "
                                    "A look-ahead must be a different, later situation (what the speaker "
                                    "will be doing, planning, avoiding or choosing then) that reuses few of "
                                    "the scene's words; use null when there is none. Give the whole JSON "
                                    "again: {\"situation\", \"object\", \"event\", \"emotion\", "
                                    "\"horizon\": {channel: sentence or null}}."},
    ]
