"""Exact vector rankings over one memory's embeddings (retrieve/vectors.py), on hand-made
vectors: the order is the exact cosine's, equal scores by id, and scores are (1 + cos) / 2."""

from __future__ import annotations

import math

import pytest

from tmem_graph.retrieve.vectors import Vectors


def row(**columns) -> dict:
    """The columns of retrieve/lexicon that Vectors reads, empty unless given."""
    base = {name: [] for name in ("topic_vectors", "scene_vectors", "dialogue_vectors", "item_vectors",
                                  "turn_vectors", "trigger_vectors")}
    return {**base, "turn_passages": True, **columns}


def angle(degrees: float) -> list[float]:
    """A unit vector in the plane at `degrees` from the x axis (its cosine with [1, 0] is known)."""
    return [math.cos(math.radians(degrees)), math.sin(math.radians(degrees))]


def test_nodes_rank_by_exact_cosine_equal_scores_by_id():
    vectors = Vectors.of(row(scene_vectors=[["s3", angle(30)], ["s1", angle(60)], ["s2", angle(-30)],
                                            ["s4", [0.0, 2.0]]]))   # not unit: normalised on load
    ranked = vectors.nearest("scene_embedding", [3.0, 0.0], 4)
    assert [k for k, _ in ranked] == ["s2", "s3", "s1", "s4"]    # s2 and s3 tie at 30°: by id
    assert [round(v, 6) for _, v in ranked] == [round((1 + c) / 2, 6) for c in
                                                (math.cos(math.radians(30)),) * 2 + (0.5, 0.0)]
    assert [k for k, _ in vectors.nearest("scene_embedding", [1.0, 0.0], 2)] == ["s2", "s3"]
    assert vectors.nearest("item_embedding", [1.0, 0.0], 5) == []          # the memory holds none
    assert vectors.nearest("scene_embedding", [1.0, 0.0], 0) == []


def test_the_turn_lane_ranks_turns_with_their_scenes_only_in_a_memory_of_passages():
    turns = [["t1", "s1", angle(10)], ["t2", "s1", angle(50)], ["t3", "s2", angle(5)]]
    ranked, scenes = Vectors.of(row(turn_vectors=turns)).turns([1.0, 0.0], 2)
    assert [k for k, _ in ranked] == ["t3", "t1"] and scenes == ["s2", "s1"]
    assert Vectors.of(row(turn_vectors=turns, turn_passages=False)).turns([1.0, 0.0], 2) == ([], [])


def test_a_hosts_score_is_its_best_view_or_the_mean_of_all_its_views():
    views = [["horizon", "a", None, None, angle(0)], ["horizon", "a", None, None, angle(90)],
             ["horizon", "b", None, None, angle(20)], ["horizon", "c", None, None, angle(80)]]
    vectors = Vectors.of(row(trigger_vectors=views))
    best = vectors.hosts("horizon", [1.0, 0.0], 4, mean=False)
    assert [h for h, _ in best] == ["a", "b", "c"] and best[0][1] == pytest.approx(1.0)
    mean = vectors.hosts("horizon", [1.0, 0.0], 4, mean=True)
    assert [h for h, _ in mean] == ["b", "a", "c"]
    assert dict(mean)["a"] == pytest.approx((1.0 + 0.5) / 2)   # (1 + cos 0°)/2 and (1 + cos 90°)/2
    # only hosts of the nearest views are listed, each scored by all of its views
    near = vectors.hosts("horizon", [1.0, 0.0], 1, mean=True)
    assert near == [("a", pytest.approx(0.75))]


def test_item_views_keep_their_position_and_channel_equal_scores_in_that_order():
    same = angle(0)
    views = [["item", "i2", 0, "concept", same], ["item", "i1", 1, "joint", same], ["item", "i1", 1, "bridge", same],
             ["item", "i1", 0, "concept", angle(40)]]
    got = Vectors.of(row(trigger_vectors=views)).views("item", [1.0, 0.0], 3)
    assert [k for k, _ in got] == [("i1", 1, "bridge"), ("i1", 1, "joint"), ("i2", 0, "concept")]


def test_scene_cosines_are_given_in_the_order_asked_once_each():
    vectors = Vectors.of(row(scene_vectors=[["s1", angle(0)], ["s2", angle(180)]]))
    got = vectors.cosines(["s2", "gone", "s1", "s2"], [1.0, 0.0])
    assert [k for k, _ in got] == ["s2", "s1"]
    assert [v for _, v in got] == [pytest.approx(0.0, abs=1e-7), pytest.approx(1.0)]
    assert vectors.held("scene_embedding") == 2 and vectors.held("item_embedding") == 0


def test_the_cache_counts_embeddings_by_their_bytes():
    minilm = Vectors.of(row(scene_vectors=[[f"s{n}", [1.0] * 384] for n in range(10)]))
    mpnet = Vectors.of(row(scene_vectors=[[f"s{n}", [1.0] * 768] for n in range(10)]))
    assert minilm.size == 10 and mpnet.size == 20


def test_a_memory_with_nothing_loaded_ranks_nothing():
    """A memory gone between its header and its load has no Lexicon: every ranking is empty
    (the recall then says the memory is not found), none raises."""
    empty = Vectors({})
    assert empty.nearest("scene_embedding", [1.0, 0.0], 5) == [] and empty.turns([1.0, 0.0], 5) == ([], [])
    assert empty.hosts("horizon", [1.0, 0.0], 5, mean=True) == [] and empty.views("item", [1.0, 0.0], 5) == []
    assert empty.cosines(["s1"], [1.0, 0.0]) == [] and empty.size == 0


def test_an_embedding_with_no_cosine_or_of_another_length_is_ranked_nowhere():
    """As a vector index leaves such a node out: all zeros, a NaN, an infinity, a length other
    than the memory's, or values that are not numbers (an embedding set by hand) rank nowhere,
    and the other rows rank as before."""
    good = [["s1", angle(10)], ["s2", angle(50)]]
    bad = [["z0", [0.0, 0.0]], ["zn", [float("nan"), 1.0]], ["zi", [float("inf"), 0.0]], ["z3", [1.0, 0.0, 0.0]],
           ["zs", ["a", "b"]], ["zb", [True, False]]]
    vectors = Vectors.of(row(dim=2, scene_vectors=bad + good,
                             trigger_vectors=[["horizon", "s1", 0, "p", angle(10)], ["horizon", "s9", 0, "p", [0.0, 0.0]]]))
    assert [k for k, _ in vectors.nearest("scene_embedding", [1.0, 0.0], 10)] == ["s1", "s2"]
    assert [k for k, _ in vectors.hosts("horizon", [1.0, 0.0], 10, mean=True)] == ["s1"]
    assert vectors.cosines(["z0", "s2"], [1.0, 0.0])[0][0] == "s2" and vectors.held("scene_embedding") == 2
    assert Vectors.of(row(scene_vectors=[["a", [0.0, 0.0]]])).nearest("scene_embedding", [1.0, 0.0], 3) == []
    assert Vectors.of(row(dim=2, scene_vectors=[["zb", [True, False]], ["s1", angle(0)]])).held("scene_embedding") == 1
