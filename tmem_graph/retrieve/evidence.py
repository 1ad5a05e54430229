"""Evidence handed to the answer model: recalled scenes (with their raw, timestamped turns),
items, the matching turns no scene holds yet (in conversation order), then the persona of the
speakers, outside the ranked budget (paper §3.4). The packer (pack.py) prices evidence with
the same line renderers, so a packed recall renders exactly what it paid for.

Times are written for reading, not parsing: a scene's header gives its day and minute
("8 May 2023, 13:56"), its turns only a day that differs from the header's, a turn listed on
its own the day of its group ("On 8 May 2023:"), an item its day, a recent turn its day and
minute. An ISO stamp costs a tokenizer about three times the tokens
of the same day in words (docs/design-and-evidence.md), and an answer model
asked "when" answers in words."""

from __future__ import annotations

import re
from datetime import datetime

from ..words import content_words
from .results import Recall, RecalledItem, RecalledScene, RecalledTurn

SCENES_HEADING = "## Relevant scenes"
ITEMS_HEADING = "## Relevant items"
RECENT_HEADING = "## Recent conversation (not yet organised into scenes)"
LANE_HEADING = "## Other turns that match"
CUE_HEADING = "## Earlier moments that may bear on this"
LISTED = {"cue": CUE_HEADING, "turns": LANE_HEADING}  # a packed scene's lane -> its turns' own heading
# the lanes whose turns are listed in the recall's order, each with its day (`pointer_line`), not
# grouped by day in time order: a reader uses a pointer at the head of the list far more often
# than one in the middle (docs/evaluation.md, "Where the cue stands")
RANKED = ("cue",)
ASSOCIATIVE = ("associative", "cue")   # reached by the triggers: the lanes fusion's lane, the associative pass


def opening(speakers: list[str]) -> str:
    return f"Memories from conversations between {' and '.join(speakers) if speakers else 'the speakers'}:"


