from tmem_graph.retrieve.fuse import ranks_of, rrf, rrf_tail, strongest


def test_rrf_sums_reciprocal_ranks():
    fused = rrf({"a": ["x", "y", "z"], "b": ["y", "w"]}, k0=60)
    scores = dict(fused)
    assert fused[0][0] == "y"
    assert scores["y"] == 1 / 62 + 1 / 61
    assert scores["x"] == 1 / 61
    assert scores["w"] == 1 / 62 and scores["z"] == 1 / 63
    assert [k for k, _ in fused] == ["y", "x", "w", "z"]


def test_rrf_ties_are_deterministic():
    assert [k for k, _ in rrf({"a": ["p"], "b": ["q"]})] == ["p", "q"]
    assert rrf({}) == []


def test_equal_scores_keep_the_order_first_seen():
    # the sorts order by score alone, stably: ids scored alike stay in the order the lists first give them
    fused = rrf({"a": ["p", "q", "r"], "b": ["s", "r", "q"]})
    assert [k for k, _ in fused] == ["q", "r", "p", "s"]   # q and r tie (ranks 2+3 each), then p and s
    tied = strongest({"a": [("p", 1.0), ("q", 0.0)], "b": [("r", 1.0), ("s", 0.0)]})   # p, r: 1; q, s: -1
    assert [k for k, _ in tied] == ["p", "r", "q", "s"]
    assert [k for k, _ in rrf_tail({"a": ["x"]}, ["z", "y", "x"])] == ["x", "z", "y"]


def test_ranks_of():
    assert ranks_of("y", {"a": ["x", "y"], "b": ["y"], "c": []}) == {"a": 2, "b": 1}
