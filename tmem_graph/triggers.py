"""The trigger families, in one registry: what each is attached to, the views it is stored
and searched as, the cascade channel and ablation it answers to, how the graph page draws it,
and where `tmem-memory/1` keeps it.

The paper's four families are stored as three: an item trigger carries the Entity (`concept`)
and Bridge (`bridge`) texts and their `joint` view; a scene carries its Scene trigger (four
attributes) and its Horizon projections. Adding a family means an entry here, its prompt module
(`llm/prompts/`) and its construction stage; the cascade, the ablations, export and the graph
page follow the registry.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SCENE_ATTRIBUTES = ("situation", "object", "event", "emotion")  # a Scene trigger's four views


@dataclass(frozen=True)
class Family:
    key: str                   # TriggerView.family, and the :Trigger node's `family` in the graph
    host: str                  # "scene" or "item"
    ablation: str              # the cascade component `without` names to switch it off
    channel: str | None        # its SceneCue channel (scene families); items go through TrigRecall
    depth: int                 # views its dense query asks for, in multiples of `candidates`
    views: tuple[str, ...]     # the view channels a host may have (empty: free names, e.g. Horizon's)
    via: dict[str, str] = field(default_factory=dict)  # view -> credit in `via` (default: `channel`)
    colour: str = "#bcb8b1"    # trigger nodes of the graph page
    format_key: str = ""       # where tmem-memory/1 keeps it (shared/spec/memory-format.md)


ITEM = Family("item", "item", "entity_bridge", None, 1, ("concept", "bridge", "joint"),
              via={"concept": "entity", "bridge": "bridge", "joint": "joint"},
              colour="#c9b26b", format_key="items[].triggers[]")
SCENE = Family("scene", "scene", "scene_trigger", "scene_trigger", 4, SCENE_ATTRIBUTES,
               colour="#9fb7c9", format_key="scenes[].triggers.scene")
HORIZON = Family("horizon", "scene", "horizon", "horizon", 5, (),
                 colour="#c7a2c9", format_key="scenes[].triggers.horizon[]")

FAMILIES: dict[str, Family] = {f.key: f for f in (ITEM, SCENE, HORIZON)}
SCENE_FAMILIES = tuple(f for f in FAMILIES.values() if f.host == "scene")
TRIGGER_ABLATIONS = tuple(f.ablation for f in FAMILIES.values())


def credit(family: Family, view: str) -> str:
    """How a recalled object reached through `view` of `family` is credited in `via`."""
    return family.via.get(view) or family.channel or view


def family_of_credit(credit_name: str) -> tuple[Family, str | None] | None:
    """The family (and the view, for item families) behind a `via` credit; None if no trigger's."""
    for f in FAMILIES.values():
        if f.channel == credit_name:
            return f, None
        for view, name in f.via.items():
            if name == credit_name:
                return f, view
    return None
