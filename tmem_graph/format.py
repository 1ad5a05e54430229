"""The `tmem-memory/1` interchange format: validation, parsing and serialisation.

`parse_document` checks every rule of `shared/spec/memory-format.md` before anything is
written and reports each violation with the path of the offending object, e.g.
`items[12].scene_ids[0]: no scene "s99"`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .errors import ValidationError
from .textio import is_iso_datetime, parse_json, read_text, value_problems
from .model import (
    SCENE_ATTRIBUTES,
    HorizonTrigger,
    Item,
    ItemTrigger,
    MemoryDoc,
    Persona,
    Scene,
    Topic,
    Turn,
)

FORMAT = "tmem-memory/1"
MEMORY_ID_RE = re.compile(r"[A-Za-z0-9_.:\-]{1,128}")   # whole string: fullmatch (`$` would accept a final newline)
MAX_TURNS = 1_000_000
MAX_TEXT_BYTES = 32 * 1024
MAX_ID_CHARS = 256     # ids and speaker names are indexed: Neo4j refuses index keys over ~8 KB
MAX_NAME_CHARS = 256

_TOP_KEYS = {"format", "memory_id", "speakers", "turns", "scenes", "topics", "items", "personas"}
_KEYS = {
    "turns": {"id", "speaker", "text", "time", "session"},
    "scenes": {"id", "title", "summary", "narrative", "turn_ids", "time", "triggers"},
    "topics": {"id", "title", "keywords", "summary", "scene_ids"},
    "items": {"id", "kind", "text", "scene_ids", "time", "triggers", "turn_ids"},
    "personas": {"speaker", "summary"},
}


def _q(value: Any) -> str:
    """A value quoted as in JSON, for messages."""
    return json.dumps(value, ensure_ascii=False)


def check_memory_id(memory_id: Any, where: str = "memory_id") -> str:
    """Return `memory_id` if it is valid, else raise ValidationError naming `where`."""
    if not isinstance(memory_id, str) or not MEMORY_ID_RE.fullmatch(memory_id):
        raise ValidationError([
            f"{where}: {memory_id!r} is not a valid memory id "
            "(1-128 letters, digits, '-', '_', '.', ':')"
        ])
    return memory_id


class _Checker:
    """Collects every problem of a document, each prefixed with its path."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.warnings: list[str] = []

    def fail(self, path: str, message: str) -> None:
        self.problems.append(f"{path}: {message}")

    def keys(self, obj: dict, allowed: set[str], path: str) -> None:
        for key in sorted(set(obj) - allowed):
            self.warnings.append(f"{path}: unknown key {key!r} ignored")

    def text(self, obj: dict, key: str, path: str, required: bool = False) -> str | None:
        value = obj.get(key)
        if value is None:
            if required:
                self.fail(f"{path}.{key}", "missing")
            return None
        if not isinstance(value, str):
            self.fail(f"{path}.{key}", f"must be a string, not {type(value).__name__}")
            return None
        if required and not value.strip():
            self.fail(f"{path}.{key}", "must not be empty")
        if len(value.encode("utf-8")) > MAX_TEXT_BYTES:
            self.fail(f"{path}.{key}", f"longer than the limit of {MAX_TEXT_BYTES} bytes")
        return value or None

    def time(self, obj: dict, path: str) -> str | None:
        value = self.text(obj, "time", path)
        if value is not None and not is_iso_datetime(value):
            self.fail(f"{path}.time", f"{value!r} is not an ISO 8601 date-time")
        return value

    def ident(self, obj: dict, path: str, seen: set[str], kind: str) -> str | None:
        value = obj.get("id")
        if not isinstance(value, str) or not value:
            self.fail(f"{path}.id", "must be a non-empty string")
            return None
        if len(value) > MAX_ID_CHARS:
            self.fail(f"{path}.id", f"longer than {MAX_ID_CHARS} characters")
            return None
        if value in seen:
            self.fail(f"{path}.id", f"duplicate {kind} id {_q(value)}")
        seen.add(value)
        return value

    def objects(self, doc: dict, key: str) -> list[tuple[str, dict]]:
        value = doc.get(key, [])
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(key, f"must be a list, not {type(value).__name__}")
            return []
        out = []
        for n, obj in enumerate(value):
            path = f"{key}[{n}]"
            if not isinstance(obj, dict):
                self.fail(path, f"must be an object, not {type(obj).__name__}")
                continue
            self.keys(obj, _KEYS[key], path)
            out.append((path, obj))
        return out

    def id_list(self, obj: dict, key: str, path: str, known: dict[str, int], kind: str) -> list[str]:
        value = obj.get(key)
        if not isinstance(value, list):
            self.fail(f"{path}.{key}", "must be a list of ids" if value is not None else "missing")
            return []
        ids = []
        for n, ref in enumerate(value):
            where = f"{path}.{key}[{n}]"
            if not isinstance(ref, str):
                self.fail(where, "must be a string id")
            elif ref not in known:
                self.fail(where, f"no {kind} {_q(ref)}")
            elif ref in ids:
                self.fail(where, f"{kind} {_q(ref)} listed twice")
            else:
                ids.append(ref)
        return ids


