"""Plain data classes of a memory: turns, scenes, topics, items, triggers, personas.

These carry no I/O; `format` converts them from and to `tmem-memory/1` documents and
`store` writes and reads them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .triggers import HORIZON, ITEM, SCENE, SCENE_ATTRIBUTES  # noqa: F401  (SCENE_ATTRIBUTES: part of the model)


@dataclass
class Turn:
    id: str
    speaker: str
    text: str
    time: str | None = None
    session: int | None = None


def turn_passage(speaker: str, text: str) -> str:
    """What a turn's passage embedding (the turn channel's) is computed from: "speaker: text",
    as the flat baselines index a turn (shared/docs/baselines.md). Questions name people; the
    packer ranks a scene's turns by the embedding of the text alone, which measured better
    there (docs/design-and-evidence.md)."""
    return f"{speaker}: {text}"


@dataclass
class HorizonTrigger:
    channel: str
    text: str


@dataclass
class Scene:
    id: str
    turn_ids: list[str]
    title: str | None = None
    summary: str | None = None
    narrative: str | None = None
    time: str | None = None
    scene_trigger: dict[str, str] = field(default_factory=dict)
    horizon: list[HorizonTrigger] = field(default_factory=list)


@dataclass
class Topic:
    id: str
    scene_ids: list[str]
    title: str | None = None
    keywords: list[str] = field(default_factory=list)
    summary: str | None = None


@dataclass
class ItemTrigger:
    """Entity (concept) + Bridge trigger of an item; an empty field means the view is absent."""

    concept: str | None = None
    bridge: str | None = None
    rationale: str | None = None

    def joint(self) -> str:
        """The joint view: concept ∥ bridge ∥ rationale, empty parts left out."""
        return " | ".join(p for p in (self.concept, self.bridge, self.rationale) if p)


@dataclass
class Item:
    id: str
    kind: str
    text: str
    scene_ids: list[str]
    time: str | None = None
    triggers: list[ItemTrigger] = field(default_factory=list)
    turn_ids: list[str] = field(default_factory=list)  # the turns it was distilled from; [] = unknown


@dataclass
class Persona:
    speaker: str
    summary: str


@dataclass
class MemoryDoc:
    """One whole memory, as exchanged in the `tmem-memory/1` format."""

    memory_id: str
    speakers: list[str] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    scenes: list[Scene] = field(default_factory=list)
    topics: list[Topic] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    personas: list[Persona] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Number of objects of each kind, triggers counted as encoded views."""
        views = sum(len(trigger_views_of_scene(s)) for s in self.scenes)
        views += sum(len(trigger_views_of_item(i)) for i in self.items)
        return {
            "turns": len(self.turns),
            "scenes": len(self.scenes),
            "topics": len(self.topics),
            "items": len(self.items),
            "triggers": views,
            "personas": len(self.personas),
        }


@dataclass(frozen=True)
class TriggerView:
    """One independently encoded trigger text attached to a host scene or item."""

    id: str
    host_id: str
    family: str  # a key of triggers.FAMILIES: "item", "scene", "horizon"
    channel: str
    text: str
    position: int
    rationale: str | None = None


def trigger_views_of_item(item: Item) -> list[TriggerView]:
    """Concept, bridge and joint views of each item trigger; empty views do not exist."""
    views = []
    for n, trig in enumerate(item.triggers):
        texts = dict(zip(ITEM.views, (trig.concept, trig.bridge, trig.joint())))
        for channel, text in texts.items():
            if text:
                views.append(
                    TriggerView(f"{item.id}#t{n}:{channel}", item.id, ITEM.key, channel, text, n,
                                trig.rationale)
                )
    return views


def trigger_views_of_scene(scene: Scene) -> list[TriggerView]:
    """One view per Scene-trigger attribute and one per Horizon projection."""
    views = [
        TriggerView(f"{scene.id}#scene:{attr}", scene.id, SCENE.key, attr, scene.scene_trigger[attr], n)
        for n, attr in enumerate(SCENE_ATTRIBUTES)
        if scene.scene_trigger.get(attr)
    ]
    views += [
        TriggerView(f"{scene.id}#h{n}", scene.id, HORIZON.key, h.channel, h.text, n)
        for n, h in enumerate(scene.horizon)
        if h.text
    ]
    return views
