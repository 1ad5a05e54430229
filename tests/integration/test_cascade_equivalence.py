"""The two-query cascade returns what the five-round-trip cascade before it returned: the same
ranked scenes and items with the same scores, lanes, `via` and ranks, the same turns and the
same personas, for every ablation, on a memory built by the local model (the conv26-local
fixture), on the hand-written example, and on a synthetic LoCoMo-sized memory. The stepwise
cascade ranks exactly: every entry's cosine in Cypher (tests/fixtures/stepwise/) and BM25 over
every text of the memory in Python; the product searches Neo4j's vector and full-text indexes,
over-fetched, and scores their candidates on the memory's own statistics: the two agree where
the searches miss nothing the rankings use."""

import difflib
import json
import threading
from pathlib import Path

import pytest

from tests.conftest import load_fixture
from tests.fixtures.stepwise_cascade import StepwiseCascade
from tests.fixtures.synthetic import synthetic_memory
from tmem_graph import api
from tmem_graph.evaluate import data as ev
from tmem_graph.evaluate import fixtures
from tmem_graph.retrieve.cascade import Cascade, under_way
from tmem_graph.retrieve.presets import EVAL_SETS

# the paper's ablations, and the turn channel (not one of them) switched off
SETS = EVAL_SETS

FIXTURE = Path(__file__).parents[2] / "fixtures" / "conv26-local.json"


def fixture_document() -> dict:
    doc = fixtures.attach(json.loads(FIXTURE.read_text(encoding="utf-8")))
    doc["memory_id"] = "test-equiv-conv26"
    return doc


def comparable(recall) -> dict:
    """The recall's scenes, items and personas as their JSON document."""
    j = recall.to_json()
    return json.loads(json.dumps({k: j[k] for k in ("scenes", "items", "persona")}, default=str))


def same(a, b) -> bool:
    """Equal documents, scores within 1e-6: the product's cosines come from the vector index
    (float32), the stepwise cascade's from `vector.similarity.cosine`, and its BM25 from Python,
    which differ in their last bits."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(a - b) <= 1e-6
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


@pytest.fixture(scope="module")
def memories(store, encoder):
    docs = {"conv26": fixture_document(), "team": load_fixture(),
            "synthetic": synthetic_memory("test-equiv-synthetic", n_items=500, n_scenes=60,
                                          turns_per_scene=10, horizon_per_scene=12)}
    # the cascades address a memory by the id its objects carry: its name, or after a batched
    # replacement (a memory of that name left by an interrupted run) the staged version's `pid`
    pids = {name: api.import_memory(doc, store=store, encoder=encoder, replace=True)[0].pid
            for name, doc in docs.items()}
    yield pids
    for doc in docs.values():
        store.drop(doc["memory_id"])


def queries(name: str) -> list[tuple[str, str | None]]:
    if name == "conv26":
        sample = next(s for s in ev.load(ev.data_dir() / "locomo10.json") if s["sample_id"] == "conv-26")
        return [(q["question"], None) for q in sample["qa"][:25]] + [("What did Caroline paint?", "Caroline")]
    if name == "team":
        return [("Can you suggest a good sushi place for our group outing?", "Alice"),
                ("When did Bob adopt his greyhound Biscuit?", None), ("Where should the team eat?", None)]
    return [("Who went hiking near the lake?", None), ("What gift did they buy for the birthday?", None),
            ("feeling anxious about the move", None)]


@pytest.mark.parametrize("name", ["conv26", "team", "synthetic"])
def test_the_two_query_cascade_equals_the_stepwise_one(store, encoder, memories, name):
    new = Cascade(store, store.settings.retrieval)
    old = StepwiseCascade(store, store.settings.retrieval)
    try:
        compared, differ, first = 0, [], ""
        for query, speaker in queries(name):
            vector = encoder.encode([query])[0]
            for ablation, without in SETS:
                args = (memories[name], query, vector, speaker, without)
                a, b = comparable(new.recall(*args)), comparable(old.recall(*args))
                if not same(a, b):  # ties that either side may order differently: ask both once more
                    a, b = comparable(new.recall(*args)), comparable(old.recall(*args))
                compared += 1
                if not same(a, b):
                    differ.append((ablation, query))
                    first = first or _diff(a, b)
        assert compared == len(queries(name)) * len(SETS)
        assert differ == [], f"{len(differ)} of {compared} recalls differ, e.g. {differ[:3]}; the first:\n{first}"
        # flat item search joining the pool (off by default) agrees too
        wide = store.settings.retrieval.__class__(item_search=15)
        wide_new, wide_old = Cascade(store, wide), StepwiseCascade(store, wide)
        try:
            for query, speaker in queries(name)[:3]:
                args = (memories[name], query, encoder.encode([query])[0], speaker, ())
                assert same(comparable(wide_new.recall(*args)), comparable(wide_old.recall(*args))), query
        finally:
            wide_old.close()
    finally:
        old.close()


def _diff(new: dict, old: dict) -> str:
    """Where two recalls' JSON differ (the product's first, the stepwise cascade's second), at
    most 40 lines: what a rare failure needs to be understood."""
    lines = [json.dumps(x, indent=1, sort_keys=True).splitlines() for x in (new, old)]
    return "\n".join(list(difflib.unified_diff(*lines, "two-query", "stepwise", n=2, lineterm=""))[:40])


def test_a_recall_is_two_round_trips(store, encoder, memories):
    """Alone in its process, a recall runs its first query as two halves at once, each on its own
    connection and thread, then the second; beside another recall, the first query whole."""
    calls = []
    listener = lambda name, params, wall_ms, server_ms: calls.append((name, threading.current_thread().name))  # noqa: E731
    query = "When did Caroline go to the support group?"
    Cascade(store, store.settings.retrieval).reload(memories["conv26"])   # its statistics: read once per version
    store.query_listeners.append(listener)
    try:
        Cascade(store, store.settings.retrieval).recall(memories["conv26"], query, encoder.encode([query])[0])
        alone, calls[:] = list(calls), []
        with under_way():   # another recall of this process is under way
            Cascade(store, store.settings.retrieval).recall(memories["conv26"], query, encoder.encode([query])[0])
    finally:
        store.query_listeners.remove(listener)
    assert sorted(name for name, _ in alone) == ["retrieve/finish", "retrieve/rankings", "retrieve/rankings"]
    assert alone[-1][0] == "retrieve/finish"
    assert {thread for name, thread in alone if name == "retrieve/rankings"} == {"tmem-rankings",
                                                                                threading.current_thread().name}
    assert [name for name, _ in calls] == ["retrieve/rankings", "retrieve/finish"]
    assert {thread for _, thread in calls} == {threading.current_thread().name}
