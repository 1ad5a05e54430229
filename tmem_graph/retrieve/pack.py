"""The evidence packer: one budget of evidence tokens filled from the ranked scenes, items and
recent turns of a recall (docs/design-and-evidence.md).

A scene is handed over as an excerpt. Its turns are ranked by their cosine with the query
(stored with every turn); a scene contributes its best turns, each with WINDOW neighbours on
both sides and every handed-over question with its reply, under its title and time (no
summary: a summary costs as much as two turns and repeats them in other words, measured in
docs/evaluation.md). The first pass takes, in rank
order, each scene's best turn with its window interleaved with the items in proportion (the
items' count over the scenes', after each scene; the rest after the last) and, after the
first scene, the recent turns; an item whose source turns (`turn_ids`) are all handed over
already is left out, the turns saying it in their own words. Later passes add each scene's
next best turn, scene by scene in rank order, until nothing more fits. With a turn lane (the
turns some scene holds, ranked by their own text: `Recall.lane`), all of that fills the
budget but the lane's share (`lane_share`); the lane's turns then fill the rest, best first, each inside its
scene's excerpt (a scene no excerpt holds yet is opened under its header, marked `lane`
"turns"), and what they leave goes to the excerpts again. What is not handed
over is dropped from the recall, so `scenes`, `items`, `via` and ranks describe exactly the
evidence the answer model reads; every packed scene is marked `excerpt`. Pure: a recall and a
token counter in, a recall out.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Callable

from ..words import content_words
from .evidence import (ITEMS_HEADING, LISTED, RANKED, RECENT_HEADING, SCENES_HEADING, day_line, item_line, lane_line,
                       lane_only, listed_day, opening, pointer_line, recent_line, scene_header, turn_line)
from .results import LaneTurn, Recall, RecalledScene

WINDOW = 1        # neighbours kept on each side of a chosen turn
# the associative list's first pointers that show the turn their best turn answers when that
# turn says more: a reply alone ("That family scare clearly changed your habits.") names nothing
# a reader can use (docs/design-and-evidence.md, "The reader check")
EXCHANGES = 5


class _Budget:
    def __init__(self, limit: int, count: Callable[[str], int]):
        self.left, self.count = limit, count

    def take(self, lines: list[str]) -> bool:
        """Spend the lines' tokens if they fit (lines join with newlines: tokens add up)."""
        cost = sum(self.count(line) for line in lines)
        if cost > self.left:
            return False
        self.left -= cost
        return True


@dataclasses.dataclass
class _Scene:
    """One recalled scene being packed: the turns chosen so far, and the order to add the rest."""

    scene: RecalledScene
    order: list[int]                  # turn positions, best first
    chosen: set[int] = dataclasses.field(default_factory=set)
    opened: bool = False
    alone: int | None = None          # a turn handed over without its window, which comes next
    whole: bool = True                # `scene.turns` is the whole scene (not only the lane's turns of it)

    def with_replies(self, group: list[int]) -> list[int]:
        """`group` with the reply to each of its turns that asks something (ends with "?"): the
        turn after it, when the scene's turns are all here and it is not handed over yet, except
        in a list of pointers (`RANKED`). A question without its answer misleads a reader
        (docs/design-and-evidence.md)."""
        turns, out = self.scene.turns, list(group)
        if self.whole and self.scene.lane not in RANKED:   # a pointer stays one line: more of them fit
            for n in group:
                if (turns[n]["text"] or "").rstrip().endswith("?") and n + 1 < len(turns) \
                        and n + 1 not in self.chosen and n + 1 not in out:
                    out.append(n + 1)
        return sorted(out)

    def next_group(self) -> list[int]:
        """The best turn not chosen yet, with the unchosen turns of its window (positions); first,
        for a scene opened with its best turn alone, that turn's neighbours."""
        if self.alone is not None:
            best, self.alone = self.alone, None
        else:
            best = next((n for n in self.order if n not in self.chosen), None)
        if best is None:
            return []
        low, high = max(0, best - WINDOW), min(len(self.scene.turns), best + WINDOW + 1)
        group = [n for n in range(low, high) if n not in self.chosen]
        return group or self.next_group()

    def best(self, exchange: bool = False) -> list[int]:
        """The best turn alone, when nothing is chosen yet (an associative opening); with
        `exchange`, the turn it answers instead (the turn before it, another speaker's) when
        that turn has more content words: what was said, not "That changed your habits"."""
        if self.order and not self.chosen:
            n = self.order[0]
            turns = self.scene.turns
            if exchange and n > 0 and turns[n - 1]["speaker"] != turns[n]["speaker"] \
                    and len(content_words(turns[n - 1]["text"])) > len(content_words(turns[n]["text"])):
                n -= 1
            self.alone = n
            return [n]
        return []


