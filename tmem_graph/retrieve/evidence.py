"""Evidence handed to the answer model: recalled scenes (with their raw, timestamped turns),
items, the matching turns no scene holds yet (in conversation order), then the persona of the
speakers, outside the ranked budget (paper §3.4). The packer (pack.py) prices evidence with
the same line renderers, so a packed recall renders exactly what it paid for.

Times are written for reading, not parsing: a scene's header gives its day and minute
("8 May 2023, 13:56"), its turns only a day that differs from the header's, an item or a
recent turn its day and minute. An ISO stamp costs a tokenizer about three times the tokens
of the same day in words (docs/retrieval.md, "Times in the evidence"), and an answer model
asked "when" answers in words."""

from __future__ import annotations

from datetime import datetime

from .results import Recall, RecalledItem, RecalledScene, RecalledTurn

SCENES_HEADING = "## Relevant scenes"
ITEMS_HEADING = "## Relevant items"
RECENT_HEADING = "## Recent conversation (not yet organised into scenes)"
LANE_HEADING = "## Other turns that match"


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
    """A packed scene that only the turn lane opened: its turns are listed on their own, each
    with its day, without the scene's header (a header costs two thirds of a turn)."""
    return scene.excerpt and scene.lane == "turns"


def turn_line(turn: dict, scene_time: str | None = None) -> str:
    """A scene's turn: its day only when it is not the day of its scene's header."""
    when = day(turn.get("time"))
    stamp = f" [{when}]" if when and when != day(scene_time) else ""
    return f"  {turn['speaker']}{stamp}: {turn['text']}"


def lane_line(turn: dict, scene: RecalledScene) -> str:
    """A turn listed on its own (`lane_only`): always with its day (its scene's, if it has none)."""
    return turn_line({**turn, "time": turn.get("time") or scene.time})


def item_line(n: int, item: RecalledItem) -> str:
    stamp = f" ({moment(item.time)})" if item.time else ""
    return f"[Item {n}] {item.text}{stamp}"


def recent_line(turn: RecalledTurn) -> str:
    stamp = f" [{moment(turn.time)}]" if turn.time else ""
    return f"  {turn.speaker}{stamp}: {turn.text}"


def format_evidence(recall: Recall, speakers: list[str]) -> str:
    """The recalled evidence as the context block of the answer prompt."""
    lines = [opening(speakers)]
    ranked = [s for s in recall.scenes if not lane_only(s)]
    if ranked:
        lines.append(SCENES_HEADING)
        for n, scene in enumerate(ranked, 1):
            lines += scene_header(n, scene)
            lines += [turn_line(t, scene.time) for t in scene.turns]
    others = [s for s in recall.scenes if lane_only(s)]
    if others:
        lines.append(LANE_HEADING)
        lines += [lane_line(t, s) for s in others for t in s.turns]
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
