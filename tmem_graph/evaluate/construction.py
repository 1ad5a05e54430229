"""Construction metrics, LLM-free (`tmem eval construction`): what a build wrote, measured
against LoCoMo's own references (`observation`: per session and speaker, facts with the
`dia_id`s that support them) and against the memory's turns.

- observation coverage: the share of observations that some item covers: the item's source
  turns hold one of the observation's evidence turns and its text is close to the
  observation's (cosine >= OBSERVATION_COSINE by the default encoder, whichever encoder
  built the memory: the thresholds were set with it, and builds compare alike). An item's source
  turns are the turns it was distilled from (`turn_ids`); an item without them (older builds)
  counts every turn of its scenes, and the report says how many items did so.
- items per session and per 100 turns, and the sessions left without any item;
- topics: how many, per 10 scenes, and the largest topic's share of the scenes;
- scene lengths (turns per scene);
- persona statements (the personas' sentences) supported by a turn of the memory, the
  speaker's or another's ("congratulations on the adoption, Caroline")
  (`construct.checks.supports`: the turn is close to the statement, or holds most of its words),
  and the share in the dialogue's voice (`construct.checks.in_dialogue_voice`: questions and
  first- or second-person lines, copied from a turn and so "supported" word for word);
- trigger copies: Bridge and Horizon views whose content words are mostly their host's
  (`construct.checks.copies`: the item's text for a Bridge, the scene's title, summary and
  narrative for a Horizon projection); these two name a future situation, so a copy fails
  them (`forward`, the issue's target). Scene-trigger attributes describe their scene by
  design and Entity concepts name their item: the Scene share is shown, not targeted, and
  concepts are not counted.

Only the sample's own turns are measured (cue dialogues stitched in by LoCoMo-Plus are not),
and only the scenes, items and topics that hold them; persona statements, which any turn of
the memory may support, are checked against all of them.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

from ..construct.checks import content_words, copies, in_dialogue_voice, supports
from ..encode import Encoder
from ..model import MemoryDoc
from ..triggers import HORIZON, SCENE
from .data import EvidenceRepairs, repair_evidence

OBSERVATION_COSINE = 0.5   # an item this close to an observation (and on its evidence) covers it


@dataclass
class Observation:
    session: int
    speaker: str
    text: str
    evidence: list[str]


def observations(sample: dict, sessions: int | None, repairs: EvidenceRepairs) -> list[Observation]:
    """LoCoMo's observations of sessions 1..`sessions` (all when None), evidence ids repaired."""
    out = []
    for key, by_speaker in (sample.get("observation") or {}).items():
        m = re.fullmatch(r"session_(\d+)_observation", key)
        if not m or (sessions is not None and int(m.group(1)) > sessions):
            continue
        for speaker, facts in (by_speaker or {}).items():
            for fact in facts or []:
                if not isinstance(fact, list) or len(fact) < 2 or not isinstance(fact[0], str):
                    continue
                raw = fact[1] if isinstance(fact[1], list) else [fact[1]]
                evidence = repair_evidence(raw, repairs)
                if evidence:
                    out.append(Observation(int(m.group(1)), speaker, fact[0], evidence))
    return sorted(out, key=lambda o: o.session)


def sample_turn_ids(sample: dict, sessions: int | None) -> set[str]:
    """The dia_ids of the sample's turns in sessions 1..`sessions`."""
    ids = set()
    for key, turns in (sample.get("conversation") or {}).items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(turns, list) and (sessions is None or int(m.group(1)) <= sessions):
            ids |= {t["dia_id"] for t in turns if isinstance(t, dict) and "dia_id" in t}
    return ids


def _cosines(encoder: Encoder, left: list[str], right: list[str]) -> list[list[float]]:
    if not left or not right:
        return [[0.0] * len(right) for _ in left]
    vectors = encoder.encode(left + right)
    a, b = vectors[:len(left)], vectors[len(left):]
    return [[sum(x * y for x, y in zip(u, v)) for v in b] for u in a]


def _statements(summary: str) -> list[str]:
    """A persona summary's sentences (a statement each)."""
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", summary or "") if len(content_words(s)) >= 2]


