"""Item extraction per scene: atomic items (this scene) and connected items (this scene and
earlier scenes of its topics), each citing the numbered turns it rests on."""

from __future__ import annotations

from pydantic import BaseModel, Field, create_model

from ._format import most, render_turns


class ExtractedItem(BaseModel):
    text: str = Field(description="one self-contained fact: who, what, when, where", json_schema_extra=most(chars=400))
    turns: list[int] = Field(description="the numbers of the turns it rests on", json_schema_extra=most(items=6))
    earlier_scenes: list[str] = Field(default_factory=list,
                                      description="earlier scene ids it connects to (a connected item)",
                                      json_schema_extra=most(items=4, item_chars=12))
    time: str | None = Field(default=None, description="ISO date of the fact if known")


class ExtractedItems(BaseModel):
    items: list[ExtractedItem] = Field(json_schema_extra=most(items=12))


def items_schema(earlier_ids: list[str]) -> type[ExtractedItems]:
    """ExtractedItems whose JSON schema lists the earlier scene ids offered (an enum), so a
    grammar-constrained decoder can only write those; validation still accepts any string
    (stages.extract_items repairs or drops unknown ids), so other endpoints are not refused."""
    enum = {"type": "string", "enum": list(earlier_ids)} if earlier_ids else {"type": "string", "maxLength": 12}
    item = create_model("ExtractedItem", __base__=ExtractedItem, earlier_scenes=(list[str], Field(
        default_factory=list, description="earlier scene ids it connects to (a connected item)",
        json_schema_extra={"maxItems": 4 if earlier_ids else 0, "items": enum})))
    return create_model("ExtractedItems", __base__=ExtractedItems,
                        items=(list[item], Field(json_schema_extra=most(items=12))))


def item_messages(scene, turns, earlier) -> list[dict]:
    """Items of one new scene, its turns numbered; `earlier` are older scenes of its topics
    (id, title, summary only) that an item may connect it to."""
    older = "\n".join(f"- {s.id} ({s.time or 'time unknown'}): {s.title or ''}. {s.summary or ''}" for s in earlier)
    user = ("Extract the memorable facts of the scene below as items: what happened, plans, "
            "decisions, preferences, possessions, relations, dates. Cover the whole scene, every "
            "speaker (aim for 3-6 items). Each item is one self-contained sentence with names and "
            "absolute dates, and lists the numbers of the turns it rests on. "
            + ("If a fact links this scene to one of the earlier scenes listed (a cause and its effect, "
               "a plan and its outcome, a follow-up), name those scene ids in `earlier_scenes`; "
               "otherwise leave it empty. " if earlier else "Leave `earlier_scenes` empty. ")
            + "Reply with JSON {\"items\": [{\"text\", \"turns\", \"earlier_scenes\", \"time\"}]}.\n\n"
            + (f"Earlier scenes (for connections only):\n{older}\n\n" if older else "")
            + f"Scene {scene.id} (time: {scene.time or 'unknown'}): {scene.title or ''}\n"
            f"Summary: {scene.summary or ''}\nDialogue:\n{render_turns(turns, numbered=True)}")
    return [{"role": "user", "content": user}]
