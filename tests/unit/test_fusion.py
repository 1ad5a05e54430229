"""The cascade's fusion and selection rules on hand-made rankings (no database).

The presence penalty: an associative target that SceneCue ranks first but that shares no word
with the query has no BM25 rank, while ten scenes with an incidental lexical match each
collect a BM25 term; plain RRF then drops the target out of the budget, the lanes keep it.
"""

import dataclasses
import functools

import pytest

from tmem_graph.config import RetrievalSettings
from tmem_graph.errors import ConfigError
from tmem_graph.retrieve.fuse import lanes, normalise, rrf, rrf_tail, standardise, strongest
from tmem_graph.retrieve.select import (ItemCandidates, SceneCandidates, associative, fuse_layer, scene_cue, select_cue,
                                        select_items, select_lane, select_scenes, trig_recall)

# ten lexical decoys d0..d9 and the associative target "cue": BM25 ranks only the decoys (the
# target shares no word with the query), the pool cosine puts the target 8th, SceneCue puts it
# far ahead of the decoys that also make its top 10
DECOYS = [f"d{n}" for n in range(10)]
BM25 = [(d, 10.0 - n) for n, d in enumerate(DECOYS)]
DENSE = [(d, 0.80 - n / 100) for n, d in enumerate(DECOYS[:7])] + [("cue", 0.72)] + \
    [(d, 0.70 - n / 100) for n, d in enumerate(DECOYS[7:])]
CUE = [("cue", 3.0)] + [(d, 1.0 - n / 10) for n, d in enumerate(["d3", "d4", "d5", "d6", "d7", "d8", "d9", "d1", "d2"])]


def ids(pairs):
    return [k for k, *_ in pairs]


def test_rrf_presence_penalty_drops_the_associative_target():
    fused = ids(rrf({"bm25": ids(BM25), "dense": ids(DENSE), "cue": ids(CUE)}))
    assert fused[-1] == "cue"  # first in SceneCue, yet last: every decoy is in one list more


def test_the_fusions_that_fix_it_rank_the_target_higher():
    def rank(fusion):
        return ids(fuse_layer(BM25, DENSE, CUE, 11, RetrievalSettings(fusion=fusion))).index("cue") + 1

    assert rank("rrf") == 11
    assert rank("lanes") == 2 and rank("rrf_tail") < 11 and rank("score") < 11
    # lanes: the descriptive lane keeps first place; the associative lane's best comes second
    chosen = fuse_layer(BM25, DENSE, CUE, 5, RetrievalSettings())
    assert chosen[0][0] == "d0" and chosen[0][2] == "descriptive"
    assert chosen[1][0] == "cue" and chosen[1][2] == "associative"
    assert [lane for *_, lane in chosen].count("associative") == 2  # 0.4 of 5


def test_rrf_tail_counts_a_missing_entry_at_the_pool_end():
    pool = ["a", "b", "c"]
    fused = dict(rrf_tail({"x": ["a"], "y": ["b", "a"]}, pool, k0=60))
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 64 + 1 / 61)
    assert fused["c"] == pytest.approx(2 / 64)


def test_rrf_weights_scale_a_list():
    fused = dict(rrf({"x": ["a"], "y": ["b"]}, k0=60, weights={"y": 2.0}))
    assert fused["b"] == pytest.approx(2 / 61) and fused["a"] == pytest.approx(1 / 61)


