"""Evidence handed to the answer model: recalled scenes (with their raw, timestamped turns),
items, the matching turns no scene holds yet (in conversation order), then the persona of the
speakers, outside the ranked budget (paper §3.4). The packer (pack.py) prices evidence with
the same line renderers, so a packed recall renders exactly what it paid for."""

from __future__ import annotations

from .results import Recall, RecalledItem, RecalledScene, RecalledTurn

SCENES_HEADING = "## Relevant scenes"
ITEMS_HEADING = "## Relevant items"
RECENT_HEADING = "## Recent conversation (not yet organised into scenes)"


def opening(speakers: list[str]) -> str:
    return f"Memories from conversations between {' and '.join(speakers) if speakers else 'the speakers'}:"


def scene_header(n: int, scene: RecalledScene) -> list[str]:
    """A scene's first lines: its title and time, and its summary unless it is an excerpt."""
    lines = [f"[Scene {n}] {scene.title or ''} (time: {scene.time or 'unknown'})".replace("  ", " ")]
    if scene.summary and not scene.excerpt:
        lines.append(f"  Summary: {scene.summary}")
    return lines


def turn_line(turn: dict) -> str:
    stamp = f" [{turn['time']}]" if turn.get("time") else ""
    return f"  {turn['speaker']}{stamp}: {turn['text']}"


def item_line(n: int, item: RecalledItem) -> str:
    stamp = f" (time: {item.time})" if item.time else ""
    return f"[Item {n}] {item.text}{stamp}"


def recent_line(turn: RecalledTurn) -> str:
    stamp = f" [{turn.time}]" if turn.time else ""
    return f"  {turn.speaker}{stamp}: {turn.text}"


def format_evidence(recall: Recall, speakers: list[str]) -> str:
    """The recalled evidence as the context block of the answer prompt."""
    lines = [opening(speakers)]
    if recall.scenes:
        lines.append(SCENES_HEADING)
        for n, scene in enumerate(recall.scenes, 1):
            lines += scene_header(n, scene)
            lines += [turn_line(t) for t in scene.turns]
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
