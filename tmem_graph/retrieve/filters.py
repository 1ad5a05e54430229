"""Recall filters: only evidence from some speakers' turns, or from a time window, or both
(docs/api.md, "Recall filters").

A filtered recall ranks as an unfiltered one does, but deeper (`WIDEN` times each budget, at
least `candidates`), then
keeps what the filter admits and cuts back to the budgets: a scene keeps only its admitted
turns and goes when none is left; an item stays when a turn it was distilled from is admitted
(its scenes' turns when it records none); turns no scene holds yet and the turn lane are
filtered alike; with a speakers filter, only those speakers' personas are handed over. A turn
without a time is outside every time window. Times compare as written (ISO 8601; a time zone,
when given, is set aside, as the memory format's times carry none).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from typing import Callable, Iterable

from ..config import MAX_BUDGET, RetrievalSettings
from ..errors import UsageError
from ..textio import text_problem
from .results import Recall

WIDEN = 4   # how much deeper a filtered recall ranks before filtering (a guess, not tuned: docs/api.md)
MAX_SPEAKERS = 50


@dataclass(frozen=True)
class TurnFilter:
    speakers: frozenset[str] | None
    since: dt.datetime | None
    until: dt.datetime | None     # exclusive bound: just after the moment given (a day alone: the next midnight)
    shown: dict                   # the filter as the caller gave it, for the recall's JSON

    @classmethod
    def of(cls, speakers: Iterable[str] | str | None = None, since: str | None = None,
           until: str | None = None) -> "TurnFilter | None":
        """The filter of these arguments (None when none is set); UsageError names a bad one."""
        if isinstance(speakers, str):
            speakers = [speakers]
        if speakers is not None:
            speakers = list(speakers)
            if not speakers or len(speakers) > MAX_SPEAKERS or not all(
                    isinstance(s, str) and s.strip() and len(s) <= 200 for s in speakers):
                raise UsageError(f"speakers {speakers!r}: must be 1 to {MAX_SPEAKERS} non-empty names")
            for n, name in enumerate(speakers):
                if problem := text_problem(name):
                    raise UsageError(f"speakers[{n}]: {problem}")
        start = _moment("since", since, end=False)
        end = _moment("until", until, end=True)
        if start is not None and end is not None and start >= end:
            raise UsageError(f"since {since!r} is not before until {until!r}")
        if speakers is None and start is None and end is None:
            return None
        shown = {k: v for k, v in (("speakers", speakers), ("since", since), ("until", until)) if v is not None}
        return cls(frozenset(speakers) if speakers is not None else None, start, end, shown)

    def admits(self, speaker: str | None, time: str | None) -> bool:
        """Whether a turn of `speaker` said at `time` (ISO 8601 text, or None) is admitted."""
        if self.speakers is not None and speaker not in self.speakers:
            return False
        if self.since is None and self.until is None:
            return True
        when = _parsed(time)
        if when is None:
            return False
        return (self.since is None or when >= self.since) and (self.until is None or when < self.until)

    def widened(self, cfg: RetrievalSettings) -> RetrievalSettings:
        """The settings to rank with: every budget `WIDEN` times deeper, and at least as deep as
        each channel's ranking (`candidates`), the cut coming after."""
        deeper = lambda k: k and min(MAX_BUDGET, max(k * WIDEN, cfg.candidates))  # noqa: E731 - 0 stays 0
        return replace(cfg, k_scenes=deeper(cfg.k_scenes), k_items=deeper(cfg.k_items), k_recent=deeper(cfg.k_recent))

    def apply(self, recall: Recall, cfg: RetrievalSettings,
              turns_of: Callable[[list[str], list[str]], tuple[dict, dict]], listed: int) -> Recall:
        """`recall` (ranked with `widened` settings) with only what the filter admits, cut to
        `cfg`'s budgets. `turns_of(turn_ids, scene_ids)` answers ({turn id: (speaker, time)},
        {scene id: [turn ids]}) for the items' sources and the ranked scenes not loaded here. A
        packed recall's `ranked` (the scenes the recall without a budget hands over, ranked as
        deep as `widened`) loses the scenes left without a turn and is cut to `listed`, as that
        recall's scenes are."""
        admit = lambda t: self.admits(t.get("speaker"), t.get("time"))  # noqa: E731
        for scene in recall.scenes + recall.cue:
            kept = [t for t in scene.turns if admit(t)]
            scene.excerpt = scene.excerpt or len(kept) < len(scene.turns)
            scene.turns = kept
        emptied = {s.id for s in recall.scenes + recall.cue if not s.turns}
        known = {s.id for s in recall.scenes + recall.cue}
        unseen = [key for key in recall.ranked if key not in known][:listed]   # ranked, but not loaded here
        recall.cue = [s for s in recall.cue if s.turns]
        standing = [s for s in recall.scenes if s.turns]
        ids = sorted({t for i in recall.items for t in i.turn_ids})
        scene_ids = sorted({s for i in recall.items if not i.turn_ids for s in i.scene_ids} | set(unseen))
        said, held = turns_of(ids, scene_ids) if recall.items or unseen else ({}, {})
        if held:
            said = {**said, **turns_of(sorted({t for ts in held.values() for t in ts}), [])[0]}
        admitted = lambda t: t in said and self.admits(*said[t])  # noqa: E731
        emptied |= {key for key in unseen if not any(admitted(t) for t in held.get(key, []))}
        recall.ranked = [key for key in recall.ranked if key not in emptied][:listed]
        first = set(recall.ranked)   # listed first when packed: kept past the cut, as the packer reads them
        recall.scenes = standing[:cfg.k_scenes] + [s for s in standing[cfg.k_scenes:] if s.id in first]

        def sources(item) -> list[str]:
            return item.turn_ids or [t for s in item.scene_ids for t in held.get(s, [])]

        recall.items = [i for i in recall.items if any(admitted(t) for t in sources(i))][:cfg.k_items]
        recall.recent = [t for t in recall.recent if self.admits(t.speaker, t.time)][:cfg.k_recent]
        recall.lane = [t for t in recall.lane if self.admits(t.speaker, t.time)]
        if self.speakers is not None:
            recall.persona = [p for p in recall.persona if p.get("speaker") in self.speakers]
        recall.filter = dict(self.shown)
        return recall