def _parsed(stamp: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(stamp) if stamp else None
    except ValueError:  # not ISO 8601 (stored before times were checked): written as it is
        return None


def day(stamp: str | None) -> str | None:
    """"8 May 2023" for an ISO 8601 stamp; the stamp itself when it does not parse."""
    when = _parsed(stamp)
    return f"{when.day} {when:%B %Y}" if when else stamp


def moment(stamp: str | None) -> str | None:
    """"8 May 2023, 13:56" (the day alone at midnight); the stamp itself when it does not parse."""
    when = _parsed(stamp)
    if when is None:
        return stamp
    return day(stamp) if (when.hour, when.minute) == (0, 0) else f"{day(stamp)}, {when:%H:%M}"


def scene_header(n: int, scene: RecalledScene) -> list[str]:
    """A scene's first lines: its title and time (an excerpt's day alone: the minute costs four
    tokens and its turns are one exchange), and its summary unless it is an excerpt."""
    when = day(scene.time) if scene.excerpt else moment(scene.time)
    lines = [f"[Scene {n}] {scene.title or ''} ({when or 'time unknown'})".replace("  ", " ")]
    if scene.summary and not scene.excerpt:
        lines.append(f"  Summary: {scene.summary}")
    return lines


def lane_only(scene: RecalledScene) -> bool:
    """A packed scene that the turn lane or the associative pass opened: its turns are listed
    on their own under the lane's heading (`LISTED`), grouped by day, without the scene's
    header (a header costs two thirds of a turn)."""
    return scene.excerpt and scene.lane in LISTED


def turn_line(turn: dict, scene_time: str | None = None) -> str:
    """A scene's turn: its day only when it is not the day of its scene's header."""
    when = day(turn.get("time"))
    stamp = f" [{when}]" if when and when != day(scene_time) else ""
    return f"  {turn['speaker']}{stamp}: {turn['text']}"


def listed_day(turn: dict, scene: RecalledScene) -> str:
    """The day a turn listed on its own (`lane_only`) goes under: its own, else its scene's."""
    return day(turn.get("time") or scene.time) or "time unknown"


def day_line(when: str) -> str:
    """The line that opens a day's group of listed turns (`listed_lines`)."""
    return f"On {when}:"


def lane_line(turn: dict) -> str:
    """A turn listed on its own, under its day's line (a stamp on every turn costs five tokens;
    turns of one day share one line)."""
    return f"  {turn['speaker']}: {turn['text']}"


def pointer_line(turn: dict, scene: RecalledScene) -> str:
    """A turn of a lane listed in the recall's order (`RANKED`), its day first (four tokens more
    than the turn alone, where a day's own line costs six)."""
    return f"  {listed_day(turn, scene)} {turn['speaker']}: {turn['text']}"


def listed_lines(listed: list[tuple[dict, RecalledScene]]) -> list[str]:
    """Turns listed on their own, as (turn, its scene): grouped under one line per day, the days
    in time order (a stamp that does not parse after those that do), each day's turns in the
    order given."""
    groups: dict[str, list[str]] = {}
    order: dict[str, tuple] = {}
    for turn, scene in listed:
        when = listed_day(turn, scene)
        parsed = _parsed(turn.get("time") or scene.time)
        order.setdefault(when, (parsed is None, parsed.date().isoformat() if parsed else "", len(order)))
        groups.setdefault(when, []).append(lane_line(turn))
    return [line for when in sorted(groups, key=order.__getitem__) for line in [day_line(when)] + groups[when]]


def item_line(n: int, item: RecalledItem) -> str:
    """An item with its day (the minute costs four tokens, and a "when" is answered in days)."""
    stamp = f" ({day(item.time)})" if item.time else ""
    return f"[Item {n}] {item.text}{stamp}"


def recent_line(turn: RecalledTurn) -> str:
    stamp = f" [{moment(turn.time)}]" if turn.time else ""
    return f"  {turn.speaker}{stamp}: {turn.text}"


def format_evidence(recall: Recall, speakers: list[str]) -> str:
    """The recalled evidence as the context block of the answer prompt; empty when the recall
    holds nothing (the opening line alone would only cost tokens: a budget too small for it)."""
    if not (recall.scenes or recall.items or recall.recent or recall.persona):
        return ""
    lines = [opening(speakers)]
    ranked = [s for s in recall.scenes if not lane_only(s)]
    if ranked:
        lines.append(SCENES_HEADING)
        for n, scene in enumerate(ranked, 1):
            lines += scene_header(n, scene)
            lines += [turn_line(t, scene.time) for t in scene.turns]
    for lane, heading in LISTED.items():
        listed = [(t, s) for s in recall.scenes if lane_only(s) and s.lane == lane for t in s.turns]
        if listed:
            lines.append(heading)
            lines += [pointer_line(t, s) for t, s in listed] if lane in RANKED else listed_lines(listed)
    if recall.items:
        lines.append(ITEMS_HEADING)
        lines += [item_line(n, item) for n, item in enumerate(recall.items, 1)]
    if recall.recent:
        lines.append(RECENT_HEADING)
        lines += [recent_line(t) for t in sorted(recall.recent, key=lambda t: t.seq)]
    if recall.persona:
        lines.append("## About the speakers")
        for p in recall.persona:
            lines.append(f"{p['speaker']}: {p['summary']}")
    return "\n".join(lines)


def supporting_turns(answer: str, recall: Recall, speakers: list[str], most: int = 3) -> list[str]:
    """The ids of the evidence turns an answer rests on: the turns handed over (a scene's, a
    recent one, or the source turns of an item) sharing the most content words with the answer,
    the speakers' names aside; up to `most`, each sharing at least half as many as the best.
    None for an answer that shares no word with the evidence ("Not in memory.")."""
    names = {w for s in speakers for w in content_words(s)}
    words = content_words(answer) - names
    texts: dict[str, set[str]] = {}
    for scene in recall.scenes:
        for t in scene.turns:
            texts[t["id"]] = content_words(t["text"])
    for t in recall.recent:
        texts[t.id] = content_words(t.text)
    for item in recall.items:   # an item's words credit the turns it was distilled from
        for tid in item.turn_ids:
            texts[tid] = texts.get(tid, set()) | content_words(item.text)
    shared = sorted(((len(words & w), tid) for tid, w in texts.items() if words & w), key=lambda x: -x[0])
    if not shared:
        return []
    best = shared[0][0]
    return [tid for n, tid in shared[:most] if 2 * n >= best]


# "when" asks for a time at the start of a question or before its verb ("Remind me, when did …");
# elsewhere it opens a clause ("Where could we eat when she is back?": 38 of LoCoMo's 1,986
# questions, none of them temporal, used to match a bare "when")
ASKS_WHEN = re.compile(r"^\W*(when|how long|how many (days|weeks|months|years)|what (day|date|time|year|month))\b"
                       r"|\b(what|which) (day|date|week|year|month)\b|\bhow long ago\b|\bsince when\b"
                       r"|\bwhen (did|does|do|is|was|were|will|are|has|have|had|would|can|could)\b", re.IGNORECASE)


def asks_when(question: str) -> bool:
    """Whether a question asks for a time ("When is …", "How long has …", "… which year …"),
    not one with a clause that starts with "when" ("… when she is back from her trip?")."""
    return bool(ASKS_WHEN.search(question))


# a question that asks for advice, a choice or a plan ("Can you suggest …", "Should we …",
# "… good idea?"), whose answer a memory kept in mind can change, rather than for a fact
ASKS_ADVICE = re.compile(r"\b(should|shall|could|suggest|recommend|advi[cs]e|ideas?|tips?|plan|"
                         r"what (do|would) you think|how about|what about|let's|"
                         r"is (it|that|this) (a )?(good|ok|okay|wise|safe))\b", re.IGNORECASE)


def asks_advice(question: str) -> bool:
    """Whether a question asks for advice, a choice or a plan rather than for a fact."""
    return bool(ASKS_ADVICE.search(question))


def about(speaker: str, sentence: str) -> str:
    """A persona sentence that names its speaker as it is; one that does not, after the name
    ("Works on a team with Priya." → "Alice: Works on a team with Priya.")."""
    return sentence if speaker.lower() in sentence.lower() else f"{speaker}: {sentence}"


def compact_line(speaker: str, text: str, stamp: str | None, dated: bool) -> str:
    """A turn of `compact_evidence`: "Ana: …", or "Ana (2 April 2024): …" when `dated` and timed."""
    return f"{speaker}" + (f" ({day(stamp)})" if dated and stamp else "") + f": {text}"


def compact_evidence(recall: Recall, speakers: list[str], dated: bool) -> str:
    """The evidence as a small answer model reads it, a sentence a line, no titles or summaries.

    First what the associative lane brought (the items and scenes the triggers reached: what
    the memory anticipated would matter in a situation like the question's), then the other
    items, what is known of the speakers, and the other scenes' dialogue. Days only when
    `dated` (the question asks when), on every line so that a copied line keeps its day: a
    1.5B model handed a day it was not asked for answers with it. Empty, as `format_evidence`
    is, when the recall holds nothing."""
    if not (recall.scenes or recall.items or recall.recent or recall.persona):
        return ""

    def item(i: RecalledItem) -> str:
        return f"- {i.text}" + (f" ({day(i.time)})" if dated and i.time else "")

    def dialogue(scene: RecalledScene) -> list[str]:
        return ["--"] + [compact_line(t["speaker"], t["text"], t.get("time") or scene.time, dated) for t in scene.turns]

    cued = [i for i in recall.items if i.lane == "associative"]
    cued_scenes = [s for s in recall.scenes if s.lane in ASSOCIATIVE]
    lines = [opening(speakers)]
    if cued or cued_scenes:
        lines.append("Worth remembering here:")
        lines += [item(i) for i in cued]
        for scene in cued_scenes:
            lines += dialogue(scene)
    lines.append("Also known:")
    lines += [item(i) for i in recall.items if i.lane != "associative"]
    lines += [f"- {about(p['speaker'], sentence)}" for p in recall.persona
              for sentence in re.split(r"(?<=[.!?])\s+", p["summary"]) if sentence.strip()]
    rest = [s for s in recall.scenes if s.lane not in ASSOCIATIVE]
    if rest or recall.recent:
        lines.append("From the conversations:")
    for scene in rest:
        lines += dialogue(scene)
    lines += [compact_line(t.speaker, t.text, t.time, dated) for t in sorted(recall.recent, key=lambda t: t.seq)]
    return "\n".join(lines)


def anticipated(recall: Recall, items: int = 2, most: int = 8) -> list[tuple[str, list[str]]]:
    """What the triggers reached, as (sentence, the turn ids it rests on), at most `most`: the
    `items` best items a Bridge trigger brought (by their trigger rank), then the turns of the
    leading associative evidence (the scenes of the associative lanes, in the recall's order);
    a recall without lanes gives the turns of the scene its Horizon triggers ranked first. Turns
    said by someone the question names come first, the others after them, each in the recall's
    order: asked where to take Ana for dinner, what Ana said about herself leads the list, and a
    1.5B model choosing among look-alikes takes one near the head of the list far more often
    than one further down (docs/models.md). The candidates the focus
    answer style chooses what to keep in mind from: what the memory anticipated would matter in
    a situation like the question's, although the question may share no word with it."""
    bridged = sorted((i for i in recall.items if "bridge" in i.via), key=lambda i: i.ranks.get("trigger", 1 << 30))
    out = [(i.text, list(i.turn_ids)) for i in bridged[:items]]
    scenes = [s for s in recall.scenes if s.lane in ASSOCIATIVE]
    if not any(s.lane for s in recall.scenes):   # no lanes (`fusion="rrf"`): the Horizon triggers' first scene
        scenes = sorted((s for s in recall.scenes if "horizon" in s.via),
                        key=lambda s: s.ranks.get("horizon", 1 << 30))[:1]
    named = content_words(recall.query)
    turns = [t for s in scenes for t in s.turns]
    turns.sort(key=lambda t: not (content_words(t["speaker"]) & named))   # stable: the recall's order otherwise
    out += [(f"{t['speaker']} said: {t['text']}", [t["id"]]) for t in turns]
    return out[:most]
