"""The T-Mem retrieval cascade: topic prefilter → scene selection (with SceneCue) → items
(with TrigRecall) → persona. Each step is a named Cypher query run through the store; the
choices between them (SceneCue, the scene and item fusion, TrigRecall's gate) are the pure
functions of `select.py`, fed with the rankings the queries returned.

The independent rankings of the first step run concurrently, so a recall costs three round
trips to the database: rankings, scene pool, then scene details together with the item pool.
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Iterable

from ..config import RetrievalSettings
from ..errors import MemoryBusy, MemoryNotFound, UsageError
from ..store import ft_scope
from ..store.lease import holder_gone
from ..triggers import ITEM, SCENE_FAMILIES
from .lucene import scoped_query
from .results import ABLATIONS, Recall
from .select import (ItemCandidates, SceneCandidates, best_view, scene_cue, select_items,
                     select_scenes, top_topics, trig_recall)

TOPIC_FIELDS = {"title": 2.0, "keywords_text": 1.0, "summary": 1.0}
SCENE_FIELDS = {"title": 3.0, "summary": 2.0, "narrative": 1.0, "text": 1.0}
ITEM_FIELDS = {"text": 1.0}
CONSISTENT_WAIT_S = 30.0  # how long a recall runs again while its memory keeps being written
MAX_COMMIT_S = 600.0      # a `committing` mark whose lease lapsed still counts this long (a long commit)


def check_ablations(without: Iterable[str]) -> frozenset[str]:
    """The set of switched-off components; unknown names are an error naming them."""
    names = frozenset(w.strip() for w in without if w and w.strip())
    unknown = sorted(names - set(ABLATIONS))
    if unknown:
        raise UsageError(f"unknown component(s) {', '.join(unknown)}; choose from {', '.join(ABLATIONS)}")
    return names


def _state_of(rows: list[dict]) -> dict:
    """A memory's state from retrieve/memory_state: a writer of this host that died while
    committing does not count as committing (its lease lapses on its own)."""
    row = rows[0]
    committing = bool(row["committing"]) and not holder_gone(row["host"], row["pid"])
    return {"exists": row["exists"], "version": row["version"], "committing": committing}


def scored(rows: list[dict]) -> list[tuple[str, float]]:
    """(id, score) pairs of a ranking query's rows, best first."""
    return [(r["id"], r["score"]) for r in rows]


