"""The T-Mem retrieval cascade: topic prefilter → scene selection (with SceneCue) → items
(with TrigRecall) → persona. Each step is a named Cypher query; fusion is RRF in Python.

Deviation from the reference code, on purpose: it reorders each fused pool with a
cross-encoder reranker that no offline package provides here. Without one, scenes and items
reached only through triggers would have no lexical score and sink under BM25 (see
shared/docs/baselines.md), so the SceneCue ranking and the TrigRecall ranking take part in
the final RRF of their layer as one more list ("cue" and "trigger").
"""

from __future__ import annotations

import time
from typing import Iterable

import neo4j

from ..config import RetrievalSettings
from ..errors import TmemError
from ..queries import query as cypher
from ..store import ft_scope
from .fuse import ranks_of, rrf
from .lucene import scoped_query
from .results import ABLATIONS, Recall, RecalledItem, RecalledScene

TOPIC_FIELDS = {"title": 2.0, "keywords_text": 1.0, "summary": 1.0}
SCENE_FIELDS = {"title": 3.0, "summary": 2.0, "narrative": 1.0, "text": 1.0}
ITEM_FIELDS = {"text": 1.0}
VIEW_VIA = {"concept": "entity", "bridge": "bridge", "joint": "joint"}


def cosine(score: float) -> float:
    """Neo4j reports cosine similarity mapped to [0, 1]; return the raw cosine in [-1, 1]."""
    return 2.0 * score - 1.0


def check_ablations(without: Iterable[str]) -> frozenset[str]:
    """The set of switched-off components; unknown names are an error naming them."""
    names = frozenset(w.strip() for w in without if w and w.strip())
    unknown = sorted(names - set(ABLATIONS))
    if unknown:
        raise TmemError(f"unknown component(s) {', '.join(unknown)}; choose from {', '.join(ABLATIONS)}")
    return names


def _add(via: dict[str, list[str]], ids: Iterable[str], channel: str) -> None:
    for key in ids:
        channels = via.setdefault(key, [])
        if channel not in channels:
            channels.append(channel)


class _Run:
    """One recall: the memory, the query, its vector and an open session."""

    def __init__(self, session: neo4j.Session, memory_id: str, text: str, vector: list[float]):
        self.session, self.memory_id, self.text, self.vector = session, memory_id, text, vector

    def q(self, name: str, **params) -> list[dict]:
        params = {"memory_id": self.memory_id, **params}
        return [r.data() for r in self.session.run(cypher(name), params)]

    def lexical(self, kind: str, fields: dict[str, float], limit: int) -> list[str]:
        lucene = scoped_query(ft_scope(kind, self.memory_id), fields, self.text)
        return [] if lucene is None else [r["id"] for r in self.q("retrieve/fulltext", lucene=lucene, limit=limit)]

    def dense(self, name: str, limit: int) -> list[str]:
        return [r["id"] for r in self.q(name, vector=self.vector, limit=limit)]

    def cosines(self, name: str, ids: list[str]) -> dict[str, float]:
        """Exact cosine of the query for each id, best first."""
        if not ids:
            return {}
        return {r["id"]: cosine(r["score"]) for r in self.q(name, ids=ids, vector=self.vector)}

    def trigger_views(self, family: str, limit: int) -> list[dict]:
        rows = self.q("retrieve/triggers_dense", vector=self.vector, family=family, limit=limit)
        for r in rows:
            r["cos"] = cosine(r["score"])
        return rows


def best_per_host(views: list[dict]) -> list[str]:
    """Hosts ranked by their best view (views arrive best first)."""
    return list(dict.fromkeys(v["host_id"] for v in views))