def parse_document(doc: Any) -> tuple[MemoryDoc, list[str]]:
    """Validate a decoded `tmem-memory/1` document; return the memory and the warnings.

    Raises ValidationError listing every problem found; nothing is returned partially.
    """
    if not isinstance(doc, dict):
        raise ValidationError([f"document: must be a JSON object, not {type(doc).__name__}"])
    unstorable = value_problems(doc)
    if unstorable:  # before any rule: the rules below may assume storable values
        raise ValidationError(unstorable)
    c = _Checker()
    c.keys(doc, _TOP_KEYS, "document")
    if doc.get("format") != FORMAT:
        c.fail("format", f"must be {FORMAT!r}, not {doc.get('format')!r}")
    memory_id = doc.get("memory_id")
    if not isinstance(memory_id, str) or not MEMORY_ID_RE.fullmatch(memory_id):
        c.fail("memory_id", f"{memory_id!r} is not a valid memory id "
                            "(1-128 letters, digits, '-', '_', '.', ':')")

    speakers = doc.get("speakers", [])
    if not isinstance(speakers, list) or not all(isinstance(s, str) and s for s in speakers):
        c.fail("speakers", "must be a list of non-empty names")
        speakers = []
    elif any(len(s) > MAX_NAME_CHARS for s in speakers):
        c.fail("speakers", f"a name is longer than {MAX_NAME_CHARS} characters")
    elif len(set(speakers)) != len(speakers):
        c.fail("speakers", "a name is listed twice")

    turns = _parse_turns(c, doc, set(speakers))
    turn_pos = {t.id: n for n, t in enumerate(turns)}
    scenes = _parse_scenes(c, doc, turn_pos)
    scene_pos = {s.id: n for n, s in enumerate(scenes)}
    topics = _parse_topics(c, doc, scene_pos)
    items = _parse_items(c, doc, scene_pos, {t: s.id for s in scenes for t in s.turn_ids})
    personas = _parse_personas(c, doc, set(speakers))

    if c.problems:
        raise ValidationError(c.problems)
    memory = MemoryDoc(memory_id, list(speakers), turns, scenes, topics, items, personas)
    return memory, c.warnings


def _parse_turns(c: _Checker, doc: dict, speakers: set[str]) -> list[Turn]:
    if isinstance(doc.get("turns"), list) and len(doc["turns"]) > MAX_TURNS:
        c.fail("turns", f"{len(doc['turns'])} turns exceed the limit of {MAX_TURNS}")
        return []
    raw = c.objects(doc, "turns")
    seen: set[str] = set()
    turns = []
    for path, obj in raw:
        tid = c.ident(obj, path, seen, "turn")
        speaker = obj.get("speaker")
        if not isinstance(speaker, str) or speaker not in speakers:
            c.fail(f"{path}.speaker", f"{speaker!r} is not listed in speakers")
        text = c.text(obj, "text", path, required=True)
        time = c.time(obj, path)
        session = obj.get("session")
        if session is not None and (not isinstance(session, int) or isinstance(session, bool)):
            c.fail(f"{path}.session", f"must be an integer, not {session!r}")
            session = None
        if tid is not None:
            turns.append(Turn(tid, speaker, text or "", time, session))
    return turns