def test_lanes_quotas_order_and_dedupe():
    d, a = ["d1", "d2", "d3", "d4", "d5"], ["a1", "d2", "a2", "a3"]
    assert lanes(d, a, 5, 0.4) == [("d1", "descriptive"), ("a1", "associative"), ("d2", "descriptive"),
                                   ("a2", "associative"), ("d3", "descriptive")]
    # share 0.6 of 5 = 3 associative places; "d2" counts once, in the lane that reached it first
    assert ids(lanes(d, a, 5, 0.6)) == ["d1", "a1", "d2", "a2", "a3"]
    # under a share of 1 the first place is always descriptive, even when the share would take it
    assert lanes(d, a, 1, 0.9) == [("d1", "descriptive")]
    assert ids(lanes(d, a, 3, 0.9)) == ["d1", "a1", "d2"]  # the associative lane had a1, a2; d2 is its 2nd
    # a share of 1 gives the associative lane every place; "d2" is its own second
    assert lanes(d, a, 3, 1.0) == [("a1", "associative"), ("d2", "associative"), ("a2", "associative")]
    assert lanes(d, a, 1, 1.0) == [("a1", "associative")]
    # ... and when it runs dry, the descriptive lane fills the rest
    assert lanes(d, ["a1"], 3, 1.0) == [("a1", "associative"), ("d1", "descriptive"), ("d2", "descriptive")]
    assert ids(lanes(d, [], 3, 0.4)) == ["d1", "d2", "d3"]  # a dry lane leaves its places
    assert ids(lanes(["d1"], a, 4, 0.4)) == ["d1", "a1", "d2", "a2"]
    assert lanes([], [], 3, 0.4) == []
    assert ids(lanes(d, a, 0, 0.4)) == []


def test_standardise_and_normalise():
    z = standardise([("a", 3.0), ("b", 1.0)])
    assert z == {"a": pytest.approx(1.0), "b": pytest.approx(-1.0)}
    assert standardise([("a", 0.5), ("b", 0.5)]) == {"a": 0.0, "b": 0.0}
    assert standardise([]) == {}
    assert normalise([("a", 4.0), ("b", 1.0)], floor=0.0) == {"a": 1.0, "b": 0.25}
    assert normalise([("a", 4.0), ("b", 1.0)]) == {"a": 1.0, "b": 0.0}


def test_strongest_lets_one_channel_decide_and_absence_costs_nothing():
    # "h" stands out on horizon only; "x" is middling in both lists; RRF favours x (two lists)
    lists = {"dialogue": [("x", 0.60), ("p", 0.59), ("q", 0.58), ("r", 0.57)],
             "horizon": [("h", 0.90), ("x", 0.55), ("s", 0.54), ("t", 0.53)]}
    assert ids(strongest(lists))[0] == "h"
    assert ids(rrf({n: ids(r) for n, r in lists.items()}, 30))[0] == "x"


def scene_candidates():
    via = {k: ["topic"] for k in ids(DENSE)}
    return SceneCandidates(bm25=BM25, dense=DENSE, cue=CUE, cue_lists={"dialogue": DENSE}, via=via)


def test_select_scenes_records_lanes_ranks_and_budget():
    scenes = select_scenes(scene_candidates(), RetrievalSettings(k_scenes=3))
    assert [s.id for s in scenes] == ["d0", "cue", "d1"]
    assert [s.lane for s in scenes] == ["descriptive", "associative", "descriptive"]
    assert scenes[1].ranks == {"dialogue": 8, "dense": 8, "cue": 1}
    legacy = select_scenes(scene_candidates(), RetrievalSettings.legacy(k_scenes=3))
    assert all(s.lane is None for s in legacy) and "cue" not in [s.id for s in legacy]


def test_scene_cue_fusions_and_via_credit():
    lists = {"dialogue": [("a", 0.7), ("b", 0.6), ("x", 0.55), ("c", 0.5)],
             "horizon": [("c", 0.9), ("b", 0.4), ("d", 0.38), ("e", 0.36), ("f", 0.34)]}
    via = {}
    cue = scene_cue(lists, RetrievalSettings(cue_top=2), via)
    assert ids(cue)[0] == "c"
    assert set(via) == set(ids(cue)[:2])
    assert "horizon" in via["c"]
    via_rrf = {}
    assert ids(scene_cue(lists, RetrievalSettings(cue_fusion="rrf", cue_top=2), via_rrf))[:2] == ["b", "c"]


