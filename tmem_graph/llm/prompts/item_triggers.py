"""Item triggers: Entity (a superordinate concept) + Bridge (a future situation) + rationale."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ._format import most


class ItemTriggerOut(BaseModel):
    concept: str = Field(description="2-6 words naming the item one or two steps up the is-a ladder",
                         json_schema_extra=most(chars=80))
    bridge: str = Field(description="a future situation, sharing no words with the item, in which knowing it matters",
                        json_schema_extra=most(chars=240))
    rationale: str = Field(description="one clause: why it matters there", json_schema_extra=most(chars=240))


class ItemTriggersOut(BaseModel):
    triggers: list[ItemTriggerOut] = Field(json_schema_extra=most(items=3))


def item_trigger_messages(item_text: str, time: str | None) -> list[dict]:
    """Up to three Entity/Bridge triggers for one item."""
    user = ("A memory assistant stores this fact and must recall it later, also when a future "
            "message does not mention it at all.\n\n"
            f"Fact: {item_text}\n{f'Time: {time}' if time else ''}\n\n"
            "Give up to 3 triggers, each covering a different angle: `concept` names the fact one or two "
            "steps more general (\"seafood allergy\" -> \"food allergy\"); `bridge` is a situation in "
            "which the fact would matter although the words differ (\"choosing a restaurant for a team "
            "dinner\"); `rationale` says why in one clause. "
            "Reply with JSON {\"triggers\": [{\"concept\", \"bridge\", \"rationale\"}]}.")
    return [{"role": "user", "content": user}]
