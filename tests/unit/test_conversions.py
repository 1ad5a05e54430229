"""The hot path's own conversions give exactly what the generic ones gave: a row as
`Record.data()` makes it."""

import neo4j
import neo4j.time

from tmem_graph.store.graph import record_data


def test_a_row_is_what_record_data_gives():
    plain = neo4j.Record([("id", "s1"), ("n", 3), ("score", 0.25), ("ok", True), ("none", None),
                          ("ids", ["a", "b"]), ("rows", [{"id": "t1", "turns": [[1, "x"], []]}]), ("empty", {})])
    assert record_data(plain) == plain.data() and list(record_data(plain)) == plain.keys()
    dated = neo4j.Record([("id", "s1"), ("when", [neo4j.time.Date(2026, 12, 1)])])   # not plain: the driver's walk
    assert record_data(dated) == dated.data()