class Cascade:
    """Runs recalls against one database with one set of retrieval settings."""

    def __init__(self, store, settings: RetrievalSettings):
        self.store = store
        self.cfg = settings

    def recall(self, memory_id: str, query: str, vector: list[float], speaker: str | None = None,
               without: Iterable[str] = ()) -> Recall:
        """Evidence for `query` from one memory; `without` switches components off."""
        off = check_ablations(without)
        result = Recall(memory_id, query)
        t0 = time.perf_counter()
        with self.store.session() as session:
            run = _Run(session, memory_id, query, vector)
            scenes: list[RecalledScene] = []
            if "scene_layer" not in off:
                scenes = self._scenes(run, off)
                result.scenes = scenes
            if "item_channel" not in off:
                result.items = self._items(run, off, [s.id for s in scenes])
            if "persona" not in off:
                result.persona = run.q("retrieve/personas", speaker=speaker)
        result.timings_ms["total"] = (time.perf_counter() - t0) * 1000
        return result

    # -- scene layer ---------------------------------------------------------------------------
    def _scenes(self, run: _Run, off: frozenset[str]) -> list[RecalledScene]:
        cfg = self.cfg
        via: dict[str, list[str]] = {}
        rankings: dict[str, list[str]] = {}
        if "topic_filter" not in off:
            topics = rrf({"bm25": run.lexical("topic", TOPIC_FIELDS, cfg.candidates),
                          "dense": run.dense("retrieve/topics_dense", cfg.candidates)}, cfg.k0)
            topic_ids = [t for t, _ in topics[:cfg.k_topics]]
            if topic_ids:
                _add(via, [r["id"] for r in run.q("retrieve/topic_scenes", topic_ids=topic_ids)], "topic")
        else:  # no topic gate: the lexical and dense rankings over all scenes fill the pool
            _add(via, run.lexical("scene", SCENE_FIELDS, cfg.candidates), "bm25")
            _add(via, run.dense("retrieve/scenes_dense", cfg.candidates), "dense")

        cue = self._scene_cue(run, off, rankings)
        for channel in ("dialogue", "scene_trigger", "horizon"):
            top = set(rankings.get(channel, [])[:cfg.cue_top])
            _add(via, [s for s in cue if s in top], channel)
        for s in cue:  # reached by the fused cue only: credit its best channel
            if s not in via or not set(via[s]) & {"dialogue", "scene_trigger", "horizon"}:
                best = min(ranks_of(s, {c: rankings.get(c, []) for c in ("dialogue", "scene_trigger", "horizon")}).items(),
                           key=lambda kv: kv[1])[0]
                _add(via, [s], best)
        pool = list(via)
        if not pool:
            return []
        bm25 = [s for s in run.lexical("scene", SCENE_FIELDS, max(cfg.candidates, 4 * len(pool))) if s in via]
        dense = list(run.cosines("retrieve/scenes_cosine", pool))
        final_lists = {"bm25": bm25, "dense": dense}
        if cue and cfg.cue_in_fusion:
            final_lists["cue"] = cue
        fused = rrf(final_lists, cfg.k0)[:cfg.k_scenes]
        rankings.update(final_lists)
        rows = {r["id"]: r for r in run.q("retrieve/scenes_fetch", ids=[s for s, _ in fused])}
        return [RecalledScene(id=s, title=rows[s]["title"], time=rows[s]["time"], score=score, via=via[s],
                              ranks=ranks_of(s, rankings), turns=rows[s]["turns"],
                              summary=rows[s]["summary"], narrative=rows[s]["narrative"])
                for s, score in fused]

    def _scene_cue(self, run: _Run, off: frozenset[str], rankings: dict[str, list[str]]) -> list[str]:
        """SceneCue: RRF (k0 = cue_k0) of dialogue, Scene-trigger and Horizon rankings; top cue_top."""
        cfg = self.cfg
        rankings["dialogue"] = run.dense("retrieve/scenes_dialogue_dense", cfg.candidates)
        if "scene_trigger" not in off:
            rankings["scene_trigger"] = best_per_host(run.trigger_views("scene", 4 * cfg.candidates))
        if "horizon" not in off:
            rankings["horizon"] = best_per_host(run.trigger_views("horizon", 5 * cfg.candidates))
        return [s for s, _ in rrf(rankings, cfg.cue_k0)[:cfg.cue_top]]

    # -- item layer ----------------------------------------------------------------------------
    def _items(self, run: _Run, off: frozenset[str], scene_ids: list[str]) -> list[RecalledItem]:
        cfg = self.cfg
        via: dict[str, list[str]] = {}
        if "scene_layer" in off:  # no scenes to expand: flat lexical + dense over all items
            _add(via, run.lexical("item", ITEM_FIELDS, cfg.candidates), "bm25")
            _add(via, run.dense("retrieve/items_dense", cfg.candidates), "dense")
        elif scene_ids:
            _add(via, [r["id"] for r in run.q("retrieve/scene_items", scene_ids=scene_ids)], "scene")
        trigger_ranking: list[str] = []
        if "entity_bridge" not in off:
            trigger_ranking = self._trig_recall(run, via)
        pool = list(via)
        if not pool:
            return []
        lists = {"bm25": [i for i in run.lexical("item", ITEM_FIELDS, max(cfg.candidates, 4 * len(pool)))
                          if i in via],
                 "dense": list(run.cosines("retrieve/items_cosine", pool))}
        if trigger_ranking and cfg.cue_in_fusion:
            lists["trigger"] = trigger_ranking
        fused = rrf(lists, cfg.k0)[:cfg.k_items]
        rows = {r["id"]: r for r in run.q("retrieve/items_fetch", ids=[i for i, _ in fused])}
        return [RecalledItem(id=i, text=rows[i]["text"], kind=rows[i]["kind"], scene_ids=rows[i]["scene_ids"],
                             score=score, via=via[i], ranks=ranks_of(i, lists), time=rows[i]["time"])
                for i, score in fused]

    def _trig_recall(self, run: _Run, via: dict[str, list[str]]) -> list[str]:
        """TrigRecall: the R best item triggers (best view each), gated at cosine τ; their items."""
        cfg = self.cfg
        best: dict[tuple[str, int], float] = {}
        channels: dict[tuple[str, int], list[str]] = {}
        for v in run.trigger_views("item", 3 * cfg.r_trigger_items + cfg.candidates):
            key = (v["host_id"], v["position"])
            best.setdefault(key, v["cos"])
            if v["cos"] >= cfg.tau:
                channels.setdefault(key, []).append(VIEW_VIA[v["channel"]])
        top = sorted(best, key=lambda k: -best[k])[:cfg.r_trigger_items]
        ranking = []
        for key in top:
            if best[key] >= cfg.tau:
                _add(via, [key[0]], channels[key][0])
                for channel in channels[key][1:]:
                    _add(via, [key[0]], channel)
                if key[0] not in ranking:
                    ranking.append(key[0])
        return ranking
