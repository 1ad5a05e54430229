"""The five construction stages as functions from data to data; only the LLM is called.

Every reply is schema-validated by the client (bounded retries); semantic problems that a
small model makes (an unknown scene id, a turn number out of range) are repaired here the
same way every time, so a resumed build reaches the same result.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime
from typing import Callable

from ..llm.client import InvalidReply, LLMClient
from ..llm.prompts.item_triggers import EXAMPLE_BRIDGE, EXAMPLE_CONCEPT, ItemTriggersOut, item_trigger_messages
from ..llm.prompts.items import item_messages, items_schema
from ..llm.prompts.persona import PersonaOut, persona_messages
from ..llm.prompts.scene_card import SceneCard, scene_card_messages
from ..llm.prompts.scene_triggers import HORIZON_CHANNELS, SceneTriggersOut, scene_trigger_messages
from ..llm.prompts.segment import Boundaries, boundary_messages
from ..llm.prompts.topic import TopicLabel, TopicMatches, match_messages, new_topic_messages, update_topic_messages
from ..textio import is_iso_datetime
from ..model import HorizonTrigger, Item, ItemTrigger, Scene, Topic, Turn

log = logging.getLogger(__name__)

WINDOW = 12           # new turns shown to the boundary model per call
CONTEXT = 8           # turns of the open scene shown with them
MAX_SCENE_TURNS = 24  # a scene is closed at this length whatever the model says
MIN_SCENE_TURNS = 5   # a boundary the model puts sooner is ignored (small models over-split)
TOPIC_BATCH = 10      # topics matched per call (reference code)
MAX_ITEM_TRIGGERS = 3
PERSONA_WINDOW = 60   # turns per persona update (reference code)


def segment(turns: list[Turn], llm: LLMClient, idle_s: float | None = None) -> list[list[Turn]]:
    """Split turns into scenes: a sliding buffer, closed where the model sees an event close.

    Rules applied to every reply the same way (`closes`): a new session always starts a scene
    (sessions are separate conversations; topics link what continues), so does a pause longer
    than `idle_s` in conversation time, a scene is closed at MAX_SCENE_TURNS, a boundary that
    would leave a scene shorter than MIN_SCENE_TURNS is ignored, and a short scene left at a
    session's end joins the one before it. The live path (construct/live.py) asks the same
    windows one at a time as turns arrive, with the same rules, so both reach the same scenes.
    """
    scenes: list[list[Turn]] = []
    current: list[Turn] = []
    for start in range(0, len(turns), WINDOW):
        new = turns[start:start + WINDOW]
        starts = boundary_starts(current, new, llm)
        for n, turn in enumerate(new, 1):
            if closes(current, turn, n in starts, idle_s):
                scenes.append(current)
                current = []
            current.append(turn)
    if current:
        scenes.append(current)
    return merge_short(scenes)


def boundary_starts(open_scene: list[Turn], window: list[Turn], llm: LLMClient) -> set[int]:
    """The numbers (1-based) of the window's turns where the model sees a new event start,
    shown the open scene's last CONTEXT turns before them; out-of-range numbers are ignored."""
    reply = llm.structured(boundary_messages(open_scene[-CONTEXT:], window), Boundaries, stage="segment",
                           what=f"turns {window[0].id}..{window[-1].id}")
    return {n for n in reply.starts if 1 <= n <= len(window)}


def closes(current: list[Turn], turn: Turn, model_start: bool, idle_s: float | None) -> bool:
    """Whether `turn` closes the open scene `current` and starts the next one."""
    if not current:
        return False
    return (turn.session != current[-1].session or len(current) >= MAX_SCENE_TURNS
            or (model_start and len(current) >= MIN_SCENE_TURNS)
            or (idle_s is not None and _gap_s(current[-1].time, turn.time) > idle_s))