class Cascade:
    """Runs recalls against one database with one set of retrieval settings."""

    def __init__(self, store, settings: RetrievalSettings, workers: int = 6,
                 pool: ThreadPoolExecutor | None = None):
        self.store = store
        self.cfg = settings
        self._owns_pool = pool is None
        self._pool = pool or ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tmem-recall")

    def close(self) -> None:
        """Stop the cascade's threads (unless the pool was lent to it)."""
        if self._owns_pool:
            self._pool.shutdown(wait=False)

    def _run(self, name: str, params: dict) -> list[dict]:
        return self.store.run(name, **params)

    def recall(self, memory_id: str, query: str, vector: list[float], speaker: str | None = None,
               without: Iterable[str] = (), trace: bool = False) -> Recall:
        """Evidence for `query` from one memory; `without` switches components off; `trace`
        keeps the candidates each layer fused (`Recall.trace`) for offline study.

        A recall sees one version of the memory: it reads the memory's state (version, and
        whether a writer is committing) before its first query and again after its last, and
        runs again while they differ or a commit is under way, for up to `CONSISTENT_WAIT_S`.
        Every write transaction sets a new version and is marked `committing` from before it
        starts until after it ends, so equal states with no mark mean no write landed between.
        """
        off = check_ablations(without)
        t0 = time.perf_counter()
        deadline = time.monotonic() + CONSISTENT_WAIT_S
        attempts = 0
        before = self._state(memory_id)
        while True:
            if before["committing"]:  # a commit is under way: give it a moment, then look again
                self._check_deadline(memory_id, deadline, attempts)
                time.sleep(0.05)
                before = self._state(memory_id)
                continue
            if not before["exists"]:
                raise MemoryNotFound(f"no memory {memory_id!r} (it was dropped or never existed)")
            attempts += 1
            result = self._recall_once(memory_id, query, vector, speaker, off, trace)
            after = self._state(memory_id)
            if result is not None and after == before:
                break
            self._check_deadline(memory_id, deadline, attempts)
            before = after  # read after every query of this pass: a valid start for the next
        result.timings_ms["total"] = (time.perf_counter() - t0) * 1000
        result.attempts = attempts
        return result

    @staticmethod
    def _check_deadline(memory_id: str, deadline: float, attempts: int) -> None:
        if time.monotonic() >= deadline:
            raise MemoryBusy(f"memory {memory_id!r} kept changing for {CONSISTENT_WAIT_S:.0f} s while it was "
                             f"recalled ({attempts} attempts); try again when its writer has finished")

    def _state(self, memory_id: str) -> dict:
        return _state_of(self._run("retrieve/memory_state", {"memory_id": memory_id,
                                                             "commit_ms": int(MAX_COMMIT_S * 1000)}))

    def _recall_once(self, memory_id: str, query: str, vector: list[float], speaker: str | None,
                     off: frozenset[str], trace: bool) -> Recall | None:
        """One pass of the cascade (None when its rows do not hang together: a write landed)."""
        cfg = self.cfg
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
            for fam in SCENE_FAMILIES:
                if fam.ablation not in off:
                    submit(fam.channel, "retrieve/triggers_dense", vector=vector, family=fam.key,
                           limit=fam.depth * cfg.candidates)
        if items_on:
            lexical("item_bm25", "item", ITEM_FIELDS)
            if not scenes_on:
                submit("item_dense", "retrieve/items_dense", **dense)
            if ITEM.ablation not in off:  # R triggers of three views each, and a margin
                submit("item_views", "retrieve/triggers_dense", vector=vector, family=ITEM.key,
                       limit=len(ITEM.views) * cfg.r_trigger_items + ITEM.depth * cfg.candidates)
        if "persona" not in off:
            submit("persona", "retrieve/personas", speaker=speaker)
        got = {key: job.result() for key, job in jobs.items()}

        result = Recall(memory_id, query, persona=got.get("persona", []))
        traced: dict = {}
        scene_ids: list[str] = []
        if scenes_on:
            cands = self._scene_candidates(memory_id, vector, off, got)
            result.scenes = select_scenes(cands, cfg)
            traced["scenes"] = cands
            scene_ids = [s.id for s in result.scenes]
            submit("scene_rows", "retrieve/scenes_fetch", ids=scene_ids)  # while items are chosen
        if items_on:
            flat = {} if scenes_on else {"bm25": scored(got.get("item_bm25", [])),
                                         "dense": scored(got.get("item_dense", []))}
            cands = self._item_candidates(memory_id, vector, scene_ids, got, flat)
            result.items = select_items(cands, cfg)
            traced["items"] = cands
        if scenes_on:
            rows = {r["id"]: r for r in jobs["scene_rows"].result()}
            for s in result.scenes:
                row = rows.get(s.id)
                if row is None or not row["turns"]:  # a scene always has turns: a write landed
                    return None
                s.title, s.time, s.turns = row["title"], row["time"], row["turns"]
                s.summary, s.narrative = row["summary"], row["narrative"]
        if trace:
            result.trace = traced
        return result

    def _scene_candidates(self, memory_id, vector, off, got) -> SceneCandidates:
        """The scene layer's candidates: the rankings of the first round, SceneCue, then the
        pool query (prefiltered topics' scenes ∪ scenes reached otherwise, exact cosine)."""
        cfg = self.cfg
        via: dict[str, list[str]] = {}
        topic_ids: list[str] = []
        if "topic_filter" not in off:
            topic_ids = top_topics(scored(got.get("topic_bm25", [])), scored(got.get("topic_dense", [])), cfg)
        else:  # no topic gate: the lexical and dense rankings over all scenes fill the pool
            for channel in ("bm25", "dense"):
                for key, _ in scored(got.get(f"scene_{channel}", [])):
                    via.setdefault(key, []).append(channel)
        cue_lists = {"dialogue": scored(got.get("dialogue", []))}
        for fam in SCENE_FAMILIES:
            if fam.channel in got:
                cue_lists[fam.channel] = best_view(got[fam.channel])
        cue = scene_cue(cue_lists, cfg, via)
        rows = self._run("retrieve/scene_pool", {"memory_id": memory_id, "topic_ids": topic_ids,
                                                 "ids": list(via), "vector": vector})
        for r in rows:
            if r["by_topic"]:
                via.setdefault(r["id"], []).insert(0, "topic")
        pool = {r["id"] for r in rows}
        return SceneCandidates(bm25=[(s, v) for s, v in scored(got.get("scene_bm25", [])) if s in pool],
                               dense=scored(rows), cue=cue, cue_lists=cue_lists, via=via)

    def _item_candidates(self, memory_id, vector, scene_ids, got, flat) -> ItemCandidates:
        """The item layer's candidates: the selected scenes' items ∪ TrigRecall (∪ flat search
        without the scene layer), with the exact cosine of each."""
        via: dict[str, list[str]] = {}
        for channel, ranking in flat.items():
            for key, _ in ranking:
                via.setdefault(key, []).append(channel)
        trigger = trig_recall(got.get("item_views", []), self.cfg, via)
        rows = self._run("retrieve/item_pool", {"memory_id": memory_id, "scene_ids": scene_ids,
                                                "ids": list(via), "vector": vector})
        for r in rows:
            if r["by_scene"]:
                via.setdefault(r["id"], []).insert(0, "scene")
        pool = {r["id"] for r in rows}
        return ItemCandidates(bm25=[(i, v) for i, v in scored(got.get("item_bm25", [])) if i in pool],
                              dense=scored(rows), trigger=trigger, via=via,
                              rows={r["id"]: r for r in rows})
