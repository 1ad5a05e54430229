"""Scene segmentation: where does the current event close? (paper §3.2, Algorithm 3, stage 1)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ._format import most, render_turns

SYSTEM = """You split a conversation into scenes. A scene is one coherent event or exchange: it \
closes when the event the speakers are dealing with closes and a different matter begins. A new \
session always starts a new scene (that is done for you); within a session, a short digression \
or a pause does not close the scene. Greetings belong to the matter that follows them; thanks \
and farewells to the matter before them. Do not over-split: a scene usually has 3 to 20 turns, \
and many sessions are one or two scenes."""


class Boundaries(BaseModel):
    starts: list[int] = Field(description="numbers of the NEW turns that start a new scene (empty if none)",
                              json_schema_extra=most(items=12))


def boundary_messages(open_scene, new_turns) -> list[dict]:
    """Ask which of `new_turns` (numbered from 1) start a new scene after `open_scene`."""
    context = render_turns(open_scene) if open_scene else "(no open scene: the conversation starts here)"
    user = (f"The scene still open so far:\n{context}\n\nNew turns, numbered:\n"
            f"{render_turns(new_turns, numbered=True)}\n\n"
            "Which numbered turns start a new scene (the previous event closed just before them)? "
            "Reply with JSON {\"starts\": [numbers]}; [] if every new turn continues the open scene.")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