def _gap_s(before: str | None, after: str | None) -> float:
    """Seconds from one turn's time to the next one's (0 when either is missing or they
    cannot be compared: a pause is only ever measured between two known times)."""
    if not before or not after:
        return 0.0
    try:
        return (datetime.fromisoformat(after) - datetime.fromisoformat(before)).total_seconds()
    except (ValueError, TypeError):  # an unparsable time, or one with a zone and one without
        return 0.0


def merge_short(scenes: list[list[Turn]]) -> list[list[Turn]]:
    """A scene shorter than MIN_SCENE_TURNS joins the previous scene of its session, else the
    next one (a whole session that short stays a scene of its own)."""
    out: list[list[Turn]] = []
    for scene in scenes:
        if out and len(scene) < MIN_SCENE_TURNS and out[-1][-1].session == scene[0].session:
            out[-1] = out[-1] + scene
        elif out and len(out[-1]) < MIN_SCENE_TURNS and out[-1][-1].session == scene[0].session:
            out[-1] = out[-1] + scene
        else:
            out.append(scene)
    return out


def scene_card(scene: Scene, turns: list[Turn], llm: LLMClient) -> Scene:
    """The scene with its title, summary and narrative filled in."""
    card = llm.structured(scene_card_messages(turns), SceneCard, stage="scene", what=f"scene {scene.id}")
    scene.title, scene.summary, scene.narrative = card.title.strip(), card.summary.strip(), card.narrative.strip()
    return scene


def assign_topics(scenes: list[Scene], topics: list[Topic], llm: LLMClient,
                  new_id: Callable[[], str]) -> list[str]:
    """Admit each scene, in arrival order, to every matching topic or to a new one.

    `topics` is updated in place; returns the ids of the topics that changed.
    """
    touched: list[str] = []
    for scene in scenes:
        matched: list[Topic] = []
        for start in range(0, len(topics), TOPIC_BATCH):
            batch = topics[start:start + TOPIC_BATCH]
            by_id = {t.id: t for t in batch}
            reply = llm.structured(match_messages(scene, batch), TopicMatches, stage="topic",
                                   what=f"scene {scene.id} vs topics {batch[0].id}..{batch[-1].id}")
            matched += [by_id[r.topic_id] for r in reply.results if r.match and r.topic_id in by_id
                        and by_id[r.topic_id] not in matched]
        if not matched:
            label = llm.structured(new_topic_messages(scene), TopicLabel, stage="topic",
                                   what=f"new topic for scene {scene.id}")
            topic = Topic(new_id(), [scene.id], label.title.strip() or scene.title, _keywords([], label.keywords))
            topics.append(topic)
            matched = [topic]
        else:
            for topic in matched:
                label = llm.structured(update_topic_messages(topic, scene), TopicLabel, stage="topic",
                                       what=f"update of topic {topic.id} with scene {scene.id}")
                topic.title = label.title.strip() or topic.title
                topic.keywords = _keywords(topic.keywords, label.keywords)  # keywords are only added
                topic.scene_ids.append(scene.id)
        touched += [t.id for t in matched if t.id not in touched]
    return touched


def _keywords(old: list[str], new: list[str]) -> list[str]:
    seen = {k.lower() for k in old}
    out = list(old)
    for k in (k.strip() for k in new):
        if k and k.lower() not in seen:
            seen.add(k.lower())
            out.append(k)
    return out


