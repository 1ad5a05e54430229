"""What a reader sees while a memory is written: one version, whole, never a mix."""

from __future__ import annotations

import threading
import time

from tests.fixtures.synthetic import graft, synthetic_memory
from tmem_graph import api
from tmem_graph.encode import Encoder


class MemoEncoder(Encoder):
    """The real encoder, each text encoded once: replacements then cost only their writes."""

    def __init__(self, inner: Encoder):
        self.inner, self.name, self.dim, self.memo = inner, inner.name, inner.dim, {}

    def encode(self, texts, batch_size: int = 64):
        new = [t for t in dict.fromkeys(texts) if t not in self.memo]
        self.memo.update(zip(new, self.inner.encode(new, batch_size)))
        return [self.memo[t] for t in texts]


def _versions(memory_id: str) -> tuple[dict, dict]:
    """Two documents of one memory whose every id differs: "a" ids as made, "b" ids prefixed."""
    a = synthetic_memory(memory_id, n_items=60, n_scenes=12, horizon_per_scene=2, seed=3)
    empty = {**a, "speakers": [], "turns": [], "scenes": [], "topics": [], "items": [], "personas": []}
    return a, graft(empty, a, "b-")


def _version_of(recall) -> set[str]:
    ids = [s.id for s in recall.scenes] + [i.id for i in recall.items]
    return {"b" if x.startswith("b-") else "a" for x in ids}


def test_recalls_during_replacements_see_one_whole_version(store, encoder, new_id):
    memory_id = new_id("replaced")
    a, b = _versions(memory_id)
    encoder = MemoEncoder(encoder)
    api.import_memory(a, store=store, encoder=encoder)
    api.import_memory(b, store=store, encoder=encoder, replace=True)  # every text encoded once
    stop = threading.Event()
    replaced: list[int] = []
    failures: list[BaseException] = []

    def writer() -> None:
        try:
            n = 0
            while not stop.is_set() and n < 30:
                api.import_memory(b if n % 2 == 0 else a, store=store, encoder=encoder, replace=True)
                n += 1
                replaced.append(n)
                time.sleep(0.2)  # a real `import --replace` reads and encodes its file between commits
        except BaseException as exc:  # the test fails below if the writer did
            failures.append(exc)

    thread = threading.Thread(target=writer)
    memory = api.Memory(memory_id, store=store, encoder=encoder)
    thread.start()
    seen, mixed, retried = {"a": 0, "b": 0}, [], 0
    try:
        queries = ["who talked about a guitar near the lake", "a promotion at the office",
                   "later planned a road trip", "felt anxious about a tax return"]
        n = 0
        while thread.is_alive():
            recall = memory.recall(queries[n % len(queries)])
            versions = _version_of(recall)
            if len(versions) > 1:
                mixed.append([s.id for s in recall.scenes] + [i.id for i in recall.items])
            for v in versions:
                seen[v] += 1
            assert all(s.turns for s in recall.scenes), "a recalled scene without its turns"
            retried += recall.attempts > 1
            n += 1
    finally:
        stop.set()
        thread.join()
    assert not failures, failures
    assert mixed == []
    assert len(replaced) == 30 and seen["a"] and seen["b"], (replaced, seen)  # both versions were read
    assert retried, "no recall overlapped a replacement: the test did not test anything"
