"""Evidence handed to the answer model: recalled scenes (with their raw, timestamped turns),
items, the matching turns no scene holds yet (in conversation order), then the persona of the
speakers, outside the ranked budget (paper §3.4)."""

from __future__ import annotations

from .results import Recall


def format_evidence(recall: Recall, speakers: list[str]) -> str:
    """The recalled evidence as the context block of the answer prompt."""
    who = " and ".join(speakers) if speakers else "the speakers"
    lines = [f"Memories from conversations between {who}:"]
    if recall.scenes:
        lines.append("## Relevant scenes")
        for n, scene in enumerate(recall.scenes, 1):
            lines.append(f"[Scene {n}] {scene.title or ''} (time: {scene.time or 'unknown'})".replace("  ", " "))
            if scene.summary:
                lines.append(f"  Summary: {scene.summary}")
            for turn in scene.turns:
                stamp = f" [{turn['time']}]" if turn.get("time") else ""
                lines.append(f"  {turn['speaker']}{stamp}: {turn['text']}")
    if recall.items:
        lines.append("## Relevant items")
        for n, item in enumerate(recall.items, 1):
            stamp = f" (time: {item.time})" if item.time else ""
            lines.append(f"[Item {n}] {item.text}{stamp}")
    if recall.recent:
        lines.append("## Recent conversation (not yet organised into scenes)")
        for turn in sorted(recall.recent, key=lambda t: t.seq):
            stamp = f" [{turn.time}]" if turn.time else ""
            lines.append(f"  {turn.speaker}{stamp}: {turn.text}")
    if recall.persona:
        lines.append("## About the speakers")
        for p in recall.persona:
            lines.append(f"{p['speaker']}: {p['summary']}")
    return "\n".join(lines)