def extract_items(topic: Topic, new_scenes: list[Scene], context: list[Scene], turns_by_id: dict[str, Turn],
                  llm: LLMClient) -> list[Item]:
    """Atomic and connected items of a topic's new scenes (ids left empty for the caller).

    Unknown scene ids are dropped from an item; an item with no new scene left is dropped
    (it would repeat an earlier extraction).
    """
    order = {s.id: n for n, s in enumerate(context + new_scenes)}
    try:
        reply = llm.structured(item_messages(topic, new_scenes, context, turns_by_id), items_schema(list(order)),
                               stage="items", what=f"topic {topic.id}", cut_is_final=len(new_scenes) > 1)
    except InvalidReply:
        # too much for one reply (a small model's answer cut at its token cap; several scenes
        # split at the first cut reply): halve the new scenes; the second half sees the first
        # as earlier scenes, so it can still connect to it
        if len(new_scenes) < 2:
            raise
        half = len(new_scenes) // 2
        log.warning("items topic %s: no valid reply for %d new scenes; extracting %d and %d separately",
                    topic.id, len(new_scenes), half, len(new_scenes) - half)
        return (extract_items(topic, new_scenes[:half], context, turns_by_id, llm)
                + extract_items(topic, new_scenes[half:], context + new_scenes[:half], turns_by_id, llm))
    new_ids = {s.id for s in new_scenes}
    known = set(order)
    items = []
    for out in reply.items:
        refs = (_scene_ref(i, known) for i in out.scene_ids)
        ids = sorted(dict.fromkeys(i for i in refs if i), key=order.get)
        text = out.text.strip()
        if not text or not set(ids) & new_ids:
            continue
        time = out.time if out.time and is_iso_datetime(out.time) else None
        items.append(Item("", "atomic" if len(ids) == 1 else "connected", text, ids, time))
    return items


def _scene_ref(raw: str, known: set[str]) -> str | None:
    """A scene id as a small model may write it ("s3", "scene_s3", "Scene s3", "3") → "s3" if known."""
    if raw in known:
        return raw
    m = re.fullmatch(r"(?:scene)?[\s_:-]*s?(\d+)", raw.strip().lower())
    return f"s{m.group(1)}" if m and f"s{m.group(1)}" in known else None


def item_triggers(item: Item, llm: LLMClient) -> list[ItemTrigger]:
    """Up to three Entity/Bridge triggers of an item."""
    reply = llm.structured(item_trigger_messages(item.text, item.time), ItemTriggersOut,
                           stage="item_triggers", what=f"item {item.id}")
    out: list[ItemTrigger] = []
    seen: set[tuple[str, str]] = set()
    for t in reply.triggers:
        trig = ItemTrigger(t.concept.strip() or None, t.bridge.strip() or None, t.rationale.strip() or None)
        key = ((trig.concept or "").lower(), (trig.bridge or "").lower())
        if trig.joint() and key not in seen and not _copies_example(trig):  # small models repeat both
            seen.add(key)
            out.append(trig)
    return out[:MAX_ITEM_TRIGGERS]


def _copies_example(trigger: ItemTrigger) -> bool:
    return any((text or "").strip(" .").lower() in (EXAMPLE_CONCEPT, EXAMPLE_BRIDGE)
               for text in (trigger.concept, trigger.bridge))


def scene_triggers(scene: Scene, turns: list[Turn], llm: LLMClient) -> Scene:
    """The scene with its Scene trigger and Horizon projections filled in."""
    reply = llm.structured(scene_trigger_messages(turns), SceneTriggersOut, stage="scene_triggers",
                           what=f"scene {scene.id}")
    scene.scene_trigger = {k: v.strip() for k, v in
                           (("situation", reply.situation), ("object", reply.object),
                            ("event", reply.event), ("emotion", reply.emotion)) if v and v.strip()}
    horizon = reply.horizon.model_dump()
    scene.horizon = [HorizonTrigger(ch, horizon[ch].strip()) for ch in HORIZON_CHANNELS
                     if horizon.get(ch) and horizon[ch].strip() and not _is_null(horizon[ch])]
    return scene


def _is_null(text: str) -> bool:
    return bool(re.fullmatch(r"\s*(null|none|n/?a|-)\s*\.?\s*", text, re.IGNORECASE))


def persona(speaker: str, current: str | None, turns: list[Turn], llm: LLMClient) -> str:
    """The speaker's persona after the new turns, updated window by window."""
    summary = current
    for start in range(0, len(turns), PERSONA_WINDOW):
        window = turns[start:start + PERSONA_WINDOW]
        reply = llm.structured(persona_messages(speaker, summary, window), PersonaOut, stage="persona",
                               what=f"{speaker}, turns {window[0].id}..{window[-1].id}")
        summary = reply.summary.strip() or summary
    return summary or ""
