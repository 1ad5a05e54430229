"""Evaluation memories kept as fixtures without the benchmark's text.

A memory built from LoCoMo (and LoCoMo-Plus cues) is exported with every turn whose text the
data folder can give back stripped of that text; `texts_from` names the conversation. On
import the texts are re-attached from the data folder, checked, and the document is imported
as any `tmem-memory/1` document. What the model built (scenes, topics, items, triggers,
personas) is kept whole; the dataset's own text stays out of the repository
(shared/data/README.md).
"""

from __future__ import annotations

import copy
from pathlib import Path

from ..errors import ValidationError
from .data import base_probes, data_dir, load
from ..construct.inputs import locomo_turns


def texts_by_id(sample: str, plus_base: str | None, root: Path | None = None) -> dict[str, str]:
    """Turn id -> text, as ingestion sees them: the LoCoMo sample's turns (`D<s>:<t>`) and the
    cue turns (`P<index>:<n>`) of the LoCoMo-Plus dev probes stitched onto `plus_base`."""
    root = root or data_dir()
    samples = load(root / "locomo10.json")
    texts = {t.id: t.text for t in locomo_turns(samples, sample)}
    if plus_base is not None:
        if plus_base not in [s.get("sample_id") for s in samples]:
            raise ValidationError([f"texts_from.locomo_plus_base: no sample {plus_base!r}"])
        for probe in base_probes(load(root / "locomo_plus_dev.json"), samples, plus_base):
            texts.update({t.id: t.text for t in probe.cue})
    return texts


def strip(document: dict, sample: str, plus_base: str | None, root: Path | None = None) -> tuple[dict, int]:
    """A copy of `document` without the texts the data folder gives back exactly; returns it and
    how many turns were stripped (a turn whose text differs keeps it)."""
    texts = texts_by_id(sample, plus_base, root)
    out = copy.deepcopy(document)
    stripped = 0
    for turn in out.get("turns", []):
        if texts.get(turn.get("id")) == turn.get("text"):
            del turn["text"]
            stripped += 1
    out["texts_from"] = {"locomo": sample, "locomo_plus_base": plus_base}
    return out, stripped


def attach(fixture: dict, root: Path | None = None) -> dict:
    """The `tmem-memory/1` document of a fixture: every turn's text re-attached from the data
    folder. A turn the data does not hold is an error naming it; nothing is guessed."""
    source = fixture.get("texts_from")
    if not isinstance(source, dict) or not isinstance(source.get("locomo"), str):
        raise ValidationError(["texts_from: missing; this is not a fixture made by `benchmarks/fixture.py export`"])
    texts = texts_by_id(source["locomo"], source.get("locomo_plus_base"), root)
    document = {k: v for k, v in fixture.items() if k != "texts_from"}
    document["turns"] = copy.deepcopy(fixture.get("turns", []))
    missing = []
    for n, turn in enumerate(document["turns"]):
        if "text" not in turn:
            if turn.get("id") in texts:
                turn["text"] = texts[turn["id"]]
            else:
                missing.append(f"turns[{n}] ({turn.get('id')!r}): no text in the data for this id")
    if missing:
        raise ValidationError(missing)
    return document


def built_sessions(fixture: dict) -> int:
    """The largest N such that every turn of the sample's sessions 1..N is in a scene."""
    in_scene = {t for s in fixture["scenes"] for t in s["turn_ids"]}
    sessions: dict[int, bool] = {}
    for t in fixture["turns"]:
        if t["id"].startswith("D"):
            sessions[t["session"]] = sessions.get(t["session"], True) and t["id"] in in_scene
    n = 0
    while sessions.get(n + 1):
        n += 1
    return n


def built_probes(fixture: dict) -> int:
    """How many LoCoMo-Plus probes have their whole cue dialogue in a scene, counted as they are
    built: in probe order (turn ids `P<index>:<n>`), up to the first one not built."""
    in_scene = {t for s in fixture["scenes"] for t in s["turn_ids"]}
    built: dict[int, bool] = {}
    for t in fixture["turns"]:
        if t["id"].startswith("P"):
            index = int(t["id"][1:].split(":")[0])
            built[index] = built.get(index, True) and t["id"] in in_scene
    n = 0
    for index in sorted(built):
        if not built[index]:
            break
        n += 1
    return n
