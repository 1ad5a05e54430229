"""`tmem db check`: an unusable index is found, named, explained in recall errors, and rebuilt.

The index is made unusable by dropping it (a killed server's broken Lucene index cannot be
made on purpose); detection runs the very queries recall runs, so it catches both."""

from __future__ import annotations

import os
import subprocess
import sys

from tmem_graph import api

TMEM = [sys.executable, "-m", "tmem_graph.cli"]


def tmem(*args):
    return subprocess.run(TMEM + list(args), capture_output=True, text=True, env=os.environ, timeout=900)


def test_a_dropped_index_is_detected_explained_and_repaired(store, encoder, new_id, team_doc):
    memory_id = team_doc["memory_id"] = new_id("check")
    api.import_memory(team_doc, store=store, encoder=encoder)
    healthy = tmem("db", "check")
    assert healthy.returncode == 0 and "trigger_embedding: ok" in healthy.stdout, healthy.stdout + healthy.stderr
    try:
        with store.session("WRITE") as s:
            s.run("DROP INDEX trigger_embedding").consume()
        broken = tmem("db", "check")
        assert broken.returncode == 4
        assert "trigger_embedding: UNUSABLE, the index does not exist" in broken.stdout
        assert "tmem db check --repair" in broken.stderr and "Traceback" not in broken.stderr

        recall = tmem("recall", memory_id, "sushi for the team")
        assert recall.returncode == 1 and "Traceback" not in recall.stderr, recall.stderr
        assert "tmem db check" in recall.stderr

        repaired = tmem("db", "check", "--repair")
        assert repaired.returncode == 0, repaired.stdout + repaired.stderr
        assert "rebuilt trigger_embedding" in repaired.stdout and "trigger_embedding: ok" in repaired.stdout
    finally:
        api.apply_schema(store=store, encoder=encoder)  # whatever happened, the suite's index is back
    again = tmem("recall", memory_id, "sushi for the team", "--json")
    assert again.returncode == 0 and '"scenes"' in again.stdout
