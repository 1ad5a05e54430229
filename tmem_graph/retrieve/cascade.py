"""The T-Mem retrieval cascade: topic prefilter → scene selection (with SceneCue) → items
(with TrigRecall) → persona. The choices (SceneCue, the scene and item fusion, TrigRecall's
gate) are the pure functions of `select.py`, fed with what two queries return:

1. `retrieve/rankings`: the memory's state, every vector ranking (searches of Neo4j's vector
   indexes filtered to the memory, scored by full-precision cosines, no deeper than the memory
   holds), every BM25 ranking (the full-text index's candidates scored on the memory's own
   statistics, `lexical.py`), the scenes of the ranked topics, the exact cosine of every scene
   the pool may hold, the turns no scene holds yet and the personas, in one round trip: two
   halves at once on two connections when the recall is the process's only one (`halves`),
   else whole (or `retrieve/rankings_exact`, reading no index, when it fails);
2. `retrieve/finish`: the chosen scenes with their turns, the item pool (the chosen scenes'
   items ∪ the items TrigRecall reached), with a token budget the best scenes of a day the
   question names (`questions.named_days`), and the memory's state again.
"""

from __future__ import annotations

import math
import threading
import time
from contextlib import contextmanager
from dataclasses import replace
from typing import Iterable, Iterator

from ..config import HORIZON_MEAN_DEPTH, RetrievalSettings
from ..errors import DatabaseFault, MemoryBusy, SchemaError, MemoryNotFound, UsageError
from ..store import ft_scope
from ..store.lease import holder_gone, name_of
from ..triggers import FAMILIES, HORIZON, ITEM, SCENE_FAMILIES
from .lexical import (CACHE, KINDS, Bm25, Statistics, build, joined, lex_probe, lucene_parts, query_terms,
                      statistics_keys, term_key)
from .questions import named_days
from .results import COMPONENTS, Recall, RecalledScene
from .select import (ItemCandidates, SceneCandidates, best_per_scene, fused_orders, scene_cue, select_cue,
                     select_items, select_lane, select_recent, select_scenes, top_topics, trig_recall)

# a vector search asks its index for this many times the entries a ranking keeps (at most what the
# memory holds), so that the index's approximate walk misses fewer of the memory's nearest
# (docs/design-and-evidence.mds indexes")
OVERFETCH = 2.0
OVERFETCH_MAX = 100   # ... and at most this many more than it keeps (a deep search costs its depth)
# a memory holding at most this many entries in an index is ranked by each entry's cosine, no
# search (docs/design-and-evidence.md)
SCAN_UP_TO = 100
# a BM25 ranking asks the full-text index for this many times the entries it keeps (at least
# `candidates`), and scores them exactly on the memory's own statistics (docs/design-and-evidence.md)
BM25_OVERFETCH = 2.0
# a BM25 ranking leaves out of its full-text search a word that at least half of the memory's objects
# with text hold in each field, and this many in all (its weight is small, its postings long); when
# the ranking's last place does not then outscore every object holding only such words, it searches
# again with every word (retrieve/rankings; docs/design-and-evidence.md "Recall at scale")
COMMON_POSTINGS = 1000
# a packed recall whose question names a day (`questions.named_days`) lists this many scenes of that
# window right after its first: the best by their best turn's cosine (docs/concepts.md)
DAY_SCENES = 2
# the first query runs as two halves at once, each on its own connection, when the recall is the only
# one of this process under way (others keep the server's cores busy already) and the second half has
# an index to search: this half (the BM25 rankings, the topic and Horizon searches, the personas and
# the turns no scene holds yet) in the recall's thread, the other vector searches in a thread of their
# own that ends with the query (docs/design-and-evidence.md "Recall at scale")
WITH_BM25 = frozenset({"topic", "horizon", "horizon_views"})
BESIDE = ("scene_dense_ids", "scene_dense_scores", "dialogue_ids", "dialogue_scores", "lane_dense_ids",
          "lane_dense_scores", "lane_dense_scenes", "item_views", "scene_trigger_ids", "scene_trigger_scores",
          "item_dense_ids", "item_dense_scores")   # the columns the other half returns
