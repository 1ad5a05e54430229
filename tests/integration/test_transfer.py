"""Whole memories in and out of the real Neo4j: round-trip, all-or-nothing, isolation, drop."""

import copy
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.fixtures.statistics import assert_statistics_exact
from tests.fixtures.synthetic import synthetic_memory
from tests.fixtures.cases import BROKEN, mutate
from tests.integration.conftest import node_count
from tmem_graph import api
from tmem_graph.errors import MemoryBusy, MemoryExists, MemoryNotFound, SchemaError, ValidationError
from tmem_graph.format import parse_document, to_document


def load(store, encoder, doc, replace=False):
    return api.import_memory(doc, store=store, encoder=encoder, replace=replace)[0]


def test_export_import_export_round_trip(store, encoder, new_id, team_doc):
    team_doc["memory_id"] = new_id("rt")
    first = load(store, encoder, team_doc).export()
    assert first == to_document(parse_document(team_doc)[0])  # nothing lost or reordered
    first_again = copy.deepcopy(first)
    first_again["memory_id"] = new_id("rt2")
    second = load(store, encoder, first_again).export()
    assert {**second, "memory_id": first["memory_id"]} == first


def test_round_trip_of_a_larger_synthetic_memory(store, encoder, new_id):
    doc = synthetic_memory(new_id("syn"), n_items=300, n_scenes=40)
    memory = load(store, encoder, doc)
    exported = memory.export()
    assert exported == to_document(parse_document(doc)[0])
    assert_statistics_exact(store, memory.pid)   # written in batches with the objects


def test_a_memory_written_before_its_statistics_gets_them_from_schema_apply(store, encoder, new_id, team_doc):
    team_doc["memory_id"] = new_id("unstated")
    memory = load(store, encoder, team_doc)
    before = memory.recall("Where should the team go for dinner?").to_json()
    with store.session("WRITE") as s:   # as a memory written by an older version holds nothing of them
        s.run("MATCH (t:Term {memory_id: $m}) DETACH DELETE t", m=memory.pid).consume()
        s.run("MATCH (n:Topic|Scene|Item|Turn|Trigger {memory_id: $m}) REMOVE n.lex, n.lex_len", m=memory.pid).consume()
        s.run("MATCH (m:Memory {id: $m}) REMOVE m.terms SET m.version = 'old'", m=memory.pid).consume()
    with pytest.raises(SchemaError, match="tmem schema apply"):
        memory.recall("Where should the team go for dinner?")
    api.apply_schema(store=store, encoder=encoder)
    assert_statistics_exact(store, memory.pid)
    after = memory.recall("Where should the team go for dinner?").to_json()
    assert {k: v for k, v in after.items() if k not in ("timings_ms", "version")} == \
        {k: v for k, v in before.items() if k not in ("timings_ms", "version")}


def test_graph_shape_and_embeddings(store, encoder, new_id, team_doc):
    memory_id = team_doc["memory_id"] = new_id("shape")
    load(store, encoder, team_doc)
    with store.session("READ") as s:
        row = s.run(
            "MATCH (m:Memory {id: $m}) "
            "RETURN m.encoder AS enc, m.dim AS dim, "
            "COUNT { MATCH (:Scene {memory_id: $m})-[:NEXT]->(:Scene) } AS next, "
            "COUNT { MATCH (:Scene {memory_id: $m})-[:HAS_TURN]->(:Turn) } AS has_turn, "
            "COUNT { MATCH (:Topic {memory_id: $m})-[:HAS_SCENE]->(:Scene) } AS has_scene, "
            "COUNT { MATCH (:Scene {memory_id: $m})-[:HAS_ITEM]->(:Item) } AS has_item, "
            "COUNT { MATCH (:Trigger {memory_id: $m})-[:TRIGGERS]->() } AS triggers, "
            "COUNT { MATCH (n {memory_id: $m}) WHERE (n:Topic OR n:Scene OR n:Item OR n:Trigger) "
            "        AND size(n.embedding) <> $dim } AS bad_vectors",
            m=memory_id, dim=encoder.dim).single().data()
    assert row == {"enc": encoder.name, "dim": encoder.dim, "next": 3, "has_turn": 15,
                   "has_scene": 5, "has_item": 7, "triggers": 31, "bad_vectors": 0}
    counts = store.counts(memory_id)
    assert counts["trigger_families"] == {"horizon": 5, "item": 16, "scene": 10}