def view(host, position, channel, cos):
    return {"host_id": host, "position": position, "channel": channel, "score": (cos + 1) / 2}


def test_trig_recall_takes_the_best_r_then_gates():
    views = [view("i1", 0, "bridge", 0.9), view("i1", 0, "joint", 0.5), view("i2", 0, "concept", 0.6),
             view("i3", 0, "bridge", 0.2), view("i4", 0, "bridge", 0.55)]
    via = {}
    got = trig_recall(views, RetrievalSettings(r_trigger_items=2, tau=0.35), via)
    assert ids(got) == ["i1", "i2"]            # i4 passes the gate but is third: R = 2 cuts it first
    assert got[0][1] == pytest.approx(0.9)
    assert via == {"i1": ["bridge", "joint"], "i2": ["entity"]}
    assert trig_recall(views, RetrievalSettings(tau=0.95), {}) == []


def test_select_items_uses_the_trigger_lane():
    rows = {k: {"text": k, "kind": "atomic", "scene_ids": ["s"], "time": None} for k in ["a", "b", "c", "t"]}
    cands = ItemCandidates(bm25=[("a", 3.0), ("b", 2.0), ("c", 1.0)],
                           dense=[("a", 0.9), ("b", 0.8), ("c", 0.7), ("t", 0.6)],
                           trigger=[("t", 0.5)], via={k: ["scene"] for k in rows}, rows=rows)
    items = select_items(cands, RetrievalSettings(k_items=3))
    assert [i.id for i in items] == ["a", "t", "b"] and items[1].lane == "associative"
    assert [i.id for i in select_items(cands, RetrievalSettings.legacy(k_items=3))] == ["a", "b", "t"]
    assert select_items(ItemCandidates([], [], [], {}), RetrievalSettings()) == []
    # a weak match's associative first place is the scenes' (docs/design-and-evidence.md): its items keep the descriptive lane's first item first
    weak = RetrievalSettings(k_items=3, weak_match=0.75).split_for(0.5)
    assert weak.associative_first and [i.id for i in select_items(cands, weak)] == ["a", "t", "b"]


@pytest.mark.parametrize("changes, message", [({"fusion": "borda"}, "fusion 'borda'"),
                                              ({"cue_fusion": "max"}, "cue_fusion 'max'"),
                                              ({"associative_share": 1.5}, "associative_share 1.5"),
                                              ({"lane_share": 1.0}, "lane_share 1.0"),
                                              ({"lane_share": "half"}, "lane_share 'half'"),
                                              ({"cue_from": "items"}, "cue_from 'items'"),
                                              ({"horizon_views": "max"}, "horizon_views 'max'"),
                                              ({"lane_k0": 0}, "lane_k0 0: must be an integer from 1"),
                                              ({"lane_k0": 2.5}, "lane_k0 2.5")])
def test_settings_refuse_unknown_fusions(changes, message):
    with pytest.raises(ConfigError, match=message):
        RetrievalSettings(**changes)


def test_lanes_scores_never_rise_down_the_list():
    # the associative lane's second entry is the descriptive lane's second: dedupe, then a dry lane
    dense = [(k, 0.9 - n / 100) for n, k in enumerate(["d1", "d2", "d3", "d4", "d5", "d6"])]
    for cue in ([("d2", 1.0), ("d5", 0.5)], [("d4", 1.0)], [], [(d, 1.0) for d in ("d6", "d5", "d4", "d3")]):
        for share in (0.5, 0.8):   # 0.8: the associative lane runs dry ahead of its quota (a weak match)
            fused = fuse_layer([], dense, cue, 6, RetrievalSettings(associative_share=share))
            scores = [score for _, score, _ in fused]
            assert scores == sorted(scores, reverse=True), (cue, share)
            assert len(fused) == 6


