"""One memory's recall depends on that memory alone: its BM25 statistics are its own
(retrieve/lexical.py), so importing, replacing or dropping other memories on the same server
changes nothing in it (docs/design-and-evidence.md)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

from tmem_graph import api

TMEM = [sys.executable, "-m", "tmem_graph.cli"]


def tmem(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(TMEM + list(args), capture_output=True, text=True, env=os.environ, timeout=600)


def memory(memory_id: str, subjects: list[str]) -> dict:
    """A memory of one scene per subject, every scene of the same shape (two turns, a title,
    a summary and a narrative that differ only by the subject)."""
    turns, scenes = [], []
    for n, subject in enumerate(subjects, 1):
        ids = [f"D{n}:1", f"D{n}:2"]
        turns += [{"id": ids[0], "speaker": "Ana", "text": f"We watched the {subject} all afternoon.",
                   "time": f"2024-03-{n % 28 + 1:02d}T10:00:00", "session": n},
                  {"id": ids[1], "speaker": "Ben", "text": f"The {subject} were the best part of the trip.",
                   "time": f"2024-03-{n % 28 + 1:02d}T10:01:00", "session": n}]
        scenes.append({"id": f"s{n}", "title": f"Watching {subject}", "summary": f"Ana and Ben watched {subject}.",
                       "narrative": f"Ana and Ben spent an afternoon watching {subject} on their trip.",
                       "turn_ids": ids, "time": f"2024-03-{n % 28 + 1:02d}T10:00:00"})
    return {"format": "tmem-memory/1", "memory_id": memory_id, "speakers": ["Ana", "Ben"], "turns": turns,
            "scenes": scenes, "topics": [], "items": [], "personas": []}


def recall_json(memory_id: str, query: str, *extra: str) -> dict:
    """`tmem recall --json` as a user runs it, timings aside."""
    done = tmem("recall", memory_id, query, "--json", *extra)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    out.pop("timings_ms", None)
    return out


def test_a_memorys_bm25_ranking_does_not_move_when_another_memory_is_imported(store, new_id, tmp_path):
    a, b = new_id("iso-a"), new_id("iso-b")
    path = tmp_path / "a.json"
    path.write_text(json.dumps(memory(a, ["quokkas", "zeppelins"])), encoding="utf-8")
    assert tmem("import", str(path)).returncode == 0
    before = recall_json(a, "quokkas and zeppelins", "--without", "topic_filter,turns")
    # the two scenes are of the same shape: BM25 over this memory alone ties them, ordered by id
    assert [s["id"] for s in before["scenes"]] == ["s1", "s2"]

    other = tmp_path / "b.json"   # 60 scenes about zeppelins: zeppelins become common server-wide
    other.write_text(json.dumps(memory(b, ["zeppelins"] * 60)), encoding="utf-8")
    assert tmem("import", str(other)).returncode == 0
    after = recall_json(a, "quokkas and zeppelins", "--without", "topic_filter,turns")
    assert after == before


def test_a_memorys_whole_recall_is_the_same_whatever_happens_to_the_others(store, encoder, new_id):
    rng = random.Random(7)
    subjects = ["quokkas", "zeppelins", "walruses", "lighthouses", "glaciers", "tapas", "oysters", "violins"]
    a = new_id("iso-a")
    api.import_memory(memory(a, subjects), store=store, encoder=encoder)
    queries = [" and ".join(rng.sample(subjects, 2)) for _ in range(4)] + ["the best part of the trip"]
    settings = [(), ("--budget-tokens", "300")]
    seen = {(q, s): recall_json(a, q, *s) for q in queries for s in settings}

    others = [new_id("iso-o") for _ in range(3)]
    for n, other in enumerate(others):   # other memories that share every word of this one, and more
        api.import_memory(memory(other, rng.sample(subjects, 5) * (n + 2) + ["zeppelins"] * 20),
                          store=store, encoder=encoder)
    api.import_memory(memory(others[0], ["quokkas"] * 40), store=store, encoder=encoder, replace=True)
    store.drop(others[1])
    for (q, s), want in seen.items():
        assert recall_json(a, q, *s) == want, (q, s)


def test_tmem_memories_pages_in_id_order(store, encoder, new_id, monkeypatch):
    base = new_id("page")
    ids = [f"{base}-{c}" for c in "abc"]
    try:
        for memory_id in reversed(ids):
            api.import_memory(memory(memory_id, ["quokkas"]), store=store, encoder=encoder)
        first = tmem("memories", "--json", "--limit", "2", "--after", base)
        assert first.returncode == 0, first.stderr
        assert [r["id"] for r in json.loads(first.stdout)] == ids[:2]
        assert json.loads(first.stdout)[0]["turns"] == 2 and json.loads(first.stdout)[0]["scenes"] == 1
        text = tmem("memories", "--limit", "2", "--after", base)
        assert f"--after {ids[1]}" in text.stderr   # where the next page starts
        rest = json.loads(tmem("memories", "--json", "--limit", "2", "--after", ids[1]).stdout)
        assert [r["id"] for r in rest][:1] == ids[2:]
        whole = [r["id"] for r in api.list_memories(store=store)]
        monkeypatch.setattr(api, "LIST_PAGE", 2)
        paged = [r["id"] for r in api.list_memories(store=store)]   # every page of two, in order
        assert paged == whole == sorted(whole) and set(ids) <= set(whole)
    finally:
        for memory_id in ids:
            store.drop(memory_id)


def test_preload_holds_the_current_version_for_the_next_recall(store, encoder, new_id, team_doc):
    """After a write (here a deleted item: a new version), `Memory.preload` loads the memory's
    statistics and index counts of that version into the cache, and the next recall ranks with
    them rather than loading its own (the service preloads each memory its worker built)."""
    from tmem_graph.retrieve.cascade import Cascade
    from tmem_graph.retrieve.lexical import CACHE

    team_doc["memory_id"] = new_id("preload")
    mem, _ = api.import_memory(team_doc, store=store, encoder=encoder)
    try:
        where = Cascade(store, store.settings.retrieval)._where()
        mem.recall("Where should the team eat?")
        before = CACHE.get(where, mem.pid)
        assert before is not None and before.version == store.memory(mem.id)["version"]
        item = mem.list("items")["objects"][0]["id"]
        mem.delete("item", item)
        version = store.memory(mem.id)["version"]
        assert version != before.version and CACHE.get(where, mem.pid) is before   # the cache is behind
        mem.preload()
        held = CACHE.get(where, mem.pid)
        assert held is not before and held.version == version
        assert held.held("item_embedding") == before.held("item_embedding") - 1   # the deleted item's embedding
        recalled = mem.recall("Where should the team eat?")
        assert CACHE.get(where, mem.pid) is held and recalled.version == version   # ranked with it
    finally:
        mem.drop()