class _Packer:
    def __init__(self, budget: int, count: Callable[[str], int], speakers: list[str]):
        self.spend = _Budget(budget, count)
        if not self.spend.take([opening(speakers)]):   # a budget that cannot hold the opening line holds nothing
            self.spend.left = 0
        self.headings: set = set()   # the sections in the block, and each listed lane's days (lane heading, day)

    def take(self, heading: str, lines: list[str]) -> bool:
        """Spend `lines`, with their section's heading if it is not in the block yet."""
        first = [heading] if heading not in self.headings else []
        if not self.spend.take(first + lines):
            return False
        self.headings.add(heading)
        return True

    def open(self, state: _Scene, alone: bool = False, exchange: bool = False) -> bool:
        """A scene's first piece: its header (title and time) and its best turn, with its window
        unless `alone` (with `exchange`, the fuller turn of its exchange: `_Scene.best`)."""
        group = state.best(exchange) if alone else state.next_group()
        return bool(group) and self.add(state, group)

    def add(self, state: _Scene, group: list[int]) -> bool:
        """Given turns (positions) of a scene, each question with its reply, under its header when
        its excerpt is not open yet."""
        scene, group = state.scene, state.with_replies(group)
        if lane_only(scene):  # listed on their own under their lane's heading, in order or grouped by day
            heading, lines, days = LISTED[scene.lane], [], []
            for n in group:
                if scene.lane in RANKED:
                    lines.append(pointer_line(scene.turns[n], scene))
                    continue
                when = (LISTED[scene.lane], listed_day(scene.turns[n], scene))
                if when not in self.headings and when not in days:   # the day's line, once per lane
                    days.append(when)
                    lines.append(day_line(when[1]))
                lines.append(lane_line(scene.turns[n]))
            fits = self.take(heading, lines)
            if fits:
                self.headings.update(days)
                state.opened = True
                state.chosen.update(group)
            return fits
        lines = [turn_line(scene.turns[n], scene.time) for n in group]
        if state.opened:
            fits = self.spend.take(lines)
        else:
            fits = self.take(SCENES_HEADING, scene_header(1, dataclasses.replace(scene, excerpt=True)) + lines)
        if fits:
            state.opened = True
            state.chosen.update(group)
        return fits

    def grow(self, state: _Scene) -> bool:
        """An opened excerpt's next best turn, with its window."""
        if not state.opened:
            return False
        group = state.next_group()
        return bool(group) and self.add(state, group)