CONSISTENT_WAIT_S = 30.0  # how long a recall runs again while its memory keeps being written
MAX_COMMIT_S = 600.0      # a `committing` mark whose lease lapsed still counts this long (a long commit)


def check_ablations(without: Iterable[str]) -> frozenset[str]:
    """The set of switched-off components; unknown names are an error naming them."""
    names = frozenset(w.strip() for w in without if w and w.strip())
    unknown = sorted(names - set(COMPONENTS))
    if unknown:
        raise UsageError(f"unknown component(s) {', '.join(unknown)}; choose from {', '.join(COMPONENTS)}")
    return names


def _with_day(scenes: list[RecalledScene], ranked: list[str], day: list[str]) -> tuple[list[RecalledScene], list[str]]:
    """The recalled scenes and the packed listing order (`Recall.ranked`) with the named day's
    scenes (`day`, best first, each with its place in `ranks["day"]`: the packer opens them
    first) right after the first scene; one recalled already moves up."""
    held = {s.id: s for s in scenes}
    days = [replace(held[key], ranks={**held[key].ranks, "day": n}) if key in held else
            RecalledScene(id=key, title=None, time=None, score=0.0, via=["dense"], ranks={"day": n}, turns=[])
            for n, key in enumerate(day, 1)]
    lead = scenes[:1] if scenes and scenes[0].id not in day else []
    listed = [s for s in scenes[len(lead):] if s.id not in day]
    first = ranked[:1] if ranked and ranked[0] not in day else []
    return lead + days + listed, first + day + [key for key in ranked if key not in day and key not in first]


def _state_of(row: dict) -> dict:
    """A memory's state from the state columns of a recall's query: a writer of this host that
    died while committing does not count as committing (its lease lapses on its own)."""
    committing = bool(row["committing"]) and not holder_gone(row["host"], row["pid"])
    return {"exists": row["exists"], "version": row["version"], "committing": committing}


_under_way = 0   # recalls of this process under way
_under_way_lock = threading.Lock()


@contextmanager
def under_way() -> Iterator[bool]:
    """Counts a recall as under way while the block runs; yields whether it is the only one."""
    global _under_way
    with _under_way_lock:
        _under_way += 1
        alone = _under_way == 1
    try:
        yield alone
    finally:
        with _under_way_lock:
            _under_way -= 1


def halves(params: dict) -> tuple[dict, dict] | None:
    """retrieve/rankings' parameters as two halves (this one's, the other's) when the other has an
    index to search, else None (the whole query costs less than a second connection)."""
    beside = {name for name, v in params["vec"].items() if v["k"] > 0 and name not in WITH_BM25}
    if not any(not params["vec"][name]["scan"] for name in beside):
        return None
    mine = {**params, "vec": {name: {**v, "k": 0} if name in beside else v for name, v in params["vec"].items()}}
    other = {**params, "vec": {name: v if name in beside else {**v, "k": 0} for name, v in params["vec"].items()},
             "bm25": {kind: {**b, "fetch": 0} for kind, b in params["bm25"].items()},
             "persona": False, "recent": False, "recent_lexical": False}
    return mine, other


def merged(mine: dict, other: dict) -> dict:
    """The row of the whole retrieve/rankings from its halves' rows (which read one state)."""
    row = {**mine, **{name: other[name] for name in BESIDE}}
    cosines = dict(zip(mine["scene_cosine_ids"], mine["scene_cosine_scores"]))
    cosines.update(zip(other["scene_cosine_ids"], other["scene_cosine_scores"]))
    row["scene_cosine_ids"], row["scene_cosine_scores"] = list(cosines), list(cosines.values())
    return row


def scored(rows: list[dict]) -> list[tuple[str, float]]:
    """(id, score) pairs of rows with an id and a score, best first."""
    return [(r["id"], r["score"]) for r in rows]


def ranking(row: dict, name: str) -> list[tuple[str, float]]:
    """(id, score) pairs of a ranking that retrieve/rankings returns as two parallel lists."""
    return list(zip(row[f"{name}_ids"], row[f"{name}_scores"], strict=True))