def _parse_scenes(c: _Checker, doc: dict, turn_pos: dict[str, int]) -> list[Scene]:
    seen: set[str] = set()
    owner: dict[str, str] = {}
    scenes = []
    for path, obj in c.objects(doc, "scenes"):
        sid = c.ident(obj, path, seen, "scene")
        turn_ids = c.id_list(obj, "turn_ids", path, turn_pos, "turn")
        if isinstance(obj.get("turn_ids"), list) and not obj["turn_ids"]:
            c.fail(f"{path}.turn_ids", "must name at least one turn")
        positions = [turn_pos[t] for t in turn_ids]
        if positions != sorted(positions):
            c.fail(f"{path}.turn_ids", "turns are not in conversation order")
        for n, tid in enumerate(turn_ids):
            if tid in owner:
                c.fail(f"{path}.turn_ids[{n}]", f"turn {_q(tid)} already belongs to scene {_q(owner[tid])}")
            else:
                owner[tid] = sid or path
        scene = Scene(
            id=sid or "",
            turn_ids=turn_ids,
            title=c.text(obj, "title", path),
            summary=c.text(obj, "summary", path),
            narrative=c.text(obj, "narrative", path),
            time=c.time(obj, path),
        )
        _parse_scene_triggers(c, obj.get("triggers"), f"{path}.triggers", scene)
        if sid is not None:
            scenes.append(scene)
    return scenes


def _parse_scene_triggers(c: _Checker, trig: Any, path: str, scene: Scene) -> None:
    if trig is None:
        return
    if not isinstance(trig, dict):
        c.fail(path, "must be an object with 'scene' and 'horizon'")
        return
    c.keys(trig, {"scene", "horizon"}, path)
    attrs = trig.get("scene")
    if attrs is not None:
        if not isinstance(attrs, dict):
            c.fail(f"{path}.scene", "must be an object of situation/object/event/emotion")
        else:
            c.keys(attrs, set(SCENE_ATTRIBUTES), f"{path}.scene")
            for attr in SCENE_ATTRIBUTES:
                value = c.text(attrs, attr, f"{path}.scene")
                if value:
                    scene.scene_trigger[attr] = value
    horizon = trig.get("horizon")
    if horizon is None:
        return
    if not isinstance(horizon, list):
        c.fail(f"{path}.horizon", "must be a list of {channel, text}")
        return
    for n, h in enumerate(horizon):
        where = f"{path}.horizon[{n}]"
        if not isinstance(h, dict):
            c.fail(where, "must be an object with 'channel' and 'text'")
            continue
        c.keys(h, {"channel", "text"}, where)
        channel = c.text(h, "channel", where, required=True)
        text = c.text(h, "text", where, required=True)
        if channel and text:
            scene.horizon.append(HorizonTrigger(channel, text))


def _parse_topics(c: _Checker, doc: dict, scene_pos: dict[str, int]) -> list[Topic]:
    seen: set[str] = set()
    topics = []
    for path, obj in c.objects(doc, "topics"):
        tid = c.ident(obj, path, seen, "topic")
        scene_ids = c.id_list(obj, "scene_ids", path, scene_pos, "scene")
        if isinstance(obj.get("scene_ids"), list) and not obj["scene_ids"]:
            c.fail(f"{path}.scene_ids", "must name at least one scene")
        keywords = obj.get("keywords") or []
        if not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
            c.fail(f"{path}.keywords", "must be a list of strings")
            keywords = []
        elif sum(len(k.encode("utf-8")) for k in keywords) > 32 * 1024:
            c.fail(f"{path}.keywords", "longer than the limit of 32768 bytes")
        topic = Topic(tid or "", scene_ids, c.text(obj, "title", path), list(keywords),
                      c.text(obj, "summary", path))
        if tid is not None:
            topics.append(topic)
    return topics


