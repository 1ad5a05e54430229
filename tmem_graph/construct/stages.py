"""The five construction stages as functions from data to data; only the LLM is called.

Every reply is schema-validated by the client (bounded retries); semantic problems that a
small model makes (an unknown scene id, a turn number out of range) are repaired here the
same way every time, so a resumed build reaches the same result.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime
from collections.abc import Callable, Iterable

from ..encode import Encoder
from ..llm.client import InvalidReply, LLMClient
from ..llm.prompts.item_triggers import (EXAMPLE_BRIDGE, EXAMPLE_CONCEPT, ItemTriggersOut, bridge_retry_messages,
                                         item_trigger_messages)
from ..llm.prompts.items import item_messages, items_schema
from ..llm.prompts.persona import PersonaOut, persona_messages, persona_retry_messages
from ..llm.prompts.scene_card import SceneCard, scene_card_messages
from ..llm.prompts.scene_triggers import (HORIZON_CHANNELS, SceneTriggersOut, horizon_retry_messages,
                                          scene_trigger_messages)
from ..llm.prompts.segment import Boundaries, boundary_messages
from ..llm.prompts.topic import TopicChoice, TopicLabel, choice_messages, new_topic_messages, update_topic_messages
from ..textio import is_iso_datetime
from ..model import HorizonTrigger, Item, ItemTrigger, Scene, Topic, Turn
from . import checks

log = logging.getLogger(__name__)

WINDOW = 12           # new turns shown to the boundary model per call
CONTEXT = 8           # turns of the open scene shown with them
MAX_SCENE_TURNS = 24  # a scene is closed at this length whatever the model says
MIN_SCENE_TURNS = 5   # a boundary the model puts sooner is ignored (small models over-split)
TOPIC_CANDIDATES = 3  # nearest topics a scene is offered
TOPIC_MEMBERS = 3     # a topic's last scenes that count as near (besides its label)
TOPIC_FLOOR = 0.575   # cosine below which a topic is not offered (docs/concepts.md)
MAX_ITEM_TRIGGERS = 3
EARLIER_SCENES = 5     # older scenes of a scene's topics shown to its items call, for connections
PERSONA_WINDOW = 60   # turns per persona update (reference code)
KEPT_SHARE = 0.8      # a statement "kept" from the profile must hold this share of its words


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


def assign_topics(scenes: list[Scene], topics: list[Topic], llm: LLMClient, new_id: Callable[[], str],
                  encoder: Encoder, scene_by_id: dict[str, Scene], names: Iterable[str] = ()) -> list[str]:
    """Admit each scene, in arrival order, to the topic it continues (and at most one more),
    or to a new one. `topics` is updated in place; returns the ids of the topics that changed.

    The model chooses among the TOPIC_CANDIDATES topics nearest to the scene by embedding, or
    "new". A topic's nearness is that of the closest of its last TOPIC_MEMBERS scenes (its label
    only while it has none known), each scene read as its title and summary without the
    speakers' `names`: in a conversation between the same two people every card names both,
    and a label's keywords only grow, so either would make every topic near every scene (one
    topic for all of conv-26). A topic less near than TOPIC_FLOOR is never offered, so a scene
    no topic is close to starts one without a call.
    Repaired the same way every time: an id written loosely (`Topic t3`) is read; one that was
    not offered means "new"; `also` keeps one offered topic other than the choice, and is
    dropped when it names every topic offered (a yes to every topic is not an answer).
    """
    names = list(names)
    vectors = _Vectors(encoder)

    def nearness(line: list[float], topic: Topic) -> float:
        members = [scene_by_id[m] for m in topic.scene_ids[-TOPIC_MEMBERS:] if m in scene_by_id]
        lines = [_scene_line(m, names) for m in members] or [_topic_line(topic, names)]
        return max(_dot(line, vectors(text)) for text in lines)

    touched: list[str] = []
    for scene in scenes:
        line = vectors(_scene_line(scene, names))
        near = sorted(((nearness(line, t), n, t) for n, t in enumerate(topics)), key=lambda x: (-x[0], x[1]))
        offered = [t for score, _, t in near if score >= TOPIC_FLOOR][:TOPIC_CANDIDATES]
        matched = _chosen_topics(scene, offered, llm) if offered else []
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


def _chosen_topics(scene: Scene, offered: list[Topic], llm: LLMClient) -> list[Topic]:
    """The offered topics the model says the scene continues ([] = a new topic)."""
    reply = llm.structured(choice_messages(scene, offered), TopicChoice, stage="topic",
                           what=f"scene {scene.id} vs topics {', '.join(t.id for t in offered)}")
    by_id = {t.id: t for t in offered}
    first = _topic_ref(reply.topic, by_id)
    if first is None:
        return []
    also = [by_id[i] for i in dict.fromkeys(_topic_ref(a, by_id) for a in reply.also) if i and i != first]
    if len(offered) > 1 and 1 + len(also) >= len(offered):
        also = []
    return [by_id[first]] + also[:1]


def _topic_ref(raw: str, by_id: dict[str, Topic]) -> str | None:
    """A topic id as a small model may write it ("t3", "Topic t3", "t3: title") → "t3" if offered."""
    if raw.strip() in by_id:
        return raw.strip()
    m = re.search(r"\bt(\d+)\b", raw.lower())
    return f"t{m.group(1)}" if m and f"t{m.group(1)}" in by_id else None


def _scene_line(scene: Scene, names: list[str]) -> str:
    return checks.without_names(f"{scene.title or ''}. {scene.summary or ''}", names)


def _topic_line(topic: Topic, names: list[str]) -> str:
    return checks.without_names(f"{topic.title or ''}. {', '.join(topic.keywords[:12])}", names)


def _dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b))  # the encoders' vectors are unit length


class _Vectors:
    """Normalised embeddings of short texts, each encoded once."""

    def __init__(self, encoder: Encoder):
        self.encoder, self.memo = encoder, {}

    def __call__(self, text: str) -> list[float]:
        if text not in self.memo:
            self.memo[text] = self.encoder.encode([text])[0]
        return self.memo[text]


def _keywords(old: list[str], new: list[str]) -> list[str]:
    seen = {k.lower() for k in old}
    out = list(old)
    for k in (k.strip() for k in new):
        if k and k.lower() not in seen:
            seen.add(k.lower())
            out.append(k)
    return out


def extract_items(scene: Scene, turns: list[Turn], earlier: list[Scene], llm: LLMClient) -> list[Item]:
    """Atomic and connected items of one new scene (ids left empty for the caller), each with
    the scene's turns it rests on; `earlier` are older scenes of its topics it may connect to.

    Repaired the same way every time: turn numbers outside the scene are ignored; cited turns
    that share no content word with the item are replaced by the scene's turn that shares
    most (if one shares any), so an item never credits turns that do not hold it; an item
    that cites no valid turn and shares no word with any is dropped; earlier scene ids are
    read as `_scene_ref` reads them, and kept only when the item shares a content word with
    the earlier scene's title or summary (speakers' names aside: the 1.5B model connects every
    item to some earlier scene); an item left with none is atomic.
    """
    known = {s.id for s in earlier}
    order = {s.id: n for n, s in enumerate(earlier + [scene])}
    names = {w for t in turns for w in checks.content_words(t.speaker)}
    about = {s.id: checks.content_words(f"{s.title or ''} {s.summary or ''}") - names for s in earlier}

    def related(text: str) -> set[str]:
        """The earlier scenes the item shares a content word with (speakers' names aside)."""
        words = checks.content_words(text) - names
        return {sid for sid, ws in about.items() if words & ws}

    reply = llm.structured(item_messages(scene, turns, earlier), items_schema([s.id for s in earlier]),
                           stage="items", what=f"scene {scene.id}")
    items: list[Item] = []
    seen: set[str] = set()
    for out in reply.items:
        text = out.text.strip()
        cited = source_turns(text, out.turns, turns)
        if not text or text.lower() in seen or not cited:
            continue
        seen.add(text.lower())
        refs = [r for r in (_scene_ref(i, known) for i in out.earlier_scenes) if r and r in related(text)]
        ids = sorted(dict.fromkeys(refs + [scene.id]), key=order.get)
        time = out.time if out.time and is_iso_datetime(out.time) else None
        items.append(Item("", "atomic" if len(ids) == 1 else "connected", text, ids, time,
                          turn_ids=[turns[n - 1].id for n in cited]))
    return items


def source_turns(text: str, numbers: list[int], turns: list[Turn]) -> list[int]:
    """The numbers (1-based, in order) of the turns an item rests on: the cited ones that share
    a content word with it; else the turn sharing most (the earliest of equals); else the
    cited ones as given; [] when none is valid and none shares a word."""
    words = checks.content_words(text)
    cited = sorted({n for n in numbers if 1 <= n <= len(turns)})
    shared = {n: len(words & checks.content_words(turns[n - 1].text)) for n in range(1, len(turns) + 1)}
    supported = [n for n in cited if shared[n]]
    if supported:
        return supported
    best = max(shared, key=lambda n: (shared[n], -n), default=None)
    if best is not None and shared[best]:
        return [best]
    return cited


def _scene_ref(raw: str, known: set[str]) -> str | None:
    """A scene id as a small model may write it ("s3", "scene_s3", "Scene s3", "3") → "s3" if known."""
    if raw in known:
        return raw
    m = re.fullmatch(r"(?:scene)?[\s_:-]*s?(\d+)", raw.strip().lower())
    return f"s{m.group(1)}" if m and f"s{m.group(1)}" in known else None


def item_triggers(item: Item, llm: LLMClient) -> list[ItemTrigger]:
    """Up to three Entity/Bridge triggers of an item.

    A Bridge that restates the item (`checks.copies`) is not a future situation: the model is
    asked once more, told so, and a bridge that still restates it is dropped (its concept kept).
    Triggers that repeat the prompt's worked example, or each other, are dropped."""
    messages = item_trigger_messages(item.text, item.time)
    reply = llm.structured(messages, ItemTriggersOut, stage="item_triggers", what=f"item {item.id}")
    if any(checks.copies(t.bridge, item.text) for t in reply.triggers):
        try:
            reply = llm.structured(bridge_retry_messages(messages, reply.model_dump_json()), ItemTriggersOut,
                                   stage="item_triggers", what=f"item {item.id}, bridges restated it")
        except InvalidReply as exc:   # the first reply stands, its restating bridges dropped
            log.warning("item %s: the bridge re-ask gave no valid reply (%s)", item.id, exc)
    out: list[ItemTrigger] = []
    seen: set[tuple[str, str]] = set()
    for t in reply.triggers:
        bridge = t.bridge.strip() or None
        if checks.copies(bridge, item.text):
            bridge = None
        trig = ItemTrigger(t.concept.strip() or None, bridge, t.rationale.strip() or None)
        key = ((trig.concept or "").lower(), (trig.bridge or "").lower())
        if (trig.concept or trig.bridge) and key not in seen and not _copies_example(trig):
            seen.add(key)
            out.append(trig)
    return out[:MAX_ITEM_TRIGGERS]


def _copies_example(trigger: ItemTrigger) -> bool:
    return any((text or "").strip(" .").lower() in (EXAMPLE_CONCEPT, EXAMPLE_BRIDGE)
               for text in (trigger.concept, trigger.bridge))


def scene_triggers(scene: Scene, turns: list[Turn], llm: LLMClient) -> Scene:
    """The scene with its Scene trigger and Horizon projections filled in.

    A projection that restates the scene (`checks.copies` against its title, summary and
    narrative) is not a future situation: the model is asked once more, told which channels
    did, and each channel keeps the first of its two projections that does not restate the
    scene, or none. The Scene trigger attributes describe the scene itself and are kept from
    the first reply."""
    messages = scene_trigger_messages(turns)
    reply = llm.structured(messages, SceneTriggersOut, stage="scene_triggers", what=f"scene {scene.id}")
    scene.scene_trigger = {k: v.strip() for k, v in
                           (("situation", reply.situation), ("object", reply.object),
                            ("event", reply.event), ("emotion", reply.emotion)) if v and v.strip()}
    host = " ".join(filter(None, (scene.title, scene.summary, scene.narrative)))
    first = _projections(reply)
    copied = [ch for ch, text in first.items() if checks.copies(text, host)]
    again: dict[str, str] = {}
    if copied:
        try:
            again = _projections(llm.structured(horizon_retry_messages(messages, reply.model_dump_json(), copied),
                                                SceneTriggersOut, stage="scene_triggers",
                                                what=f"scene {scene.id}, look-ahead restated it ({', '.join(copied)})"))
        except InvalidReply as exc:   # the first reply stands, its restating channels dropped
            log.warning("scene %s: the look-ahead re-ask gave no valid reply (%s)", scene.id, exc)
    scene.horizon = []
    for ch in HORIZON_CHANNELS:
        text = next((t for t in (first.get(ch), again.get(ch)) if t and not checks.copies(t, host)), None)
        if text:
            scene.horizon.append(HorizonTrigger(ch, text))
    return scene


def _projections(reply: SceneTriggersOut) -> dict[str, str]:
    """The non-empty Horizon projections of a reply, by channel."""
    horizon = reply.horizon.model_dump()
    return {ch: horizon[ch].strip() for ch in HORIZON_CHANNELS
            if horizon.get(ch) and horizon[ch].strip() and not _is_null(horizon[ch])}


def _is_null(text: str) -> bool:
    return bool(re.fullmatch(r"\s*(null|none|n/?a|-)\s*\.?\s*", text, re.IGNORECASE))


def persona(speaker: str, current: str | None, turns: list[Turn], llm: LLMClient, encoder: Encoder,
            names: list[str] = ()) -> str:
    """The speaker's persona after the new turns, updated window by window: the statements
    `persona_statements` keeps, joined. A reply that copies lines of the dialogue (the 1.5B
    model may return the transcript itself, "Ana: I finally booked the cooking class …") is
    asked once more, told to write facts about the speaker in the third person; the statements
    the second reply's checks keep come first, then those of the first reply it lacks."""
    summary = current
    for start in range(0, len(turns), PERSONA_WINDOW):
        window = turns[start:start + PERSONA_WINDOW]
        what = f"{speaker}, turns {window[0].id}..{window[-1].id}"
        messages = persona_messages(speaker, summary, window)
        reply = llm.structured(messages, PersonaOut, stage="persona", what=what)
        kept = persona_statements(reply.statements, summary, window, encoder, names, speaker)
        if any(checks.in_dialogue_voice(text) for st in reply.statements for text in split_sentences(st.text)):
            try:   # lines copied from the dialogue: asked once more, told so
                again = llm.structured(persona_retry_messages(messages, speaker), PersonaOut, stage="persona",
                                       what=f"{what}, lines of the dialogue")
                kept = merge_statements(persona_statements(again.statements, summary, window, encoder, names, speaker),
                                        kept)
            except InvalidReply as exc:   # the first reply's statements stand
                log.warning("persona of %s: the re-ask gave no valid reply (%s)", speaker, exc)
        summary = " ".join(kept) or summary
    return summary or ""


def merge_statements(first: list[str], extra: list[str]) -> list[str]:
    """`first`, then each statement of `extra` whose words `first` does not already hold
    (KEPT_SHARE of its content words in one statement)."""
    out = list(first)
    for text in extra:
        if not any(checks.share_in(text, o) >= KEPT_SHARE for o in out):
            out.append(text)
    return out


def persona_statements(statements, current: str | None, window: list[Turn], encoder: Encoder,
                       names: list[str] = (), speaker: str | None = None) -> list[str]:
    """The statements of a persona reply that rest on something, in order, each once.

    A reply's statement of several sentences is read as one statement per sentence (the 1.5B
    model writes the whole profile as one, citing nothing). A statement is kept when a turn of
    the window supports it (`checks.supports`; the turns it cites are not trusted: small models
    cite none, or the wrong ones) and, with `speaker`, the turn is the speaker's own, read with
    the turn it answers (Ana's "Yes, although I will skip the oysters" answers Ben's "Is it the
    one with the seafood market tour?"; Ana's "I can lend you my car" says nothing of Ben's
    car), or else when the current profile already holds it
    (KEPT_SHARE of its words). Invented facts (an age, a job, a hobby nobody mentioned) have no
    turn behind them. A sentence of fewer than two content words (names aside) says nothing
    and is dropped, and so is one in the dialogue's voice (`checks.in_dialogue_voice`: a
    question, or in the first or second person), a line copied from the conversation, and one
    whose subject is another speaker of `names` ("Ben asked for photos." in Ana's profile), or
    that holds a number no turn of the window says (`checks.invented_numbers`)."""
    sentences = [text for st in statements for text in split_sentences(st.text)]
    if not sentences:
        return []
    vectors = encoder.encode(sentences + [t.text for t in window])
    turn_vectors = vectors[len(sentences):]
    name_words = {w for n in names for w in checks.content_words(n)}
    out: list[str] = []
    for text, vector in zip(sentences, vectors):
        if text.lower() in (o.lower() for o in out) or len(checks.content_words(text) - name_words) < 2:
            continue  # a repeat, or a fragment of a cut reply ("They have a shared.")
        if checks.in_dialogue_voice(text):
            continue  # a line of the dialogue ("What's your plan to pitch in?"), not a statement
        if speaker and checks.about_another(text, speaker, names):
            continue  # a statement about the other speaker
        if checks.invented_numbers(text, " ".join(t.text for t in window)):
            continue  # a number no turn says ("... to take things to the 20."): garbled or made up
        cos = [_dot(vector, tv) for tv in turn_vectors]
        supported = [n for n in range(len(window)) if (speaker is None or window[n].speaker == speaker)
                     and checks.supports(text, _in_reply_to(window, n), cos[n], names)]
        if supported or (current and checks.share_in(text, current) >= KEPT_SHARE):
            out.append(text)
    return out


def _in_reply_to(window: list[Turn], n: int) -> str:
    """Turn `n`'s text after the turn before it, which it may answer."""
    return f"{window[n - 1].text} {window[n].text}" if n else window[n].text


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, each ending with its stop (one added when missing)."""
    parts = [p.strip() for p in re.split(r"(?<=[.!?])\s+", text.strip()) if p.strip()]
    return [p if p.endswith((".", "!", "?")) else p + "." for p in parts]