def test_the_turn_channel_takes_the_place_of_the_dense_vector_in_the_descriptive_lane():
    """A scene whose best turn matches (d9: last by its descriptive vector, unranked by BM25)
    leads the descriptive lane once the turn channel ranks it; without the channel the lane is
    BM25 and dense as before; the fusions before lanes ignore the channel."""
    turn = [("d9", 0.9), ("d0", 0.5)]
    cfg = RetrievalSettings(k_scenes=2, associative_share=0.0)
    bm25 = [(d, v) for d, v in BM25 if d != "d9"]
    with_turns = fuse_layer(bm25, DENSE, [], 2, cfg, passages=turn)
    assert ids(with_turns) == ["d0", "d9"]   # RRF(bm25, turn): d0 in both lists, then d9 (turn's 1st)
    assert ids(fuse_layer(bm25, DENSE, [], 2, cfg)) == ["d0", "d1"]
    legacy = RetrievalSettings.legacy(k_scenes=2)
    assert fuse_layer(bm25, DENSE, [], 2, legacy, passages=turn) == fuse_layer(bm25, DENSE, [], 2, legacy)
    scenes = select_scenes(SceneCandidates(bm25=bm25, dense=DENSE, cue=[], cue_lists={}, via={d: ["topic"] for d, _ in DENSE},
                                           turn=turn), cfg)
    assert scenes[1].id == "d9" and scenes[1].ranks == {"dense": 11, "turn": 1}


def test_with_the_turn_channel_the_descriptive_lane_still_fills_its_places():
    """Candidates that neither BM25 nor the turn channel ranks follow in dense order."""
    cfg = RetrievalSettings(k_scenes=5, associative_share=0.0)
    got = fuse_layer([], DENSE, [], 5, cfg, passages=[("d7", 0.9)])
    assert ids(got) == ["d7", "d0", "d1", "d2", "d3"]


def test_the_associative_pass_takes_its_scenes_from_the_list_it_is_told():
    lists = {"dialogue": [("a", 0.9), ("h", 0.2)], "horizon": [("h", 0.8), ("b", 0.7), ("a", 0.1)]}
    cands = SceneCandidates(bm25=[], dense=[], cue=[("a", 1.0), ("b", 0.9), ("h", 0.5)], cue_lists=lists, via={})
    two = functools.partial(RetrievalSettings, budget_tokens=1000, cue_share=0.08, opening_tokens=40)  # 80 / 40: two
    pick = lambda **kw: [s.id for s in select_cue(cands, two(**kw))]  # noqa: E731
    assert set(pick(cue_from="scenecue")) == {"a", "b"}   # two places: SceneCue's first two
    assert pick(cue_from="horizon") == ["h", "b"]    # the Horizon family's own order
    # by default the Horizon family's and the scene vector's scores by the strongest rule: with no
    # scene vector, the Horizon family's order
    assert pick() == pick(cue_from="horizon")
    assert set(pick(cue_from="horizon+scenecue")) == {"h", "a"}   # an RRF of both: each list's first, b third
    fused = dataclasses.replace(cands, dense=[("b", 0.9), ("h", 0.1), ("a", 0.1)])   # the scene vector: b far ahead
    first = select_cue(fused, two(cue_from="horizon+scenecue+dense"))
    assert [s.id for s in first][:1] == ["b"] and first[0].ranks["pointers"] == 1   # an RRF of the three orders
    default = select_cue(fused, two())   # b stands out in the scene vector, h in the Horizon family
    assert [s.id for s in default] == ["b", "h"] and default[0].ranks["pointers"] == 1
    listed = select_cue(fused, two(cue_from="horizon"))
    assert [s.id for s in listed] == ["b", "h"]   # Horizon's first two, listed in a weak match's unpacked order
    assert listed[0].ranks["horizon"] == 2
    scene = select_cue(cands, two(cue_from="horizon"))[0]
    assert scene.lane == "cue" and scene.ranks == {"horizon": 1, "dialogue": 2} and "horizon" in scene.via
    first = next(s for s in select_cue(cands, two(cue_from="scenecue")) if s.id == "a")   # SceneCue's first
    assert first.ranks == {"dialogue": 1, "horizon": 3, "cue": 1}   # SceneCue's own place as "cue"