@pytest.mark.parametrize("path, value, expected", BROKEN)
def test_broken_documents_are_rejected_and_nothing_is_written(store, encoder, new_id, team_doc,
                                                              path, value, expected):
    memory_id = team_doc["memory_id"] = new_id("broken")
    mutate(team_doc, path, value)
    with pytest.raises(ValidationError) as info:
        load(store, encoder, team_doc)
    assert any(p.startswith(expected) for p in info.value.problems)
    assert node_count(store, memory_id) == 0


def test_a_failure_half_way_through_an_import_writes_nothing(store, encoder, new_id, team_doc, monkeypatch):
    memory_id = team_doc["memory_id"] = new_id("atomic")
    real = store.tx_run

    def fail_on_items(tx, name, **params):
        if name == "store/items_merge":
            raise RuntimeError("simulated crash half-way through the import")
        return real(tx, name, **params)

    monkeypatch.setattr(store, "tx_run", fail_on_items)
    with pytest.raises(RuntimeError):
        load(store, encoder, team_doc)
    assert node_count(store, memory_id) == 0


def test_existing_memory_is_refused_unless_replaced_and_replace_is_idempotent(store, encoder, new_id,
                                                                              team_doc):
    memory_id = team_doc["memory_id"] = new_id("dup")
    load(store, encoder, team_doc)
    before = node_count(store, memory_id)
    with pytest.raises(MemoryExists):
        load(store, encoder, team_doc)
    load(store, encoder, team_doc, replace=True)
    assert node_count(store, memory_id) == before   # the same document again: the same nodes, no debris
    team_doc["items"][0]["text"] = "Priya is allergic to shellfish."
    memory = load(store, encoder, team_doc, replace=True)
    assert memory.export()["items"][0]["text"] == "Priya is allergic to shellfish."
    assert_statistics_exact(store, memory.pid)   # the replacement's statistics alone: its own words
    assert node_count(store, memory_id) - term_count(store, memory_id) == before - terms_of_the_example(store, encoder)


def term_count(store, memory_id: str) -> int:
    """The :Term nodes of every version of a memory (its name, or "<name>#<token>")."""
    with store.session("READ") as s:
        return s.run("MATCH (n:Term) WHERE n.memory_id >= $m AND n.memory_id < $m + '$' RETURN count(n) AS c",
                     m=memory_id).single()["c"]


def terms_of_the_example(store, encoder) -> int:
    """How many :Term nodes the unchanged example memory has (imported once more, then dropped)."""
    from tests.conftest import load_fixture
    doc = {**load_fixture(), "memory_id": "dup-terms-" + encoder.name.replace(":", "-")}
    memory = load(store, encoder, doc, replace=True)
    try:
        return term_count(store, memory.id)
    finally:
        memory.drop()


