"""Item extraction per topic: atomic items (one scene) and connected items (several)."""

from __future__ import annotations

from pydantic import BaseModel, Field, create_model

from ._format import most, render_scene


class ExtractedItem(BaseModel):
    text: str = Field(description="one self-contained fact: who, what, when, where", json_schema_extra=most(chars=400))
    scene_ids: list[str] = Field(description="the scene ids it comes from (2+ for a connected item)",
                                 json_schema_extra=most(items=8, item_chars=12))
    time: str | None = Field(default=None, description="ISO date of the fact if known")


class ExtractedItems(BaseModel):
    items: list[ExtractedItem] = Field(json_schema_extra=most(items=40))


def items_schema(scene_ids: list[str]) -> type[ExtractedItems]:
    """ExtractedItems whose JSON schema lists the allowed scene ids (an enum), so a
    grammar-constrained decoder can only write those; validation still accepts any string
    (stages.extract_items repairs or drops unknown ids), so other endpoints are not refused."""
    item = create_model("ExtractedItem", __base__=ExtractedItem, scene_ids=(list[str], Field(
        description="the scene ids it comes from (2+ for a connected item)",
        json_schema_extra={"maxItems": 8, "items": {"type": "string", "enum": list(scene_ids)}})))
    return create_model("ExtractedItems", __base__=ExtractedItems,
                        items=(list[item], Field(json_schema_extra=most(items=40))))


def item_messages(topic, scenes, context_scenes, turns_by_id) -> list[dict]:
    """Items of `scenes` (new in `topic`); `context_scenes` are older scenes they may connect to."""
    blocks = "\n\n".join(render_scene(s, turns_by_id) for s in scenes)
    older = "\n\n".join(render_scene(s, turns_by_id, with_dialogue=False) for s in context_scenes)
    user = (f"Topic {topic.id}: {topic.title}\n\nScenes to extract from:\n{blocks}\n\n"
            + (f"Earlier scenes of the topic (for connections only):\n{older}\n\n" if older else "")
            + "Extract the memorable facts as items. First atomic items, each from exactly one of the "
            "scenes to extract from (aim for 3-5 per scene); then connected items that link facts "
            "across two or more scenes (a cause and its effect, a plan and its outcome). Each item is "
            "one self-contained sentence with names and absolute dates. Use only the scene ids shown. "
            "Reply with JSON {\"items\": [{\"text\", \"scene_ids\", \"time\"}]}.")
    return [{"role": "user", "content": user}]