def test_the_turn_lane_leads_with_each_lists_own_first_turns():
    # "w" is BM25's first and dense's 40th, "d" dense's first alone; "m" is eighth in both: flat
    # hybrid's k0 (60) ranks "m" first, the lane's (5) the lists' own firsts ahead of it
    bm25 = [("w", 9.0)] + [(f"x{n}", 8.0 - n / 10) for n in range(6)] + [("m", 7.0)]
    dense = [("d", 0.9)] + [(f"y{n}", 0.89 - n / 100) for n in range(6)] + [("m", 0.8)] + \
        [(f"e{n}", 0.7 - n / 100) for n in range(31)] + [("w", 0.4)]
    assert [t.id for t in select_lane(bm25, dense, RetrievalSettings(lane_k0=60))][:1] == ["m"]
    lane = select_lane(bm25, dense, RetrievalSettings())
    assert RetrievalSettings().lane_k0 == 5 and [t.id for t in lane][:3] == ["w", "d", "m"]
    assert lane[0].ranks == {"bm25": 1, "dense": 40} and lane[0].via == ["bm25", "dense"]


def test_a_weak_match_is_packed_with_the_weak_shares():
    cfg = RetrievalSettings(budget_tokens=1000, weak_match=0.75)
    weak = cfg.split_for(0.70)
    assert (weak.cue_share, weak.lane_share, weak.lane_dense_weight) == \
           (cfg.weak_cue_share, cfg.weak_lane_share, cfg.weak_lane_dense_weight)
    assert cfg.split_for(0.80) is cfg and cfg.split_for(None) is cfg
    unpacked = RetrievalSettings(weak_match=0.75, weak_associative_share=0.8)
    assert unpacked.split_for(0.1).cue_share == 0.0 and unpacked.split_for(0.1).associative_share == 0.8
    assert unpacked.split_for(0.8).associative_share == 0.4
    # without a budget a weak match's scenes take `weak_listed_share` of their places; packed,
    # and for a strong match, the scene layer keeps the layers' share
    assert unpacked.split_for(0.1).scene_associative_share == unpacked.weak_listed_share == 1.0
    assert unpacked.split_for(0.8).scene_associative_share is None
    assert weak.scene_associative_share is None
    with pytest.raises(ConfigError, match=r"weak-match settings \(weak_\*\): scene_associative_share 1.5"):
        RetrievalSettings(weak_listed_share=1.5)
    with pytest.raises(ConfigError, match="scene_associative_share -0.1"):
        RetrievalSettings(scene_associative_share=-0.1)
    assert RetrievalSettings(budget_tokens=1000, weak_match=0).split_for(0.1).lane_share == 0.4  # 0: never
    with pytest.raises(ConfigError, match="lane_share 1.2"):
        RetrievalSettings(budget_tokens=1000, weak_match=0.7, weak_lane_share=1.2)
    with pytest.raises(ConfigError, match=r"weak-match settings \(weak_\*\): lane_share 1.2"):   # no budget too
        RetrievalSettings(weak_match=0.7, weak_lane_share=1.2)
    with pytest.raises(ConfigError, match="associative_share 1.5"):
        RetrievalSettings(weak_associative_share=1.5)
    with pytest.raises(ConfigError, match="weak_match 2"):
        RetrievalSettings(weak_match=2)


