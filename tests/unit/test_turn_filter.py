"""TurnFilter.apply on a recall built by hand: which scenes a filtered recall keeps, and how deep
a filtered recall ranks (the database path is tests/integration/test_filters.py)."""

import datetime as dt

import pytest

from tmem_graph.config import RetrievalSettings
from tmem_graph.errors import UsageError
from tmem_graph.retrieve.cascade import _with_day
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


@pytest.mark.parametrize("args, message", [
    ({"until": "9999-12-31"}, "until '9999-12-31': out of range"),
    ({"until": "9999-12-31T23:59:59.999999"}, "until '9999-12-31T23:59:59.999999': out of range"),
    ({"speakers": ["Ana", "\udc80"]}, "speakers[1]: not valid Unicode text (a lone surrogate at character 0)"),
])
def test_a_filter_it_cannot_use_is_a_usage_error_of_one_line(args, message):
    with pytest.raises(UsageError) as refused:
        TurnFilter.of(**args)
    assert message in str(refused.value) and "\n" not in str(refused.value)


def test_the_last_days_of_the_calendar_that_a_filter_can_hold():
    assert TurnFilter.of(until="9999-12-30").until == dt.datetime(9999, 12, 31)
    assert TurnFilter.of(since="0001-01-01", until="9999-12-31T23:59:59.999998").admits("Ana", "9999-12-31T23:00:00")


def test_the_named_days_scenes_come_right_after_the_first_scene_and_move_up_when_recalled_lower():
    scenes = [scene(k, "Ana") for k in ("a", "b", "c", "d")]
    listed, ranked = _with_day(scenes, ["b", "a", "c", "d"], ["d", "x"])
    assert [s.id for s in listed] == ["a", "d", "x", "b", "c"] and listed[1].ranks == {"day": 1}
    assert listed[2].ranks == {"day": 2} and listed[2].turns == [] and ranked == ["b", "d", "x", "a", "c"]
    # the first scene is of the day: it stays first
    listed, ranked = _with_day(scenes, ["a", "b"], ["a", "c"])
    assert [s.id for s in listed] == ["a", "c", "b", "d"] and ranked == ["a", "c", "b"]
