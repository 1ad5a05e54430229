"""The T-Mem retrieval cascade: topic prefilter → scene selection (with SceneCue) → items
(with TrigRecall) → persona. Each step is a named Cypher query; fusion is RRF in Python.

The independent rankings of the first step run concurrently (one session each), so a
recall costs three round trips to the database: rankings, scene pool, then scene details
together with the item pool.

Deviation from the reference code, on purpose: it reorders each fused pool with a
cross-encoder reranker that no offline package provides here. Without one, scenes and items
reached only through triggers would have no lexical score and sink under BM25 (see
shared/docs/baselines.md), so the SceneCue ranking and the TrigRecall ranking take part in
the final RRF of their layer as one more list ("cue" and "trigger"); `cue_in_fusion=False`
gives the reference behaviour.
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Iterable

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
CUE_CHANNELS = ("dialogue", "scene_trigger", "horizon")
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


def hosts_by_best_view(views: list[dict]) -> list[str]:
    """Host ids ranked by their best trigger view (views arrive best first)."""
    return list(dict.fromkeys(v["host_id"] for v in views))


class Cascade:
    """Runs recalls against one database with one set of retrieval settings."""

    def __init__(self, store, settings: RetrievalSettings, workers: int = 6):
        self.store = store
        self.cfg = settings
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tmem-recall")

    def close(self) -> None:
        self._pool.shutdown(wait=False)

    def _run(self, name: str, params: dict) -> list[dict]:
        with self.store.session() as s:
            return [r.data() for r in s.run(cypher(name), params)]

    def recall(self, memory_id: str, query: str, vector: list[float], speaker: str | None = None,
               without: Iterable[str] = ()) -> Recall:
        """Evidence for `query` from one memory; `without` switches components off."""
        off = check_ablations(without)
        cfg = self.cfg
        t0 = time.perf_counter()
        jobs: dict[str, Future] = {}

        def submit(key: str, name: str, **params) -> None:
            jobs[key] = self._pool.submit(self._run, name, {"memory_id": memory_id, **params})

        def lexical(key: str, kind: str, fields: dict[str, float]) -> None:
            lucene = scoped_query(ft_scope(kind, memory_id), fields, query)
            if lucene is not None:
                submit(key, "retrieve/fulltext", lucene=lucene, limit=cfg.candidates)

        scenes_on, items_on = "scene_layer" not in off, "item_channel" not in off
        dense = {"vector": vector, "limit": cfg.candidates}
        if scenes_on:
            if "topic_filter" not in off:
                lexical("topic_bm25", "topic", TOPIC_FIELDS)
                submit("topic_dense", "retrieve/topics_dense", **dense)
            else:
                submit("scene_dense", "retrieve/scenes_dense", **dense)
            lexical("scene_bm25", "scene", SCENE_FIELDS)
            submit("dialogue", "retrieve/scenes_dialogue_dense", **dense)
            if "scene_trigger" not in off:
                submit("scene_trigger", "retrieve/triggers_dense", vector=vector, family="scene",
                       limit=4 * cfg.candidates)
            if "horizon" not in off:
                submit("horizon", "retrieve/triggers_dense", vector=vector, family="horizon",
                       limit=5 * cfg.candidates)
        if items_on:
            lexical("item_bm25", "item", ITEM_FIELDS)
            if not scenes_on:
                submit("item_dense", "retrieve/items_dense", **dense)
            if "entity_bridge" not in off:
                submit("item_views", "retrieve/triggers_dense", vector=vector, family="item",
                       limit=3 * cfg.r_trigger_items + cfg.candidates)
        if "persona" not in off:
            submit("persona", "retrieve/personas", speaker=speaker)
        got = {key: job.result() for key, job in jobs.items()}
        ids = lambda key: [r["id"] for r in got.get(key, [])]  # noqa: E731

        result = Recall(memory_id, query, persona=got.get("persona", []))
        scene_ids: list[str] = []
        if scenes_on:
            result.scenes = self._select_scenes(memory_id, vector, off, got, ids)
            scene_ids = [s.id for s in result.scenes]
            submit("scene_rows", "retrieve/scenes_fetch", ids=scene_ids)  # while items are chosen
        if items_on:
            flat = {} if scenes_on else {"bm25": ids("item_bm25"), "dense": ids("item_dense")}
            result.items = self._select_items(memory_id, vector, scene_ids, got, ids, flat)
        if scenes_on:
            rows = {r["id"]: r for r in jobs["scene_rows"].result()}
            for s in result.scenes:
                row = rows[s.id]
                s.title, s.time, s.turns = row["title"], row["time"], row["turns"]
                s.summary, s.narrative = row["summary"], row["narrative"]
        result.timings_ms["total"] = (time.perf_counter() - t0) * 1000
        return result

    # -- scene layer ---------------------------------------------------------------------------
    def _select_scenes(self, memory_id, vector, off, got, ids) -> list[RecalledScene]:
        cfg = self.cfg
        via: dict[str, list[str]] = {}
        topic_ids: list[str] = []
        if "topic_filter" not in off:
            topics = rrf({"bm25": ids("topic_bm25"), "dense": ids("topic_dense")}, cfg.k0)
            topic_ids = [t for t, _ in topics[:cfg.k_topics]]
        else:  # no topic gate: the lexical and dense rankings over all scenes fill the pool
            _add(via, ids("scene_bm25"), "bm25")
            _add(via, ids("scene_dense"), "dense")

        cue_lists = {"dialogue": ids("dialogue")}
        for channel in ("scene_trigger", "horizon"):
            if channel in got:
                cue_lists[channel] = hosts_by_best_view(got[channel])
        cue = [s for s, _ in rrf(cue_lists, cfg.cue_k0)[:cfg.cue_top]]
        for s in cue:  # credit each channel that ranks it within the cue budget, else its best one
            ranks = ranks_of(s, cue_lists)
            strong = [c for c, r in ranks.items() if r <= cfg.cue_top]
            for channel in strong or [min(ranks, key=ranks.get)]:
                _add(via, [s], channel)

        rows = self._run("retrieve/scene_pool", {"memory_id": memory_id, "topic_ids": topic_ids,
                                                 "ids": list(via), "vector": vector})
        for r in rows:
            if r["by_topic"]:
                via.setdefault(r["id"], []).insert(0, "topic")
        final = {"bm25": [s for s in ids("scene_bm25") if s in via], "dense": [r["id"] for r in rows]}
        if cue and cfg.cue_in_fusion:
            final["cue"] = cue
        rankings = {**cue_lists, **final}
        return [RecalledScene(id=s, title=None, time=None, score=score, via=via[s],
                              ranks=ranks_of(s, rankings), turns=[])
                for s, score in rrf(final, cfg.k0)[:cfg.k_scenes]]

    # -- item layer ----------------------------------------------------------------------------
    def _select_items(self, memory_id, vector, scene_ids, got, ids, flat) -> list[RecalledItem]:
        cfg = self.cfg
        via: dict[str, list[str]] = {}
        for channel, ranking in flat.items():
            _add(via, ranking, channel)
        trigger_ranking = self._trig_recall(got.get("item_views", []), via)
        rows = self._run("retrieve/item_pool", {"memory_id": memory_id, "scene_ids": scene_ids,
                                                "ids": list(via), "vector": vector})
        if not rows:
            return []
        for r in rows:
            if r["by_scene"]:
                via.setdefault(r["id"], []).insert(0, "scene")
        final = {"bm25": [i for i in ids("item_bm25") if i in via], "dense": [r["id"] for r in rows]}
        if trigger_ranking and cfg.cue_in_fusion:
            final["trigger"] = trigger_ranking
        info = {r["id"]: r for r in rows}
        return [RecalledItem(id=i, text=info[i]["text"], kind=info[i]["kind"],
                             scene_ids=info[i]["scene_ids"], score=score, via=via[i],
                             ranks=ranks_of(i, final), time=info[i]["time"])
                for i, score in rrf(final, cfg.k0)[:cfg.k_items]]

    def _trig_recall(self, views: list[dict], via: dict[str, list[str]]) -> list[str]:
        """TrigRecall: the R best item triggers (each scored by its best view), gated at
        cosine τ; returns their items, best first, and records the views that passed."""
        cfg = self.cfg
        best: dict[tuple[str, int], float] = {}
        passed: dict[tuple[str, int], list[str]] = {}
        for v in views:  # best first
            key, cos = (v["host_id"], v["position"]), cosine(v["score"])
            best.setdefault(key, cos)
            if cos >= cfg.tau:
                passed.setdefault(key, []).append(VIEW_VIA[v["channel"]])
        ranking: list[str] = []
        for key in sorted(best, key=lambda k: -best[k])[:cfg.r_trigger_items]:
            for channel in passed.get(key, []):
                _add(via, [key[0]], channel)
                if key[0] not in ranking:
                    ranking.append(key[0])
        return ranking
