"""The hot path's own conversions give exactly what the generic ones gave: a row as
`Record.data()` makes it, a recalled object as `dataclasses.asdict` makes it; a list
parameter keeps its values (its repr, which the driver makes for a log nobody reads, is short)."""

from dataclasses import asdict

import neo4j
import neo4j.time

from tmem_graph.retrieve.results import LaneTurn, RecalledItem, RecalledScene, RecalledTurn, as_dict
from tmem_graph.store.graph import record_data, unlogged


def test_a_row_is_what_record_data_gives():
    plain = neo4j.Record([("id", "s1"), ("n", 3), ("score", 0.25), ("ok", True), ("none", None),
                          ("ids", ["a", "b"]), ("rows", [{"id": "t1", "turns": [[1, "x"], []]}]), ("empty", {})])
    assert record_data(plain) == plain.data() and list(record_data(plain)) == plain.keys()
    dated = neo4j.Record([("id", "s1"), ("when", [neo4j.time.Date(2026, 12, 1)])])   # not plain: the driver's walk
    assert record_data(dated) == dated.data()


def test_a_recalled_object_is_what_asdict_gives_and_shares_nothing_with_it():
    scene = RecalledScene("s1", "Dinner", "2026-12-01", 0.5, ["topic", "bm25"], {"bm25": 1},
                          [{"id": "t1", "speaker": "Ana", "text": "Hi", "time": None}], summary="s", lane="cue")
    item = RecalledItem("i1", "Tom avoids shellfish", "fact", ["s1"], 0.4, ["scene"], {"dense": 2}, turn_ids=["t1"])
    turn = RecalledTurn("t9", "Ana", "new", None, 0.1, ["recent"], {"recent_bm25": 1}, seq=7)
    lane = LaneTurn("t2", "Ben", "ok", None, 1, {"id": "s1", "title": None, "time": None}, 0.2, ["bm25"], {})
    for result in (scene, item, turn, lane):
        assert as_dict(result) == asdict(result) and list(as_dict(result)) == list(asdict(result))
    out = as_dict(scene)
    out["turns"][0]["text"] = "changed"
    out["via"].append("x")
    assert scene.turns[0]["text"] == "Hi" and scene.via == ["topic", "bm25"]


def test_a_list_parameter_keeps_its_values_and_a_short_repr():
    vector = [0.125] * 384
    params = unlogged({"memory_id": "m", "vector": vector, "ids": [], "limit": 5, "rows": [{"id": "x"}]})
    assert params == {"memory_id": "m", "vector": vector, "ids": [], "limit": 5, "rows": [{"id": "x"}]}
    assert all(isinstance(v, list) for v in (params["vector"], params["ids"], params["rows"]))
    assert repr(params["vector"]) == "<list of 384>"
