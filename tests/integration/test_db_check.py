"""`tmem db check`: an unusable index is found, named and rebuilt; recall does not need it.

The index is made unusable by dropping it (a killed server's broken Lucene index cannot be
made on purpose); detection runs the single-index queries of `cypher/retrieve/*_dense.cypher`,
so it catches both. Recall searches the indexes, and when a search fails it ranks every entry of
the memory itself (retrieve/rankings_exact), so a broken index leaves it whole, only slower."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tmem_graph import api

TMEM = [sys.executable, "-m", "tmem_graph.cli"]


def tmem(*args):
    return subprocess.run(TMEM + list(args), capture_output=True, text=True, env=os.environ, timeout=900)


def recall_json(memory_id: str) -> dict:
    done = tmem("recall", memory_id, "sushi for the team", "--json")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    out = json.loads(done.stdout)
    out.pop("timings_ms", None)
    return out


def test_a_dropped_index_is_detected_and_repaired_and_recall_does_not_need_it(store, encoder, new_id, team_doc):
    memory_id = team_doc["memory_id"] = new_id("check")
    api.import_memory(team_doc, store=store, encoder=encoder)
    before = recall_json(memory_id)
    assert before["scenes"]
    healthy = tmem("db", "check")
    assert healthy.returncode == 0 and "item_view_embedding: ok" in healthy.stdout, healthy.stdout + healthy.stderr
    try:
        with store.session("WRITE") as s:
            s.run("DROP INDEX item_view_embedding").consume()
            s.run("DROP INDEX turn_embedding").consume()   # the turn lane's: recall once required it
        broken = tmem("db", "check")
        assert broken.returncode == 4, broken.stdout
        assert "item_view_embedding: UNUSABLE, the index does not exist" in broken.stdout
        assert "turn_embedding: UNUSABLE, the index does not exist" in broken.stdout
        assert "tmem db check --repair" in broken.stderr and "Traceback" not in broken.stderr

        assert recall_json(memory_id) == before   # the same evidence without the index

        repaired = tmem("db", "check", "--repair")
        assert repaired.returncode == 0, repaired.stdout + repaired.stderr
        assert "rebuilt item_view_embedding, turn_embedding" in repaired.stdout, broken.stdout
        assert "item_view_embedding: ok" in repaired.stdout and "turn_embedding: ok" in repaired.stdout
    finally:
        api.apply_schema(store=store, encoder=encoder)  # whatever happened, the suite's index is back
    assert recall_json(memory_id) == before