def test_a_replacement_is_staged_in_batches_and_switched_at_once(store, encoder, new_id, team_doc, monkeypatch):
    """`import --replace` writes the new version in batches under a hidden staged id: every
    reader sees the old version whole until one small switch, then the new one whole; the old
    one is deleted; a Memory opened before the switch, an add, a listing and a drop all follow."""
    memory_id = team_doc["memory_id"] = new_id("staged-replace")
    old = load(store, encoder, team_doc).export()
    before = node_count(store, memory_id) - term_count(store, memory_id)   # its :Term nodes follow its words
    reader = api.Memory(memory_id, store=store, encoder=encoder)
    assert reader.recall("Who is allergic?").scenes   # its header (the version's id) is read now
    monkeypatch.setattr(store, "settings", dataclasses.replace(store.settings, write_batch=7))
    new = copy.deepcopy(team_doc)
    new["items"][0]["text"] = "Priya is allergic to shellfish."
    real, seen = store.tx_run, []

    def watch(tx, name, **params):   # what any reader sees while the staged version is written
        if name.startswith("store/") and name.endswith(("_merge", "_link", "_chain", "_pending")):
            seen.append(api.Memory(memory_id, store=store, encoder=encoder).export() == old)
            assert params["memory_id"] != memory_id and params["memory_id"].startswith(memory_id + "#")
        return real(tx, name, **params)

    monkeypatch.setattr(store, "tx_run", watch)
    load(store, encoder, new, replace=True)
    monkeypatch.setattr(store, "tx_run", real)
    assert len(seen) > 12 and all(seen)   # many batches, the old version whole during each
    expected = to_document(parse_document(new)[0])
    assert api.Memory(memory_id, store=store, encoder=encoder).export() == expected
    assert node_count(store, memory_id) - term_count(store, memory_id) == before   # the old version is gone
    assert store.hidden(memory_id) == []
    header = store.memory(memory_id)
    assert_statistics_exact(store, header["pid"])   # the new version's statistics, nothing of the old one
    assert header["id"] == memory_id and header["pid"] != memory_id

    hit = reader.recall("Who is allergic to shellfish?")   # opened before the switch: runs on the new version
    assert hit.memory_id == memory_id and reader.pid == header["pid"]
    assert any("shellfish" in i.text for i in hit.items)
    assert reader.stats()["memory_id"] == memory_id and reader.list("items")["memory_id"] == memory_id
    added = reader.add([{"speaker": "Ana", "text": "Priya also avoids peanuts."}])
    assert added.added and node_count(store, memory_id) - term_count(store, memory_id) == before + 1
    assert [m["id"] for m in api.list_memories(store=store) if m["id"].startswith("staged-replace")].count(memory_id) == 1

    again = load(store, encoder, team_doc, replace=True)   # a replacement of a replaced memory
    assert again.export() == old and node_count(store, memory_id) - term_count(store, memory_id) == before
    assert store.memory(memory_id)["pid"] not in (memory_id, header["pid"])
    assert again.drop() > 0 and node_count(store, memory_id) == 0
    assert load(store, encoder, team_doc).export() == old   # the name is free again: a plain import
    assert store.memory(memory_id)["pid"] == memory_id


def test_a_switch_whose_reply_is_lost_keeps_the_new_version(store, encoder, new_id, team_doc, monkeypatch):
    """The switch commits but its reply is lost (a connection reset, a Ctrl-C during the commit):
    the import fails, yet the version the server made the memory is not deleted as debris."""
    from contextlib import contextmanager

    from tmem_graph.errors import DatabaseUnavailable

    memory_id = team_doc["memory_id"] = new_id("lost-reply")
    load(store, encoder, team_doc)
    new = copy.deepcopy(team_doc)
    new["items"][0]["text"] = "Priya is allergic to shellfish."
    real_run, real_tx, switched = store.tx_run, store.transaction, []

    def watch(tx, name, **params):
        switched.append(name == "store/memory_switch")
        return real_run(tx, name, **params)

    @contextmanager
    def lost_reply():
        with real_tx() as tx:
            yield tx
        if switched and switched[-1]:   # committed: now the reply is lost
            raise DatabaseUnavailable("commit: the connection was lost; the write's outcome is unknown")

    monkeypatch.setattr(store, "tx_run", watch)
    monkeypatch.setattr(store, "transaction", lost_reply)
    with pytest.raises(DatabaseUnavailable):
        load(store, encoder, new, replace=True)
    monkeypatch.undo()
    assert api.Memory(memory_id, store=store, encoder=encoder).export() == to_document(parse_document(new)[0])
    assert load(store, encoder, new, replace=True).export() == to_document(parse_document(new)[0])
    assert store.hidden(memory_id) == []