def measure(doc: MemoryDoc, sample: dict, sessions: int | None, encoder: Encoder) -> dict:
    """Every construction metric of `doc`, built from `sample` (its sessions 1..`sessions`)."""
    own = sample_turn_ids(sample, sessions) & {t.id for t in doc.turns}
    turns = [t for t in doc.turns if t.id in own]
    session_of = {t.id: t.session for t in turns}
    scenes = [s for s in doc.scenes if own & set(s.turn_ids)]
    scene_ids = {s.id for s in scenes}
    scene_turns = {s.id: s.turn_ids for s in doc.scenes}
    items = [i for i in doc.items if scene_ids & set(i.scene_ids)]
    sources = {i.id: (set(i.turn_ids) if i.turn_ids else {t for s in i.scene_ids for t in scene_turns.get(s, [])})
               for i in items}
    repairs = EvidenceRepairs()
    obs = [o for o in observations(sample, sessions, repairs) if set(o.evidence) & own]
    out: dict = {"turns": len(turns), "sessions": len({session_of[t] for t in own}), "scenes": len(scenes),
                 "items": len(items), "items_without_turn_ids": sum(1 for i in items if not i.turn_ids),
                 "observations": len(obs), "evidence_repairs": vars(repairs)}

    # observation coverage: by the items' own source turns, and by their scenes' turns (the
    # only rule for builds without turn_ids, so two builds compare on it whatever they recorded)
    by_scene = {i.id: {t for s in i.scene_ids for t in scene_turns.get(s, [])} for i in items}
    close = _cosines(encoder, [o.text for o in obs], [i.text for i in items])
    out["observation_coverage"] = _share(_covered(obs, items, sources, close), len(obs))
    out["observation_coverage_by_scene"] = _share(_covered(obs, items, by_scene, close), len(obs))
    out["observation_evidence_only"] = _share(   # some item on its evidence, whatever it says
        sum(1 for o in obs if any(sources[i.id] & set(o.evidence) for i in items)), len(obs))
    out["observation_text_only"] = _share(       # some item close to its text, wherever it comes from
        sum(1 for row in close if any(c >= OBSERVATION_COSINE for c in row)), len(obs))

    # items per session
    first_session = {i.id: min((session_of[t] for t in sources[i.id] if t in session_of), default=None)
                     for i in items}
    per_session = {s: 0 for s in sorted({session_of[t] for t in own})}
    for i in items:
        if first_session[i.id] is not None:
            per_session[first_session[i.id]] += 1
    out["items_per_session"] = per_session
    out["sessions_without_items"] = [s for s, n in per_session.items() if n == 0]
    out["items_per_100_turns"] = round(100 * len(items) / len(turns), 1) if turns else None

    # topics and scenes
    sizes = [len(scene_ids & set(t.scene_ids)) for t in doc.topics]
    sizes = [n for n in sizes if n]
    out["topics"] = len(sizes)
    out["topics_per_10_scenes"] = round(10 * len(sizes) / len(scenes), 2) if scenes else None
    out["largest_topic_share"] = _share(max(sizes, default=0), len(scenes))
    out["scenes_in_several_topics"] = _share(
        sum(1 for s in scenes if sum(s.id in t.scene_ids for t in doc.topics) > 1), len(scenes))
    lengths = [len(s.turn_ids) for s in scenes]
    out["scene_turns"] = ({"mean": round(statistics.mean(lengths), 2), "median": statistics.median(lengths),
                           "min": min(lengths), "max": max(lengths),
                           "at_most_5": _share(sum(n <= 5 for n in lengths), len(lengths))} if lengths else {})

    # personas
    statements = [(p.speaker, s) for p in doc.personas for s in _statements(p.summary)]
    speakers = list(doc.speakers)
    supported = 0
    every = list(doc.turns)   # a statement may rest on any turn of the memory, its own or another's
    close = _cosines(encoder, [text for _, text in statements], [t.text for t in every])  # every turn encoded once
    for (_, text), row in zip(statements, close):
        supported += any(supports(text, t.text, c, speakers) for c, t in zip(row, every))
    out["persona_statements"] = len(statements)
    out["persona_supported"] = _share(supported, len(statements))
    # lines of the dialogue copied into a persona: supported word for word, saying nothing about the speaker
    out["persona_dialogue_voice"] = _share(sum(in_dialogue_voice(text) for _, text in statements), len(statements))

    # trigger copies
    scene_text = {s.id: " ".join(filter(None, (s.title, s.summary, s.narrative))) for s in scenes}
    families = {"bridge": [copies(t.bridge, i.text) for i in items for t in i.triggers if t.bridge],
                HORIZON.key: [copies(h.text, scene_text[s.id]) for s in scenes for h in s.horizon],
                SCENE.key: [copies(v, scene_text[s.id]) for s in scenes for v in s.scene_trigger.values() if v]}
    out["trigger_copies"] = {k: _share(sum(v), len(v)) for k, v in families.items()}
    forward = families["bridge"] + families[HORIZON.key]
    out["trigger_copies"]["forward"] = _share(sum(forward), len(forward))
    every = [c for v in families.values() for c in v]
    out["trigger_views_checked"] = len(every)
    return out


def _covered(obs: list[Observation], items: list, sources: dict[str, set[str]], close: list[list[float]]) -> int:
    """How many observations some item covers: on one of its evidence turns, and close to its text."""
    return sum(1 for o, row in zip(obs, close)
               if any(row[n] >= OBSERVATION_COSINE and sources[i.id] & set(o.evidence) for n, i in enumerate(items)))


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


ROWS = [("observation coverage", "observation_coverage"),
        ("  by the items' scenes' turns", "observation_coverage_by_scene"), ("  items on the evidence", "observation_evidence_only"),
        ("  items close to the text", "observation_text_only"), ("items per 100 turns", "items_per_100_turns"),
        ("sessions without items", "sessions_without_items"), ("topics", "topics"),
        ("topics per 10 scenes", "topics_per_10_scenes"), ("largest topic's share of scenes", "largest_topic_share"),
        ("scenes in several topics", "scenes_in_several_topics"), ("scenes", "scenes"),
        ("turns per scene (mean)", ("scene_turns", "mean")), ("persona statements", "persona_statements"),
        ("persona statements supported", "persona_supported"),
        ("persona statements in the dialogue's voice (questions, I/you)", "persona_dialogue_voice"), ("trigger copies (Bridge and Horizon)", ("trigger_copies", "forward")),
        ("  Bridge", ("trigger_copies", "bridge")), ("  Horizon", ("trigger_copies", HORIZON.key)),
        ("  Scene attributes (describe by design)", ("trigger_copies", SCENE.key)), ("items", "items"),
        ("items without turn_ids (scene turns used)", "items_without_turn_ids"), ("observations", "observations")]


def _value(result: dict, key) -> object:
    if isinstance(key, tuple):
        return (result.get(key[0]) or {}).get(key[1])
    return result.get(key)


def markdown(results: dict[str, dict]) -> str:
    """One column per memory, one row per metric."""
    names = list(results)
    lines = ["| metric | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for label, key in ROWS:
        cells = []
        for name in names:
            v = _value(results[name], key)
            cells.append(", ".join(map(str, v)) or "none" if isinstance(v, list) else "-" if v is None else str(v))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