def pack(recall: Recall, budget: int, count: Callable[[str], int], speakers: list[str],
         lane_share: float = 0.4, cue_share: float = 0.0, joint_k0: int = 5) -> Recall:
    """`recall` cut to `budget` evidence tokens (its context block without the persona). With a
    turn lane, `lane_share` of the budget is kept for it; with SceneCue's scenes (`Recall.cue`),
    `cue_share` for the associative pass, which opens them in SceneCue's order, each with its
    best turn. The packed scenes are listed by RRF (k0 `joint_k0`) of their places in the final
    fusion and in SceneCue's order, the lane's own after them; those the recall without a budget
    hands over (`Recall.ranked`) come first, in its order, so that both rank alike. (`Memory.recall` passes
    `RetrievalSettings`' values, whose defaults these repeat: the packer imports no settings.)"""
    # each line's count is kept: a line that did not fit is tried again on every later pass
    packer = _Packer(budget, functools.lru_cache(maxsize=None)(count), speakers)
    reserve = int(budget * lane_share) if recall.lane else 0
    associative = int(budget * cue_share) if recall.cue else 0
    scenes = [_state(s, recall) for s in recall.scenes]
    for state in scenes:   # the scenes of a day the question names open first, whatever the shares
        if "day" in state.scene.ranks:
            packer.open(state)
    packer.spend.left -= reserve + associative  # the lane's and the associative pass's shares, handed back below
    per = math.ceil(len(recall.items) / len(scenes)) if scenes else len(recall.items)
    waiting = list(recall.items)
    items, recent = [], []
    for r in range(max(len(scenes), 1)):
        if r < len(scenes) and not scenes[r].opened:
            packer.open(scenes[r])
        batch, waiting = (waiting[:per], waiting[per:]) if r < len(scenes) - 1 else (waiting, [])
        handed = {st.scene.turns[n]["id"] for st in scenes for n in st.chosen}
        for item in batch:
            if item.turn_ids and set(item.turn_ids) <= handed:
                continue  # its source turns are handed over already, in their own words
            if packer.take(ITEMS_HEADING, [item_line(len(items) + 1, item)]):
                items.append(item)
        if r == 0:
            for turn in sorted(recall.recent, key=lambda t: t.seq):
                if packer.take(RECENT_HEADING, [recent_line(turn)]):
                    recent.append(turn.id)
    while any([packer.grow(state) for state in scenes]):  # every opened excerpt, in rank order, once per pass
        pass
    packer.spend.left += associative
    opened = {st.scene.id for st in scenes if st.opened}
    cue = [_state(dataclasses.replace(s, excerpt=True), recall) for s in recall.cue if s.id not in opened]
    pointed = {st.scene.id for st in cue}
    scenes = [st for st in scenes if st.opened or st.scene.id not in pointed]  # a scene is packed once
    for n, state in enumerate(cue):  # the associative list's scenes, each by its best turn alone
        packer.open(state, alone=True, exchange=n < EXCHANGES)   # (the first by the fuller turn of it)
    packer.spend.left += reserve
    lane = _lane(packer, scenes + cue, recall.lane)
    while any([packer.grow(state) for state in scenes + cue]):  # what is left goes to the excerpts again
        pass
    order = _joint([st.scene.id for st in scenes], [st.scene.id for st in cue], joint_k0)
    listed = sorted(scenes + cue, key=lambda st: order[st.scene.id]) + lane
    first = {key: n for n, key in enumerate(recall.ranked)}
    listed.sort(key=lambda st: first.get(st.scene.id, len(first)))   # stable: the rest keep their order
    kept = [dataclasses.replace(st.scene, turns=[st.scene.turns[n] for n in sorted(st.chosen)], excerpt=True)
            for st in listed if st.opened]
    return dataclasses.replace(recall, scenes=kept, items=items, recent=[t for t in recall.recent if t.id in recent],
                               budget_tokens=budget)


def _state(scene: RecalledScene, recall: Recall) -> _Scene:
    """A scene to pack, its turns ordered best first by their cosine with the query."""
    return _Scene(scene, sorted(range(len(scene.turns)),
                                key=lambda n: (-recall.turn_scores.get(scene.turns[n]["id"], -1.0), n)))


def _joint(descriptive: list[str], associative: list[str], k0: int) -> dict[str, int]:
    """Each scene's place when the final fusion's order and SceneCue's are fused by RRF (k0):
    the packed scenes are listed in it, so that both kinds of question find their best scenes
    first; a scene in neither order keeps its place after them."""
    scores: dict[str, float] = {}
    for ranking in (descriptive, associative):
        for n, key in enumerate(ranking, 1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k0 + n)
    first = {key: n for n, key in enumerate(descriptive + associative)}
    ranked = sorted(scores, key=lambda key: (-scores[key], first[key]))
    return {key: n for n, key in enumerate(ranked)}


def _lane(packer: _Packer, scenes: list[_Scene], lane: list[LaneTurn]) -> list[_Scene]:
    """Hand over the turn lane's turns, best first, each inside its scene's excerpt (opening the
    scene, under its header, when no excerpt holds it yet) while they fit; returns the excerpts
    it opened, for scenes the cascade did not recall (each with the lane's turns of that scene,
    in their order, and `via` the lane's rankings that hold them)."""
    states = {st.scene.id: st for st in scenes}
    new: dict[str, _Scene] = {}
    for turn in lane:
        if turn.scene["id"] not in states:
            mine = sorted((t for t in lane if t.scene["id"] == turn.scene["id"]), key=lambda t: t.n)
            scene = RecalledScene(id=turn.scene["id"], title=turn.scene["title"], time=turn.scene["time"],
                                  score=turn.score, via=[c for c in ("bm25", "dense") if any(c in t.via for t in mine)],
                                  ranks=turn.ranks, turns=[_turn(t) for t in mine], lane="turns", excerpt=True)
            states[scene.id] = new[scene.id] = _Scene(scene, [], whole=False)
        state = states[turn.scene["id"]]
        where = next((n for n, t in enumerate(state.scene.turns) if t["id"] == turn.id), None)
        if where is not None and where not in state.chosen:
            packer.add(state, [where])
    return list(new.values())


def _turn(turn: LaneTurn) -> dict:
    return {"id": turn.id, "speaker": turn.speaker, "text": turn.text, "time": turn.time}