def trigger_views(row: dict) -> list[dict]:
    """The item trigger views of retrieve/rankings, best first, as `trig_recall` takes them."""
    return [{"host_id": h, "position": p, "channel": c, "score": s} for h, p, c, s in row["item_views"]]


class Cascade:
    """Runs recalls against one database with one set of retrieval settings."""

    def __init__(self, store, settings: RetrievalSettings, listed: int | None = None):
        """`listed`: with a token budget, how many scenes the recall without one hands over (kS
        before `RetrievalSettings.for_budget` deepened it; default `settings.k_scenes`)."""
        self.store = store
        self.cfg = settings
        self.listed = settings.k_scenes if listed is None else listed   # kS 0: nothing listed first

    def _run(self, name: str, params: dict) -> dict:
        return self.store.run(name, **params)[0]

    def _first(self, name: str, params: dict, alone: bool) -> dict | None:
        """The first query's row: retrieve/rankings in two halves at once (`halves`) when the
        recall is `alone`, or whole; None when the halves read different states (a write landed
        between them)."""
        split = halves(params) if alone and name == "retrieve/rankings" else None
        if split is None:
            return self._run(name, params)
        mine, other = split
        box: dict = {}

        def beside_half() -> None:
            try:
                box["row"] = self._run(name, other)
            except BaseException as exc:   # raised in the recall's thread, below
                box["error"] = exc

        helper = threading.Thread(target=beside_half, name="tmem-rankings", daemon=True)
        helper.start()
        try:
            row = self._run(name, mine)
        finally:
            helper.join()   # a recall leaves no thread behind
        if "error" in box:
            raise box["error"]
        beside = box["row"]
        if _state_of(row) != _state_of(beside):
            return None
        return merged(row, beside)

    def recall(self, memory_id: str, query: str, vector: list[float], speaker: str | None = None,
               without: Iterable[str] = (), trace: bool = False) -> Recall:
        """Evidence for `query` from one memory; `without` switches components off; `trace`
        keeps the candidates each layer fused (`Recall.trace`) for offline study.

        A recall sees one version of the memory: its first query reads the memory's state
        (version, and whether a writer is committing) before any ranking, its second reads it
        again after everything else, and the recall runs again while they differ or a commit is
        under way, for up to `CONSISTENT_WAIT_S` (while a commit is under way the first query
        returns the state alone, no search). Every write transaction sets a new version and
        is marked `committing` from before it starts until after it ends, so equal states with
        no mark mean no write landed between.
        """
        off = check_ablations(without)
        with under_way() as alone:
            return self._recall(memory_id, query, vector, speaker, off, trace, alone)

    def _recall(self, memory_id: str, query: str, vector: list[float], speaker: str | None, off: frozenset[str],
                trace: bool, alone: bool) -> Recall:
        t0 = time.perf_counter()
        deadline = time.monotonic() + CONSISTENT_WAIT_S
        attempts = 0
        terms = query_terms(query)
        stats = self.statistics(memory_id, None)
        rankings = "retrieve/rankings"
        while True:
            params = self._ranking_params(memory_id, query, terms, stats, vector, speaker, off)
            try:
                first = self._first(rankings, {**params, "past_commit": False}, alone)
                if first is not None and first["committing"] and not _state_of(first)["committing"]:
                    first = self._first(rankings, {**params, "past_commit": True}, alone)   # the mark of a dead writer of this host
                if first is None:   # the halves read two versions: a write landed between them
                    self._check_deadline(memory_id, deadline, attempts)
                    alone = False   # the query runs whole from now on: one state read, no such race
                    continue
                before = _state_of(first)
            except (DatabaseFault, SchemaError):   # a broken or missing index, an embedding set by hand
                if rankings == "retrieve/rankings_exact":
                    raise
                rankings = "retrieve/rankings_exact"   # every entry scored and checked, no index
                continue
            if not before["committing"]:
                if not before["exists"]:
                    raise MemoryNotFound(f"no memory {name_of(memory_id)!r} (it was dropped, replaced or never existed)")
                attempts += 1
                if stats is None or stats.version != before["version"]:  # written since it was loaded
                    self._check_deadline(memory_id, deadline, attempts)
                    stats = self.statistics(memory_id, stats)
                    continue
                first.update(self._lexical("recent_bm25", first["recent_texts"], terms, KINDS["turn"],
                                           self.cfg.candidates))
                result, after = self._finish(memory_id, query, vector, off, trace, first)
                if result is not None and after == before:
                    break
            self._check_deadline(memory_id, deadline, attempts)
            if before["committing"]:  # a commit is under way: give it a moment, then look again
                time.sleep(0.05)
        result.timings_ms["total"] = (time.perf_counter() - t0) * 1000
        result.attempts, result.version = attempts, before["version"]
        return result

    @staticmethod
    def _check_deadline(memory_id: str, deadline: float, attempts: int) -> None:
        if time.monotonic() >= deadline:
            raise MemoryBusy(f"memory {memory_id!r} kept changing for {CONSISTENT_WAIT_S:.0f} s while it was "
                             f"recalled ({attempts} attempts); try again when its writer has finished")

    def _where(self) -> str:
        return f"{self.store.settings.uri}/{self.store.settings.database or ''}"

    def reload(self, memory_id: str) -> Statistics | None:
        """Load the memory's Statistics of its current version into this process's cache, whatever
        it held (None when the memory does not exist): the first recall after a write then
        finds them there."""
        return self.statistics(memory_id, CACHE.get(self._where(), memory_id))

    def statistics(self, memory_id: str, stale: Statistics | None) -> Statistics | None:
        """The memory's Statistics: this process's copy unless it is `stale`, else read from the
        database (None when the memory does not exist)."""
        where = self._where()
        held = CACHE.get(where, memory_id)
        if held is not None and held is not stale:
            return held
        with CACHE.loading(where, memory_id):   # one load of a memory at a time in this process:
            held = CACHE.get(where, memory_id)   # who waited for it finds the copy just loaded
            if held is not None and held is not stale:
                return held
            rows = self.store.run("retrieve/statistics", memory_id=memory_id, keys=statistics_keys())
            if not rows:
                return None
            if not rows[0]["terms"]:
                raise SchemaError(f"memory {name_of(memory_id)!r} was written before its statistics were kept "
                                  "with it; run `tmem schema apply` once to add them")
            loaded = build(rows[0])
            CACHE.put(where, memory_id, loaded)
            return loaded

    @staticmethod
    def _lexical(name: str, docs: list | None, terms: list[str], boosts: dict[str, float],
                 limit: int | None = None) -> dict:
        """BM25 ranking `name` over `docs` ([id, text] lists) on their own statistics, as the
        two parallel lists retrieve/rankings gives its rankings."""
        ranked = Bm25(((d[0], {"text": d[1]}) for d in docs or []), boosts).rank(terms, limit)
        return {f"{name}_ids": [k for k, _ in ranked], f"{name}_scores": [v for _, v in ranked]}

    def _ranking_params(self, memory_id: str, query: str, terms: list[str], stats: Statistics | None,
                        vector: list[float], speaker: str | None, off: frozenset[str]) -> dict:
        """The parameters of retrieve/rankings: which BM25 and vector rankings this recall asks for,
        how deep, how far each index is searched, with the memory's statistics (`stats`)."""
        cfg = self.cfg
        scenes_on, items_on = "scene_layer" not in off, "item_channel" not in off
        topics_on = scenes_on and "topic_filter" not in off
        recent_on = "recent" not in off and cfg.k_recent > 0
        asked = {"topic": (topics_on, cfg.candidates), "scene": (scenes_on, cfg.candidates),
                 "item": (items_on, cfg.candidates), "turn": (self._lane_on(off), cfg.lane_depth())}
        bm25 = {}
        for kind, (on, depth) in asked.items():
            # the turns' statistics are read for every query with words: a weak match's test
            wanted = depth if on else 0
            asks = bool(terms) and stats is not None and (on or kind == "turn")
            fetch = math.ceil(max(wanted, cfg.candidates) * BM25_OVERFETCH) if asks else 0
            parts = lucene_parts(ft_scope(kind, memory_id), KINDS[kind], query if asks else "", terms)
            bm25[kind] = {"k": wanted, "fetch": fetch, "index": "turn_search" if kind == "turn" else "text_search",
                          "lucene": joined(parts), **parts, "common": COMMON_POSTINGS,
                          "fields": stats.fields(kind) if stats is not None else [],
                          "terms": [{"key": term_key(kind, f, t), "probe": lex_probe(f, t), "field": n, "word": j}
                                    for n, f in enumerate(KINDS[kind]) for j, t in enumerate(terms)] if asks else []}

        families = {f.key for f in SCENE_FAMILIES if scenes_on and f.ablation not in off}
        if items_on and ITEM.ablation not in off:
            families.add(ITEM.key)
        wanted = {f.key: f.depth * cfg.candidates if f.key in families else 0 for f in FAMILIES.values()}
        if ITEM.key in families:
            wanted[ITEM.key] += len(ITEM.views) * cfg.r_trigger_items  # R triggers of three views each
        # the Horizon family ranks scenes by the mean of their views (their Horizon vectors) or by their best view
        mean = cfg.horizon_views == "mean" and HORIZON.key in families
        lane = stats is not None and stats.turn_passages and scenes_on and "turns" not in off
        plan = {"topic": ("topic_embedding", cfg.candidates if topics_on else 0),
                "scene": ("scene_embedding", cfg.candidates if scenes_on and not topics_on else 0),
                "dialogue": ("scene_dialogue_embedding", cfg.candidates if scenes_on else 0),
                "lane": ("turn_embedding", cfg.lane_depth() if lane else 0),
                "item": ("item_embedding", cfg.candidates if items_on and (not scenes_on or cfg.item_search > 0) else 0),
                "item_views": (ITEM.key, wanted[ITEM.key]), "scene_views": ("scene", wanted["scene"]),
                "horizon": ("scene_horizon_embedding", HORIZON_MEAN_DEPTH * cfg.candidates if mean else 0),
                "horizon_views": (HORIZON.key, 0 if mean else wanted[HORIZON.key])}
        vec = {}
        for name, (index, k) in plan.items():
            held = stats.held(index) if stats is not None else 0   # no search deeper than the memory holds
            deeper = min(math.ceil(k * (OVERFETCH - 1)), OVERFETCH_MAX)
            vec[name] = {"k": min(k, held), "fetch": min(held, k + deeper),
                         "scan": held <= SCAN_UP_TO}   # so few that scoring each costs less than a search
        if vec["lane"]["k"]:   # the turn index holds the turns waiting for a scene too: the lane leaves them out
            vec["lane"]["fetch"] = min(stats.held("turn_embedding"), vec["lane"]["fetch"] + stats.pending)
        return {"memory_id": memory_id, "lease_id": name_of(memory_id), "vector": vector, "limit": cfg.candidates,
                "commit_ms": int(MAX_COMMIT_S * 1000), "speaker": speaker, "bm25": bm25, "vec": vec,
                # the scenes whose cosines the pool may need (the rest, rare, by retrieve/cosines):
                # twice the prefilter's topics, three times SceneCue's places in each of its lists
                "cosine": {"k0": cfg.k0, "topics": 2 * cfg.k_topics, "cue": 3 * cfg.cue_top,
                           "lane": cfg.candidates, "scene_lists": scenes_on and not topics_on},
                "recent": recent_on, "recent_lexical": recent_on and bool(terms),
                "persona": "persona" not in off}

    def _lane_on(self, off: frozenset[str]) -> bool:
        """Whether this recall asks for the turn lane: only the packer uses it, with a token budget."""
        return (self.cfg.budget_tokens is not None and self.cfg.lane_share > 0
                and "scene_layer" not in off and "turns" not in off)

    def _finish(self, memory_id: str, query: str, vector: list[float], off: frozenset[str], trace: bool,
                first: dict) -> tuple[Recall | None, dict]:
        """Choose scenes, run retrieve/finish, choose items: the recall (None when the rows do
        not hang together: a write landed) and the memory's state after."""
        nearest = ranking(first, "lane_dense")[:1]
        match, words = (nearest[0][1] if nearest else None), first["turn_words"]
        cfg = self.cfg.split_for(match, words)   # a weak match: the triggers get more say
        scenes_on, items_on = "scene_layer" not in off, "item_channel" not in off
        result = Recall(memory_id, query, persona=first["personas"] or [], match=match, words=words,
                        weak=cfg is not self.cfg)
        traced: dict = {}
        scene_ids: list[str] = []
        cue: list[RecalledScene] = []
        if scenes_on:
            cands = self._scene_candidates(memory_id, vector, off, first, cfg)
            result.scenes = select_scenes(cands, cfg)
            traced["scenes"] = cands
            if trace:   # the fused lists the ranks name, listed beside the lists they fuse
                traced["scene_orders"] = fused_orders(cands, cfg)
            scene_ids = [s.id for s in result.scenes]
            cue = select_cue(cands, cfg)
            if self.cfg.budget_tokens is not None:   # the order the packed scenes are listed in first
                whole = replace(self.cfg, budget_tokens=None, k_scenes=self.listed).split_for(match, words)
                result.ranked = [s.id for s in select_scenes(cands, whole)]
        via: dict[str, list[str]] = {}
        if items_on:  # flat search over the memory's items: the whole pool without the scene layer
            depth = cfg.candidates if not scenes_on else cfg.item_search
            for channel in ("bm25", "dense"):
                for key, _ in ranking(first, f"item_{channel}")[:depth]:
                    via.setdefault(key, []).append(channel)
        trigger = trig_recall(trigger_views(first), cfg, via) if items_on else []
        recent = select_recent(ranking(first, "recent_bm25"), ranking(first, "recent_dense"), cfg)
        lane = []
        if self._lane_on(off):   # asked for the match even when a weak match's shares leave the lane out
            traced["lane"] = {"bm25": ranking(first, "lane_bm25"), "dense": ranking(first, "lane_dense")}
            if cfg.lane_share > 0:
                lane = select_lane(traced["lane"]["bm25"], traced["lane"]["dense"], cfg)
        window = named_days(query) if scenes_on and cfg.budget_tokens is not None else None
        day = {"since": window[0], "until": window[1], "k": DAY_SCENES} if window else {"since": "", "until": "", "k": 0}
        second = self._run("retrieve/finish", {"memory_id": memory_id, "lease_id": name_of(memory_id),
                                               "vector": vector, "scene_ids": scene_ids, "day": day,
                                               "cue_ids": [s.id for s in cue],
                                               "items": items_on, "item_ids": list(via),
                                               "recent_ids": [t.id for t in recent], "lane_ids": [t.id for t in lane],
                                               "commit_ms": int(MAX_COMMIT_S * 1000)})
        after = _state_of(second)
        turns = {r["id"]: r for r in second["recent"]}
        for t in recent:
            row = turns.get(t.id)
            if row is None:  # the turn's scene was built meanwhile: a write landed
                return None, after
            t.speaker, t.text, t.time, t.seq = row["speaker"], row["text"], row["time"], row["seq"]
        result.recent = recent
        held = {r["id"]: r for r in second["lane"]}
        for t in lane:
            row = held.get(t.id)
            if row is None:  # the turn or its scene went meanwhile: a write landed
                return None, after
            t.speaker, t.text, t.time, t.n, t.scene = row["speaker"], row["text"], row["time"], row["n"], row["scene"]
        result.lane = lane
        if items_on:
            cands = self._item_candidates(first, second["items"], trigger, via)
            result.items = select_items(cands, cfg)
            traced["items"] = cands
        if scenes_on:
            rows = {r["id"]: r for r in second["scenes"]}
            result.cue = cue
            if second["day"]:
                result.scenes, result.ranked = _with_day(result.scenes, result.ranked, second["day"])
            for s in result.scenes + cue:
                row = rows.get(s.id)
                if row is None or not row["turns"]:  # a scene always has turns: a write landed
                    return None, after
                s.title, s.summary, s.narrative = row["title"], row["summary"], row["narrative"]
                # a scene stored without a time is dated by its first dated turn: its header then dates its turns once
                s.time = row["time"] or next((t["time"] for t in row["turns"] if t["time"]), None)
                s.turns = [{k: t[k] for k in ("id", "speaker", "text", "time")} for t in row["turns"]]
                result.turn_scores.update({t["id"]: t["score"] for t in row["turns"] if t["score"] is not None})
        if trace:
            result.trace = traced
        return result, after

    def _scene_candidates(self, memory_id: str, vector: list[float], off: frozenset[str], first: dict,
                          cfg: RetrievalSettings) -> SceneCandidates:
        """The scene layer's candidates: the first round's rankings, SceneCue, and the pool
        (prefiltered topics' scenes ∪ scenes reached otherwise) ranked by exact cosine, with
        `cfg` as split for this recall's match."""
        via: dict[str, list[str]] = {}
        by_topic: dict[str, None] = {}
        if "topic_filter" not in off:
            members = dict(zip(first["topic_ids"], first["topic_scenes"]))
            for topic in top_topics(ranking(first, "topic_bm25"), ranking(first, "topic_dense"), cfg):
                by_topic.update(dict.fromkeys(members.get(topic, [])))
        else:  # no topic gate: the lexical and dense rankings over all scenes fill the pool
            for channel in ("bm25", "dense"):
                for key, _ in ranking(first, f"scene_{channel}"):
                    via.setdefault(key, []).append(channel)
        cue_lists = {"dialogue": ranking(first, "dialogue")}
        for fam in SCENE_FAMILIES:
            if fam.ablation not in off:  # a family switched off is no channel at all
                cue_lists[fam.channel] = ranking(first, fam.channel)
        cue = scene_cue(cue_lists, cfg, via)
        turn = best_per_scene(ranking(first, "lane_dense")[:cfg.candidates],   # the lane may ask deeper
                              first["lane_dense_scenes"][:cfg.candidates])
        for key, _ in turn[:cfg.cue_top]:  # a scene whose turn is among the nearest joins the pool,
            channels = via.setdefault(key, [])   # credited as a match of its dialogue (shared/spec/cli.md)
            if "dialogue" not in channels:
                channels.append("dialogue")
        cosine = dict(ranking(first, "scene_cosine"))
        missing = [s for s in {**by_topic, **dict.fromkeys(via)} if s not in cosine]
        if missing:   # a fusion lifted a scene from deep in its lists (or it has no embedding)
            cosine.update(scored(self.store.run("retrieve/cosines", memory_id=memory_id, vector=vector, ids=missing)))
        pool = [s for s in {**by_topic, **dict.fromkeys(via)} if s in cosine]
        for s in pool:
            if s in by_topic:
                via.setdefault(s, []).insert(0, "topic")
        dense = sorted(((s, cosine[s]) for s in pool), key=lambda pair: (-pair[1], pair[0]))
        members = set(pool)
        return SceneCandidates(bm25=[(s, v) for s, v in ranking(first, "scene_bm25") if s in members],
                               dense=dense, cue=cue, cue_lists=cue_lists, via=via,
                               turn=[(s, v) for s, v in turn if s in members])

    @staticmethod
    def _item_candidates(first: dict, rows: list[dict], trigger, via) -> ItemCandidates:
        """The item layer's candidates: the chosen scenes' items ∪ TrigRecall ∪ flat search
        (the whole pool without the scene layer, the top `item_search` with it), with the exact
        cosine of each (rows arrive best first)."""
        for r in rows:
            if r["by_scene"]:
                via.setdefault(r["id"], []).insert(0, "scene")
        pool = {r["id"] for r in rows}
        return ItemCandidates(bm25=[(i, v) for i, v in ranking(first, "item_bm25") if i in pool],
                              dense=scored(rows), trigger=trigger, via=via,
                              rows={r["id"]: r for r in rows})