def _parse_items(c: _Checker, doc: dict, scene_pos: dict[str, int], scene_of: dict[str, str]) -> list[Item]:
    seen: set[str] = set()
    items = []
    for path, obj in c.objects(doc, "items"):
        iid = c.ident(obj, path, seen, "item")
        kind = obj.get("kind")
        scene_ids = c.id_list(obj, "scene_ids", path, scene_pos, "scene")
        given = obj["scene_ids"] if isinstance(obj.get("scene_ids"), list) else []
        if kind == "atomic" and len(given) != 1:
            c.fail(f"{path}.scene_ids", "an atomic item has exactly one scene id")
        elif kind == "connected" and len(given) < 2:
            c.fail(f"{path}.scene_ids", "a connected item has two or more scene ids")
        elif kind not in ("atomic", "connected"):
            c.fail(f"{path}.kind", f"must be 'atomic' or 'connected', not {kind!r}")
        text = c.text(obj, "text", path, required=True)
        item = Item(iid or "", kind, text or "", scene_ids, c.time(obj, path))
        if obj.get("turn_ids") is not None:  # optional: the turns it was distilled from
            item.turn_ids = c.id_list(obj, "turn_ids", path, scene_of, "turn in a scene")
            for n, tid in enumerate(item.turn_ids):
                if scene_of[tid] not in scene_ids:
                    c.fail(f"{path}.turn_ids[{n}]", f"turn {_q(tid)} is in scene {_q(scene_of[tid])}, "
                                                    "not one of the item's scenes")
        triggers = obj.get("triggers")
        if triggers is not None and not isinstance(triggers, list):
            c.fail(f"{path}.triggers", "must be a list of {concept, bridge, rationale}")
        for n, trig in enumerate(triggers or []):
            where = f"{path}.triggers[{n}]"
            if not isinstance(trig, dict):
                c.fail(where, "must be an object with 'concept', 'bridge', 'rationale'")
                continue
            c.keys(trig, {"concept", "bridge", "rationale"}, where)
            t = ItemTrigger(c.text(trig, "concept", where), c.text(trig, "bridge", where),
                            c.text(trig, "rationale", where))
            if t.joint():
                item.triggers.append(t)
            else:
                c.warnings.append(f"{where}: empty trigger ignored")
        if iid is not None:
            items.append(item)
    return items


def _parse_personas(c: _Checker, doc: dict, speakers: set[str]) -> list[Persona]:
    personas = []
    seen: set[str] = set()
    for path, obj in c.objects(doc, "personas"):
        speaker = obj.get("speaker")
        if not isinstance(speaker, str) or speaker not in speakers:
            c.fail(f"{path}.speaker", f"{speaker!r} is not listed in speakers")
            continue
        if speaker in seen:
            c.fail(f"{path}.speaker", f"a persona for {speaker!r} is given twice")
        seen.add(speaker)
        summary = c.text(obj, "summary", path, required=True)
        personas.append(Persona(speaker, summary or ""))
    return personas


def to_document(memory: MemoryDoc) -> dict:
    """Serialise a memory as a `tmem-memory/1` document; absent optional fields are omitted."""

    def compact(d: dict) -> dict:
        return {k: v for k, v in d.items() if v not in (None, "", [], {})}

    scenes = []
    for s in memory.scenes:
        triggers = compact({
            "scene": {a: s.scene_trigger[a] for a in SCENE_ATTRIBUTES if s.scene_trigger.get(a)},
            "horizon": [{"channel": h.channel, "text": h.text} for h in s.horizon],
        })
        scenes.append(compact({
            "id": s.id, "title": s.title, "summary": s.summary, "narrative": s.narrative,
            "turn_ids": s.turn_ids, "time": s.time, "triggers": triggers,
        }))
    return {
        "format": FORMAT,
        "memory_id": memory.memory_id,
        "speakers": memory.speakers,
        "turns": [compact({"id": t.id, "speaker": t.speaker, "text": t.text, "time": t.time,
                           "session": t.session}) for t in memory.turns],
        "scenes": scenes,
        "topics": [compact({"id": t.id, "title": t.title, "keywords": t.keywords,
                            "summary": t.summary, "scene_ids": t.scene_ids}) for t in memory.topics],
        "items": [
            compact({
                "id": i.id, "kind": i.kind, "text": i.text, "scene_ids": i.scene_ids, "time": i.time,
                "triggers": [compact({"concept": t.concept, "bridge": t.bridge,
                                      "rationale": t.rationale}) for t in i.triggers],
                "turn_ids": i.turn_ids,
            })
            for i in memory.items
        ],
        "personas": [{"speaker": p.speaker, "summary": p.summary} for p in memory.personas],
    }


def load_file(path: str | Path) -> tuple[MemoryDoc, list[str]]:
    """Read and validate a `tmem-memory/1` JSON file."""
    return parse_document(parse_json(read_text(path), path))
