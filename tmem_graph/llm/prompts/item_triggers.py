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


# The worked example is deliberately far from everyday chat topics: small models copy examples,
# and stages.item_triggers drops any trigger that repeats it.
EXAMPLE_FACT = "Mia adopted a retired greyhound in May 2023."
EXAMPLE_CONCEPT = "pet ownership"
EXAMPLE_BRIDGE = "planning a weekend trip away from home"


def item_trigger_messages(item_text: str, time: str | None) -> list[dict]:
    """Up to three Entity/Bridge triggers for one item."""
    # instructions first, the fact last: consecutive calls share a cached prompt prefix
    user = ("A memory assistant stores the fact below and must recall it later, also when a future "
            "message does not mention it at all. Give up to 3 triggers for THIS fact, each covering a "
            "different angle: `concept` names what the fact is about, one or two steps more general; "
            "`bridge` is a different, future everyday situation in which remembering the fact would "
            "help, although nobody would mention it then; `rationale` says why in one clause. "
            f"(Only to show the form: for \"{EXAMPLE_FACT}\" a concept is \"{EXAMPLE_CONCEPT}\" "
            f"and a bridge is \"{EXAMPLE_BRIDGE}\".) "
            "Reply with JSON {\"triggers\": [{\"concept\", \"bridge\", \"rationale\"}]}.\n\n"
            f"Fact: {item_text}{f'{chr(10)}Time: {time}' if time else ''}")
    return [{"role": "user", "content": user}]


def bridge_retry_messages(messages: list[dict], reply_json: str) -> list[dict]:
    """The same request once more, after a reply whose bridges restated the fact."""
    return messages + [
        {"role": "assistant", "content": reply_json},
        {"role": "user", "content": "A bridge above repeats the fact itself. A bridge must be a different, "
                                    "later situation (what someone will be doing, planning or choosing) "
                                    "that uses none of the fact's words. Give the triggers again. "
                                    "Reply with JSON {\"triggers\": [{\"concept\", \"bridge\", \"rationale\"}]}."},
    ]