def test_a_match_is_weak_only_when_no_turn_is_close_in_meaning_or_in_words():
    cfg = RetrievalSettings(budget_tokens=1000, weak_match=0.75, weak_words=0.4)
    assert cfg.weak(0.70) and cfg.weak(0.70, 0.39) and cfg.split_for(0.70, 0.39) is not cfg
    assert not cfg.weak(0.70, 0.4) and cfg.split_for(0.70, 0.4) is cfg      # a turn holds its rare words
    assert not cfg.weak(0.80, 0.0) and not cfg.weak(None, 0.0)              # close in meaning / no turn channel
    assert dataclasses.replace(cfg, weak_words=0).weak(0.70, 1.0)            # 0: words never make it strong
    assert not dataclasses.replace(cfg, weak_match=0).weak(0.1, 0.0)         # weak_match 0: never weak
    for bad in (-0.1, 1.5, True, "0.4"):
        with pytest.raises(ConfigError, match=f"weak_words {bad!r}: a share on"):
            RetrievalSettings(weak_words=bad)


def test_the_turn_lane_asks_deep_enough_to_fill_the_budget():
    assert RetrievalSettings().lane_depth() == 50
    assert RetrievalSettings(budget_tokens=500).lane_depth() == 50
    assert RetrievalSettings(budget_tokens=4000).lane_depth() == 160


def test_the_associative_pass_reaches_one_scene_per_opening_tokens_of_its_share():
    assert RetrievalSettings(cue_share=0.5).cue_scenes() == 0   # no budget, no pointers
    weak = RetrievalSettings(budget_tokens=1000, cue_share=0.5)
    assert weak.cue_scenes() == 500 // weak.opening_tokens
    assert dataclasses.replace(weak, opening_tokens=25).cue_scenes() == 20
    assert dataclasses.replace(weak, opening_tokens=30).split_for(0.1).opening_tokens == 30   # a weak match keeps it
    assert dataclasses.replace(weak, opening_tokens=30).cue_scenes() == 16   # the setting, not the default
    for bad in (0, -5, 2.5, True):
        with pytest.raises(ConfigError, match=f"opening_tokens {bad!r}: must be an integer from 1"):
            RetrievalSettings(opening_tokens=bad)


def test_each_encoder_gets_its_own_weak_match_threshold():
    from tmem_graph.config import WEAK_MATCH, Settings
    assert Settings.from_env({}).retrieval.weak_match == RetrievalSettings().weak_match == WEAK_MATCH["all-MiniLM-L6-v2"]
    mpnet = Settings.from_env({"TMEM_ENCODER": "all-mpnet-base-v2"}).retrieval
    assert mpnet.weak_match == WEAK_MATCH["all-mpnet-base-v2"] != RetrievalSettings().weak_match
    assert Settings.from_env({"TMEM_ENCODER": "fake:16"}).retrieval == RetrievalSettings()


def test_an_answer_reads_packed_evidence_unless_told_otherwise():
    assert RetrievalSettings().for_answer().budget_tokens == 2000       # the default answer evidence
    assert RetrievalSettings(budget_tokens=700).for_answer().budget_tokens == 700
    assert RetrievalSettings(answer_budget_tokens=None).for_answer().budget_tokens is None
    with pytest.raises(ConfigError, match="answer_budget_tokens 0"):
        RetrievalSettings(answer_budget_tokens=0)


