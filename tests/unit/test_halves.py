"""The first query of a recall in two halves (retrieve/cascade.py `halves`, `Cascade._first`):
which rankings each half asks for, when the query runs whole, and a recall whose halves read two
versions of its memory. The rows of real halves, merged, are the whole query's row: tested on
Neo4j in tests/integration/test_recall.py."""

import threading

from tmem_graph.config import RetrievalSettings
from tmem_graph.retrieve.cascade import BESIDE, Cascade, halves, under_way
from tmem_graph.retrieve.lexical import Statistics, query_terms

COUNTS = {"topic_embedding": 500, "scene_dialogue_embedding": 900, "turn_embedding": 9000, "item": 3000,
          "scene": 3600, "scene_horizon_embedding": 900, "horizon": 3600, "scene_embedding": 900,
          "item_embedding": 1000}


def params(counts: dict[str, int], without: frozenset[str] = frozenset()) -> dict:
    stats = Statistics(version="v1", counts=counts, turn_passages=True)
    cfg = RetrievalSettings().for_budget()
    query = "who minds the dog while we travel"
    return {**Cascade(None, cfg)._ranking_params("m", query, query_terms(query), stats, [0.1] * 4, None, without),
            "past_commit": False}


def test_each_ranking_is_asked_for_in_one_half():
    whole = params(COUNTS)
    mine, other = halves(whole)
    asked = {name for name, v in whole["vec"].items() if v["k"] > 0}
    assert asked == {name for name in asked if mine["vec"][name]["k"] > 0} | {name for name in asked
                                                                             if other["vec"][name]["k"] > 0}
    assert not any(mine["vec"][name]["k"] > 0 and other["vec"][name]["k"] > 0 for name in asked)
    assert {name for name in asked if mine["vec"][name]["k"] > 0} == {"topic", "horizon"} & asked
    assert mine["bm25"] == whole["bm25"] and all(b["fetch"] == 0 for b in other["bm25"].values())
    assert (other["persona"], other["recent"], other["recent_lexical"]) == (False, False, False)
    assert mine["persona"] == whole["persona"] and mine["recent"] == whole["recent"]


def test_a_memory_whose_other_half_searches_no_index_runs_the_query_whole():
    small = {name: 60 for name in COUNTS}   # every ranking scanned: at most SCAN_UP_TO entries
    assert halves(params(small)) is None
    assert halves(params(COUNTS, frozenset({"scene_layer", "item_channel"}))) is None   # nothing beside


class Halves:
    """A store answering retrieve/rankings with the state `versions` gives per half, and
    recording which thread ran each half."""

    def __init__(self, versions: dict[str, str]):
        self.versions, self.threads = versions, {}

    def run(self, name: str, **p) -> list[dict]:
        half = "other" if all(b["fetch"] == 0 for b in p["bm25"].values()) and not p["persona"] else "mine"
        self.threads[half] = threading.current_thread().name
        row = {"exists": True, "version": self.versions[half], "committing": False, "host": None, "pid": None,
               "scene_cosine_ids": [half], "scene_cosine_scores": [1.0]}
        row.update({column: half for column in BESIDE})
        return [row]


def test_halves_that_read_two_versions_give_no_row_and_equal_ones_a_merged_row():
    cascade = Cascade(Halves({"mine": "v1", "other": "v2"}), RetrievalSettings())
    assert cascade._first("retrieve/rankings", params(COUNTS), alone=True) is None
    store = Halves({"mine": "v1", "other": "v1"})
    row = Cascade(store, RetrievalSettings())._first("retrieve/rankings", params(COUNTS), alone=True)
    assert row["version"] == "v1" and all(row[column] == "other" for column in BESIDE)
    assert dict(zip(row["scene_cosine_ids"], row["scene_cosine_scores"])) == {"mine": 1.0, "other": 1.0}
    assert store.threads == {"mine": threading.current_thread().name, "other": "tmem-rankings"}


def test_a_recall_beside_another_one_runs_the_query_whole():
    with under_way() as alone:
        assert alone
        with under_way() as second:
            assert not second
    with under_way() as again:
        assert again   # the count went back down
