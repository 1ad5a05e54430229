from tmem_graph.retrieve.fuse import ranks_of, rrf


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


def test_ranks_of():
    assert ranks_of("y", {"a": ["x", "y"], "b": ["y"], "c": []}) == {"a": 2, "b": 1}