def test_a_weak_match_orders_the_associative_lane_by_the_horizon_family_scenecue_and_the_scene_vector():
    # the default weak order adds the pool's scene-vector order to the RRF (k0 = cue_k0): "c",
    # which all three rank, overtakes "h", which the Horizon family ranks first and the scene
    # vector last
    lists = {"dialogue": [("a", 0.9), ("b", 0.8)], "horizon": [("h", 0.8), ("b", 0.7), ("c", 0.6)]}
    dense = [("d0", 0.9), ("c", 0.6), ("b", 0.55), ("a", 0.5), ("h", 0.1)]
    cands = SceneCandidates(bm25=[("d0", 3.0)], dense=dense, cue=[("a", 1.0), ("b", 0.9), ("c", 0.6), ("h", 0.5)],
                            cue_lists=lists, via={k: ["topic"] for k, _ in dense})
    cfg = RetrievalSettings(k_scenes=3, weak_match=0.75, associative_share=0.5, weak_associative_share=0.5,
                            weak_listed_share=0.5, weak_associative_order="horizon+scenecue+dense")
    weak = cfg.split_for(0.5)
    assert weak.associative_order == "horizon+scenecue+dense"
    # and lists the associative lane's first scene first (the same scenes: docs/design-and-evidence.md)
    assert [s.id for s in select_scenes(cands, weak)] == ["b", "d0", "c"]
    assert [s.id for s in select_scenes(cands, dataclasses.replace(weak, associative_order="horizon+scenecue"))] \
        == ["b", "d0", "h"]
    assert [s.id for s in select_scenes(cands, dataclasses.replace(weak, associative_first=False))] == ["d0", "b", "c"]
    assert [s.id for s in select_scenes(cands, cfg.split_for(0.9))] == ["d0", "a", "b"]   # strong: SceneCue's


def test_a_weak_match_orders_the_associative_lane_by_the_strongest_of_the_horizon_family_and_the_scene_vector():
    # the default weak order: each scene by its best standard score over the Horizon family's
    # scores and the scene vector's (SceneCue's own rule): "h", far ahead in the Horizon family
    # and last by its scene vector, comes first; an RRF of the same two orders prefers "c" and
    # "b", which both rank moderately, and leaves "h" out of the three places
    lists = {"dialogue": [("a", 0.9)], "horizon": [("h", 0.9), ("b", 0.6), ("c", 0.58), ("e", 0.57)]}
    dense = [("d0", 0.9), ("c", 0.6), ("b", 0.55), ("a", 0.5), ("e", 0.2), ("h", 0.1)]
    cands = SceneCandidates(bm25=[("d0", 3.0)], dense=dense, cue=[("a", 1.0), ("b", 0.9), ("c", 0.6), ("h", 0.5)],
                            cue_lists=lists, via={k: ["topic"] for k, _ in dense})
    cfg = RetrievalSettings(k_scenes=3, weak_match=0.75, associative_share=0.5, weak_associative_share=0.5,
                            weak_listed_share=0.5)
    weak = cfg.split_for(0.5)
    assert weak.associative_order == "strongest(horizon,dense)" == RetrievalSettings().weak_associative_order
    assert [key for key, _ in associative(cands, weak)][:3] == ["h", "d0", "c"]
    assert [s.id for s in select_scenes(cands, weak)] == ["h", "d0", "c"]
    rrf_order = dataclasses.replace(weak, associative_order="horizon+scenecue+dense")
    assert "h" not in [s.id for s in select_scenes(cands, rrf_order)]


def test_a_weak_match_without_a_budget_gives_every_scene_place_to_the_associative_order():
    # "d0" leads the descriptive order and is last by the Horizon family: at the default
    # `weak_listed_share` (1) the three places are the associative order's first three in the
    # pool; at 0.8 one place stays descriptive, and packed the scenes keep `weak_associative_share`
    lists = {"dialogue": [("a", 0.9)], "horizon": [("h", 0.9), ("b", 0.8), ("c", 0.7), ("e", 0.6), ("d0", 0.1)]}
    dense = [("d0", 0.9), ("a", 0.5), ("b", 0.45), ("c", 0.4), ("e", 0.35), ("h", 0.3)]
    cands = SceneCandidates(bm25=[("d0", 3.0)], dense=dense, cue=[("a", 1.0), ("h", 0.5)],
                            cue_lists=lists, via={k: ["topic"] for k, _ in dense})
    cfg = RetrievalSettings(k_scenes=3, weak_match=0.75, weak_associative_order="horizon")
    assert [s.id for s in select_scenes(cands, cfg.split_for(0.5))] == ["h", "b", "c"]
    assert {s.lane for s in select_scenes(cands, cfg.split_for(0.5))} == {"associative"}
    assert [s.id for s in select_scenes(cands, dataclasses.replace(cfg, weak_listed_share=0.8).split_for(0.5))] \
        == ["h", "d0", "b"]
    packed = dataclasses.replace(cfg, budget_tokens=750).split_for(0.5)   # kS 3: k_scenes stays 3 at 750 tokens
    assert packed.scene_associative_share is None and "d0" in [s.id for s in select_scenes(cands, packed)]


