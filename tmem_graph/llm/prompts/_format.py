"""Shared rendering of turns and scenes inside prompts."""

from __future__ import annotations

from typing import Any


def most(chars: int | None = None, items: int | None = None, item_chars: int | None = None) -> dict[str, Any]:
    """JSON-schema bounds for `Field(json_schema_extra=...)`: a grammar-constrained decoder
    (llama.cpp, vLLM, Ollama) cannot exceed them, so a small model that starts repeating itself
    closes the string or list instead of running to the token cap. They are not validated:
    an endpoint that ignores them (OpenAI with strict=False) is not refused for a long reply."""
    bounds: dict[str, Any] = {}
    if chars is not None:
        bounds["maxLength"] = chars
    if items is not None:
        bounds["maxItems"] = items
    if item_chars is not None:
        bounds["items"] = {"type": "string", "maxLength": item_chars}
    return bounds


def render_turns(turns, numbered: bool = False) -> str:
    """One line per turn: `[n] [time] Speaker: text`."""
    lines = []
    for n, t in enumerate(turns, 1):
        stamp = f"[{t.time}] " if t.time else ""
        lines.append(f"{f'[{n}] ' if numbered else ''}{stamp}{t.speaker}: {t.text}")
    return "\n".join(lines)


def render_scene(scene, turns_by_id, with_dialogue: bool = True) -> str:
    """A scene block: id, time, title, summary, narrative and (optionally) its dialogue."""
    parts = [f"--- scene {scene.id} (time: {scene.time or 'unknown'}) ---",
             f"Title: {scene.title or ''}", f"Summary: {scene.summary or ''}",
             f"Narrative: {scene.narrative or ''}"]
    if with_dialogue:
        parts.append("Dialogue:\n" + render_turns([turns_by_id[t] for t in scene.turn_ids]))
    return "\n".join(parts)
