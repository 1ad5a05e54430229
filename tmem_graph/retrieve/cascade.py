"""The T-Mem retrieval cascade: topic prefilter → scene selection (with SceneCue) → items
(with TrigRecall) → persona. The choices (SceneCue, the scene and item fusion, TrigRecall's
gate) are the pure functions of `select.py`, fed with what two queries return:

1. `retrieve/rankings`: the memory's state, the scenes of the ranked topics, the turns no scene
   holds yet and the personas, in one round trip; every BM25 and vector ranking is made here, on
   the memory's own statistics and embeddings (`lexical.py`, `vectors.py`: loaded once per
   version of the memory, exact, and independent of every other memory), with the exact cosine
   of every scene they reached;
2. `retrieve/finish`: the chosen scenes with their turns, the item pool (the chosen scenes'
   items ∪ the items TrigRecall reached), and the memory's state again.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Iterable

from ..config import HORIZON_MEAN_DEPTH, RetrievalSettings
from ..errors import MemoryBusy, MemoryNotFound, UsageError
from ..store.lease import holder_gone, name_of
from ..triggers import FAMILIES, HORIZON, ITEM, SCENE_FAMILIES
from .lexical import CACHE, KINDS, Bm25, Lexicon, build, query_terms
from .vectors import Vectors
from .results import COMPONENTS, Recall, RecalledScene
from .select import (ItemCandidates, SceneCandidates, best_per_scene, fused_orders, scene_cue, select_cue,
                     select_items, select_lane, select_recent, select_scenes, top_topics, trig_recall)

CONSISTENT_WAIT_S = 30.0  # how long a recall runs again while its memory keeps being written
MAX_COMMIT_S = 600.0      # a `committing` mark whose lease lapsed still counts this long (a long commit)


def check_ablations(without: Iterable[str]) -> frozenset[str]:
    """The set of switched-off components; unknown names are an error naming them."""
    names = frozenset(w.strip() for w in without if w and w.strip())
    unknown = sorted(names - set(COMPONENTS))
    if unknown:
        raise UsageError(f"unknown component(s) {', '.join(unknown)}; choose from {', '.join(COMPONENTS)}")
    return names


def _state_of(row: dict) -> dict:
    """A memory's state from the state columns of a recall's query: a writer of this host that
    died while committing does not count as committing (its lease lapses on its own)."""
    committing = bool(row["committing"]) and not holder_gone(row["host"], row["pid"])
    return {"exists": row["exists"], "version": row["version"], "committing": committing}


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
        t0 = time.perf_counter()
        deadline = time.monotonic() + CONSISTENT_WAIT_S
        attempts = 0
        terms = query_terms(query)
        lexicon = self.lexicon(memory_id, None)
        while True:
            params, ranked = self._ranking_params(memory_id, terms, lexicon, vector, speaker, off)
            first = self._run("retrieve/rankings", {**params, "past_commit": False})
            before = _state_of(first)
            if first["committing"] and not before["committing"]:  # the mark of a dead writer of this host
                first = self._run("retrieve/rankings", {**params, "past_commit": True})
                before = _state_of(first)
            if not before["committing"]:
                if not before["exists"]:
                    raise MemoryNotFound(f"no memory {name_of(memory_id)!r} (it was dropped, replaced or never existed)")
                attempts += 1
                if lexicon is None or lexicon.version != before["version"]:  # written since it was loaded
                    self._check_deadline(memory_id, deadline, attempts)
                    lexicon = self.lexicon(memory_id, lexicon)
                    continue
                first.update(ranked)
                reached = [*first["topic_scenes"], first["scene_bm25_ids"], first["scene_dense_ids"], first["dialogue_ids"],
                           first["lane_dense_scenes"], first["scene_trigger_ids"], first["horizon_ids"]]
                cosine = lexicon.vectors.cosines((s for ids in reached for s in ids), vector)
                first["scene_cosine_ids"], first["scene_cosine_scores"] = [k for k, _ in cosine], [v for _, v in cosine]
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

    def reload(self, memory_id: str) -> Lexicon | None:
        """Load the memory's Lexicon of its current version into this process's cache, whatever
        it held (None when the memory does not exist): the first recall after a write then
        finds it there."""
        return self.lexicon(memory_id, CACHE.get(self._where(), memory_id))

    def lexicon(self, memory_id: str, stale: Lexicon | None) -> Lexicon | None:
        """The memory's Lexicon: this process's copy unless it is `stale`, else loaded from the
        database (None when the memory does not exist)."""
        where = self._where()
        held = CACHE.get(where, memory_id)
        if held is not None and held is not stale:
            return held
        with CACHE.loading(where, memory_id):   # one load of a memory at a time in this process:
            held = CACHE.get(where, memory_id)   # who waited for it finds the copy just loaded
            if held is not None and held is not stale:
                return held
            rows = self.store.run("retrieve/lexicon", memory_id=memory_id)
            if not rows:
                return None
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

    def _ranking_params(self, memory_id: str, terms: list[str], lexicon: Lexicon | None,
                        vector: list[float], speaker: str | None, off: frozenset[str]) -> tuple[dict, dict]:
        """The parameters of retrieve/rankings, and the BM25 and vector rankings of the memory's
        Lexicon (which ones this recall asks for, how deep), in the shape of that query's columns."""
        cfg = self.cfg
        scenes_on, items_on = "scene_layer" not in off, "item_channel" not in off
        topics_on = scenes_on and "topic_filter" not in off
        recent_on = "recent" not in off and cfg.k_recent > 0
        asked = {"topic_bm25": ("topic", topics_on, cfg.candidates), "scene_bm25": ("scene", scenes_on, cfg.candidates),
                 "item_bm25": ("item", items_on, cfg.candidates), "lane_bm25": ("turn", self._lane_on(off), cfg.lane_depth())}
        ranked = {}
        for name, (kind, on, depth) in asked.items():
            found = lexicon.kinds[kind].rank(terms, depth) if on and lexicon is not None and terms else []
            ranked[f"{name}_ids"], ranked[f"{name}_scores"] = [k for k, _ in found], [v for _, v in found]
        # how close the nearest turn is in words (None: a query without words, e.g. stop words
        # alone): with the nearest in meaning, it decides a weak match
        ranked["turn_words"] = lexicon.kinds["turn"].held(terms) if lexicon is not None else None

        families = [f.key for f in SCENE_FAMILIES if scenes_on and f.ablation not in off]
        if items_on and ITEM.ablation not in off:
            families.append(ITEM.key)
        wanted = {f.key: f.depth * cfg.candidates for f in FAMILIES.values()}
        wanted[ITEM.key] += len(ITEM.views) * cfg.r_trigger_items  # R triggers of three views each
        if cfg.horizon_views == "mean":   # the scenes of this many nearest views are listed (each by all its views)
            wanted[HORIZON.key] = max(wanted[HORIZON.key], HORIZON_MEAN_DEPTH * cfg.candidates)
        wanted.update({"topic_embedding": cfg.candidates, "scene_embedding": cfg.candidates,
                       "scene_dialogue_embedding": cfg.candidates, "item_embedding": cfg.candidates,
                       "turn_embedding": cfg.lane_depth()})
        # no ranking goes deeper than the memory holds (Lexicon.depth)
        depths = {index: lexicon.depth(index, k) if lexicon is not None else 0 for index, k in wanted.items()}
        ranked.update(self._dense(lexicon, vector, depths, families, off))
        return {"memory_id": memory_id, "lease_id": name_of(memory_id), "vector": vector, "limit": cfg.candidates,
                "commit_ms": int(MAX_COMMIT_S * 1000), "speaker": speaker,
                "topic_ids": list(dict.fromkeys(ranked["topic_bm25_ids"] + ranked["topic_dense_ids"])),
                "recent": recent_on, "recent_lexical": recent_on and bool(terms),
                "persona": "persona" not in off}, ranked

    def _dense(self, lexicon: Lexicon | None, vector: list[float], depths: dict[str, int], families: list[str],
               off: frozenset[str]) -> dict:
        """The vector rankings, exact over the memory's own embeddings (`vectors.py`), in the
        shape of parallel lists: topics, scenes, dialogues, the turn lane's turns with their
        scenes, each scene's best Scene-trigger view, the Horizon hosts (the mean of a scene's
        views with `horizon_views` "mean"), the item trigger views and the items."""
        out: dict = {}

        def put(name: str, pairs: list[tuple[str, float]]) -> None:
            out[f"{name}_ids"], out[f"{name}_scores"] = [k for k, _ in pairs], [v for _, v in pairs]

        vec = lexicon.vectors if lexicon is not None else Vectors({})
        scenes_on, items_on = "scene_layer" not in off, "item_channel" not in off
        topics_on = scenes_on and "topic_filter" not in off
        put("topic_dense", vec.nearest("topic_embedding", vector, depths["topic_embedding"]) if topics_on else [])
        put("scene_dense", vec.nearest("scene_embedding", vector, depths["scene_embedding"])
            if scenes_on and not topics_on else [])
        put("dialogue", vec.nearest("scene_dialogue_embedding", vector, depths["scene_dialogue_embedding"])
            if scenes_on else [])
        turns, scenes = vec.turns(vector, depths["turn_embedding"]) if scenes_on and "turns" not in off else ([], [])
        put("lane_dense", turns)
        out["lane_dense_scenes"] = scenes
        for fam in SCENE_FAMILIES:
            mean = fam is HORIZON and self.cfg.horizon_views == "mean"
            put(fam.channel, vec.hosts(fam.key, vector, depths[fam.key], mean) if fam.key in families else [])
        views = vec.views(ITEM.key, vector, depths[ITEM.key]) if ITEM.key in families else []
        out["item_views"] = [[h, p, c, v] for (h, p, c), v in views if p is not None]
        put("item_dense", vec.nearest("item_embedding", vector, depths["item_embedding"])
            if items_on and (not scenes_on or self.cfg.item_search > 0) else [])
        return out

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
            cands = self._scene_candidates(off, first, cfg)
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
        second = self._run("retrieve/finish", {"memory_id": memory_id, "lease_id": name_of(memory_id),
                                               "vector": vector, "scene_ids": scene_ids,
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
            for s in result.scenes + cue:
                row = rows.get(s.id)
                if row is None or not row["turns"]:  # a scene always has turns: a write landed
                    return None, after
                s.title, s.time, s.summary, s.narrative = row["title"], row["time"], row["summary"], row["narrative"]
                s.turns = [{k: t[k] for k in ("id", "speaker", "text", "time")} for t in row["turns"]]
                result.turn_scores.update({t["id"]: t["score"] for t in row["turns"] if t["score"] is not None})
        if trace:
            result.trace = traced
        return result, after

    def _scene_candidates(self, off: frozenset[str], first: dict, cfg: RetrievalSettings) -> SceneCandidates:
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