def test_a_weak_match_orders_the_associative_lane_by_the_horizon_family_and_scenecue():
    # SceneCue's order puts "a" and "b" first; the Horizon family puts "h" first, which SceneCue
    # ranks last: RRF of the two (k0 = cue_k0) brings "h" into the associative lane's places
    lists = {"dialogue": [("a", 0.9), ("b", 0.8)], "horizon": [("h", 0.8), ("b", 0.7)]}
    dense = [("d0", 0.9), ("a", 0.5), ("b", 0.4), ("c", 0.35), ("h", 0.3)]
    cands = SceneCandidates(bm25=[("d0", 3.0)], dense=dense, cue=[("a", 1.0), ("b", 0.9), ("c", 0.6), ("h", 0.5)],
                            cue_lists=lists, via={k: ["topic"] for k, _ in dense})
    cfg = RetrievalSettings(k_scenes=3, weak_match=0.75, associative_share=0.5, weak_associative_share=0.5,
                            weak_listed_share=0.5)
    assert [s.id for s in select_scenes(cands, cfg.split_for(0.9))] == ["d0", "a", "b"]   # strong: SceneCue's
    weak = dataclasses.replace(cfg, weak_associative_order="horizon+scenecue").split_for(0.5)
    assert weak.associative_order == "horizon+scenecue"
    assert [s.id for s in select_scenes(cands, weak)] == ["b", "d0", "h"]   # b: 2nd in both; h: 1st and 4th
    assert [s.id for s in select_scenes(cands, dataclasses.replace(weak, associative_order="scenecue"))] == \
        ["a", "d0", "b"]
    # the Horizon family's own order: its first scene first
    assert [s.id for s in select_scenes(cands, dataclasses.replace(weak, associative_order="horizon"))] == \
        ["h", "d0", "b"]
    with pytest.raises(ConfigError, match="weak_associative_order 'trigger'"):
        RetrievalSettings(weak_associative_order="trigger")


def test_the_associative_lead_lists_the_same_scenes_with_the_associative_lanes_first_first():
    d = ["d1", "d2", "d3"]
    plain = lanes(d, ["d2", "a1", "a2"], 5, 0.8)
    assert [key for key, _ in plain] == ["d1", "d2", "a1", "a2", "d3"]
    led = lanes(d, ["d2", "a1", "a2"], 5, 0.8, lead="associative")
    assert led == [("d2", "associative")] + [p for p in plain if p[0] != "d2"]
    # the associative ranking's first, taken by the descriptive lane, keeps the first place
    assert lanes(d, ["d1", "a1"], 3, 0.8, lead="associative") == lanes(d, ["d1", "a1"], 3, 0.8)
    assert lanes(d, [], 3, 0.8, lead="associative") == lanes(d, [], 3, 0.8)   # no associative scene: unchanged
    assert lanes([], [], 3, 0.8, lead="associative") == []
    # a weak match leads with its associative lane without a budget; packed, the fusion is as before
    # (its scenes are listed in the unpacked recall's order, Recall.ranked)
    cfg = RetrievalSettings(weak_match=0.75)
    assert cfg.split_for(0.5).associative_first and not cfg.split_for(0.9).associative_first
    assert not dataclasses.replace(cfg, budget_tokens=2000).split_for(0.5).associative_first
    assert not dataclasses.replace(cfg, weak_associative_first=False).split_for(0.5).associative_first
    with pytest.raises(ConfigError, match="associative_first 'yes'"):
        RetrievalSettings(associative_first="yes")