def test_a_killed_replacement_leaves_the_old_version_whole(store, encoder, new_id, tmp_path):
    """A real `tmem import --replace` is SIGKILLed while its staged version is written (20 rows
    per transaction): the old version stays whole and writable, `tmem db check` names the staged
    debris, and the next replacement removes it and completes."""
    memory_id = new_id("staged-kill")
    small = synthetic_memory(memory_id, n_items=8, n_scenes=2, turns_per_scene=3, horizon_per_scene=1, seed=3)
    old = load(store, encoder, small).export()
    before = node_count(store, memory_id)
    big = synthetic_memory(memory_id, n_items=120, n_scenes=12, turns_per_scene=5, horizon_per_scene=2)
    path = tmp_path / "memory.json"
    path.write_text(json.dumps(big), encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "tmem_graph.cli", "import", "--replace", str(path)],
                            env={**os.environ, "TMEM_WRITE_BATCH": "20"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 600
    while node_count(store, memory_id) < before + 100:   # the staged version is being written
        assert proc.poll() is None, "the import finished before it could be killed: " + proc.stderr.read().decode()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()

    memory = api.Memory(memory_id, store=store, encoder=encoder)
    assert memory.export() == old and store.memory(memory_id)["pid"] == memory_id
    assert memory.recall("what did they say").memory_id == memory_id
    assert [m["id"] for m in api.list_memories(store=store)].count(memory_id) == 1
    assert memory.add([{"speaker": "Ana", "text": "still here"}]).added   # the old version takes adds
    staged = [h["id"] for h in store.hidden(memory_id)]
    assert len(staged) == 1 and staged[0].startswith(memory_id + "#")
    check = subprocess.run([sys.executable, "-m", "tmem_graph.cli", "db", "check"], capture_output=True, text=True,
                           env=os.environ, timeout=600)
    assert f"a version of memory {memory_id!r} ({staged[0]!r}) is hidden" in check.stdout, check.stdout

    time.sleep(0.5)   # the killed writer's lease is taken over at once (its process is gone)
    whole = load(store, encoder, big, replace=True)
    assert whole.export() == to_document(parse_document(big)[0])
    assert store.hidden(memory_id) == []
    assert whole.drop() > 0 and node_count(store, memory_id) == 0


def test_two_memories_never_see_each_other(store, encoder, new_id, team_doc):
    a_id, b_id = new_id("a"), new_id("b")
    a_doc = copy.deepcopy(team_doc)
    a_doc["memory_id"] = a_id
    b_doc = copy.deepcopy(team_doc)  # the very same object ids in another memory
    b_doc["memory_id"] = b_id
    b_doc["turns"][0]["text"] = "Completely different text in memory B."
    a = load(store, encoder, a_doc)
    b = load(store, encoder, b_doc)
    assert a.export()["turns"][0]["text"] == team_doc["turns"][0]["text"]
    assert b.export()["turns"][0]["text"] == "Completely different text in memory B."
    assert store.counts(a_id) == store.counts(b_id)
    with store.session("READ") as s:
        crossing = s.run("MATCH (x {memory_id: $a})-[]-(y) WHERE y.memory_id IS NOT NULL AND "
                         "y.memory_id <> $a RETURN count(*) AS c", a=a_id).single()["c"]
    assert crossing == 0


def test_drop_removes_one_memory_only(store, encoder, new_id, team_doc):
    keep_id, gone_id = new_id("keep"), new_id("gone")
    load(store, encoder, {**team_doc, "memory_id": keep_id})
    load(store, encoder, {**team_doc, "memory_id": gone_id})
    kept = node_count(store, keep_id)
    assert api.Memory(gone_id, store=store).drop() == kept
    assert node_count(store, gone_id) == 0
    assert node_count(store, keep_id) == kept
    with pytest.raises(MemoryNotFound):
        api.Memory(gone_id, store=store).export()
    listed = {r["id"]: r for r in api.list_memories(store=store)}
    assert gone_id not in listed and listed[keep_id]["items"] == 6


# -- staged writes: a new memory is written in batches behind one small switch --------------------

def test_a_killed_import_is_never_seen_and_the_next_import_clears_what_it_left(store, encoder, new_id, tmp_path):
    """A real `tmem import` is SIGKILLed while its batches are written (20 rows per transaction):
    no reader, listing or add sees a part of the memory, and importing it again gives it whole."""
    memory_id = new_id("staged")
    doc = synthetic_memory(memory_id, n_items=120, n_scenes=12, turns_per_scene=5, horizon_per_scene=2)
    path = tmp_path / "memory.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "tmem_graph.cli", "import", str(path)],
                            env={**os.environ, "TMEM_WRITE_BATCH": "20"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 600
    while node_count(store, memory_id) < 100:   # the hidden memory is being written, batch by batch
        assert proc.poll() is None, "the import finished before it could be killed: " + proc.stderr.read().decode()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL

    assert not store.exists(memory_id)
    assert memory_id not in [m["id"] for m in api.list_memories(store=store)]
    memory = api.Memory(memory_id, store=store, encoder=encoder)
    with pytest.raises(MemoryNotFound):
        memory.recall("what did they say")
    with pytest.raises(MemoryBusy, match="being imported or dropped"):
        memory.add([{"speaker": "Ana", "text": "hello"}])
    assert node_count(store, memory_id) >= 100   # the debris is there, hidden

    whole = load(store, encoder, doc)             # the next write of the id removes it first
    assert whole.export() == to_document(parse_document(doc)[0])   # whole, nothing of the debris left


def test_db_check_repair_removes_what_an_interrupted_import_left(store, encoder, new_id, team_doc):
    from tmem_graph.store.lease import WriteLease
    from tmem_graph.transfer import memory_rows, write_rows

    memory_id = team_doc["memory_id"] = new_id("debris")
    doc = parse_document(team_doc)[0]
    with WriteLease(store, memory_id, "a writer about to be killed") as lease, store.transaction() as tx:
        store.create_memory_in(tx, memory_id, encoder.name, encoder.dim, doc.speakers, importing=f"import:{lease.token}")
        write_rows(store, tx, memory_id, memory_rows(doc, encoder, 64))   # all but the switch
    assert not store.exists(memory_id) and node_count(store, memory_id) > 1

    check = subprocess.run([sys.executable, "-m", "tmem_graph.cli", "db", "check"], capture_output=True, text=True,
                           env=os.environ, timeout=600)
    assert f"memory {memory_id!r} is hidden" in check.stdout and "--repair" in check.stdout
    repaired = subprocess.run([sys.executable, "-m", "tmem_graph.cli", "db", "check", "--repair"],
                              capture_output=True, text=True, env=os.environ, timeout=600)
    assert f"removed what an interrupted import or drop of {memory_id!r} left" in repaired.stdout, repaired.stdout
    assert node_count(store, memory_id) == 0


def test_a_drop_hides_the_memory_first_and_deletes_it_in_batches(store, encoder, new_id, team_doc, monkeypatch):
    memory_id = team_doc["memory_id"] = new_id("drop")
    load(store, encoder, team_doc)
    real = store.tx_run
    seen = []

    def watch(tx, name, **params):   # every deletion batch runs while the memory is already hidden
        if name.startswith("store/delete_"):
            seen.append(store.exists(memory_id))
        return real(tx, name, **params)

    monkeypatch.setattr(store, "tx_run", watch)
    assert store.drop(memory_id) > 0
    assert seen and not any(seen)
    assert node_count(store, memory_id) == 0