def _moment(name: str, value, end: bool) -> dt.datetime | None:
    """`since` or `until` as a naive datetime; a day alone starts at its midnight (`until`: the
    next one, so that the whole day is inside)."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{name} {value!r}: must be an ISO 8601 date or date-time, e.g. 2023-05-08 or "
                         "2023-05-08T13:56:00")
    text = value.strip()
    try:
        if len(text) == 10:
            day = dt.date.fromisoformat(text)
            when = dt.datetime.combine(day, dt.time())
            return when + dt.timedelta(days=1) if end else when
        when = _naive(dt.datetime.fromisoformat(text))
        return when + dt.timedelta(microseconds=1) if end else when   # `until` itself is inside
    except ValueError:
        raise UsageError(f"{name} {value!r}: not an ISO 8601 date or date-time (e.g. 2023-05-08 or "
                         "2023-05-08T13:56:00)") from None
    except OverflowError:   # `until`'s next day or microsecond is past the calendar's end
        raise UsageError(f"{name} {value!r}: out of range (the latest until is 9999-12-30 or "
                         "9999-12-31T23:59:59.999998)") from None


def _parsed(time: str | None) -> dt.datetime | None:
    if not time:
        return None
    try:
        return _naive(dt.datetime.fromisoformat(time)) if len(time) > 10 else \
            dt.datetime.combine(dt.date.fromisoformat(time), dt.time())
    except ValueError:
        return None


def _naive(when: dt.datetime) -> dt.datetime:
    return when.replace(tzinfo=None)
