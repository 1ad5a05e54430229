"""TurnFilter.apply on a recall built by hand: which scenes a filtered recall keeps, and how deep
a filtered recall ranks (the database path is tests/integration/test_filters.py)."""

from tmem_graph.config import RetrievalSettings
from tmem_graph.retrieve.filters import TurnFilter
from tmem_graph.retrieve.results import Recall, RecalledScene


def scene(key: str, *speakers: str) -> RecalledScene:
    turns = [{"id": f"{key}:{n}", "speaker": who, "text": "…", "time": "2023-05-08T13:56:00"}
             for n, who in enumerate(speakers)]
    return RecalledScene(key, key, None, 0.0, [], {}, turns)


def no_lookup(turn_ids, scene_ids):
    raise AssertionError(f"nothing to look up, asked {turn_ids} {scene_ids}")


def test_the_scenes_a_packed_recall_lists_first_stay_past_the_cut():
    # ranked as the fusion ranks them: s1..s6; the recall without a budget hands over s6 and s2
    recall = Recall("m", "q", scenes=[scene(f"s{n}", "Ana", "Ben") for n in range(1, 7)], ranked=["s6", "s2"])
    recall.scenes[0].turns = recall.scenes[0].turns[1:]   # s1 holds Ben alone: the filter empties it
    only = TurnFilter.of(speakers="Ana")
    out = only.apply(recall, RetrievalSettings(k_scenes=3), no_lookup, listed=2)
    assert [s.id for s in out.scenes] == ["s2", "s3", "s4", "s6"]   # cut to kS, s6 kept for its first place
    assert out.ranked == ["s6", "s2"]
    assert all(t["speaker"] == "Ana" for s in out.scenes for t in s.turns)


def test_a_ranked_scene_the_filter_empties_is_not_listed():
    recall = Recall("m", "q", scenes=[scene("s1", "Ben"), scene("s2", "Ana")], ranked=["s1", "s2"])
    out = TurnFilter.of(speakers="Ana").apply(recall, RetrievalSettings(k_scenes=1), no_lookup, listed=2)
    assert [s.id for s in out.scenes] == ["s2"] and out.ranked == ["s2"]


def test_a_budget_of_nothing_is_not_widened():
    cfg = RetrievalSettings(k_scenes=0, k_items=3, k_recent=0)
    wide = TurnFilter.of(speakers="Ana").widened(cfg)
    assert (wide.k_scenes, wide.k_recent) == (0, 0)
    assert wide.k_items == max(3 * 4, cfg.candidates)
