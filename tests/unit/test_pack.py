"""The evidence packer: one token budget filled from ranked scenes, items and recent turns."""

import pytest

from tmem_graph.retrieve import pack as packer
from tmem_graph.retrieve.evidence import format_evidence
from tmem_graph.retrieve.results import Recall, RecalledItem, RecalledScene, RecalledTurn


def count(text: str) -> int:
    return len(text.split())


def scene(sid: str, turns: int, title: str) -> RecalledScene:
    return RecalledScene(sid, title, "2024-05-01T10:00:00", 1.0, ["dense"], {"dense": 1},
                         [{"id": f"{sid}:{n}", "speaker": "Ana", "text": f"line {n} of {sid} with some words",
                           "time": None} for n in range(turns)], summary=f"summary of {title} in words")


def recall() -> Recall:
    scenes = [scene("s1", 12, "Porto trip"), scene("s2", 4, "Clara moves in"), scene("s3", 10, "Bike gear")]
    items = [RecalledItem(f"i{n}", f"item {n} says a fact", "atomic", ["s1"], 0.5, ["scene"], {}) for n in range(6)]
    recent = [RecalledTurn("T9", "Ben", "a recent line", None, 0.3, ["recent"], {}, seq=9)]
    scores = {"s1:7": 0.9, "s1:2": 0.8, "s3:0": 0.7, "s3:9": 0.6}
    return Recall("m", "q", scenes, items, [{"speaker": "Ana", "summary": "persona"}], recent, turn_scores=scores)


@pytest.mark.parametrize("budget", [30, 60, 100, 160, 250, 1000])
def test_the_evidence_never_exceeds_the_budget(budget):
    packed = packer.pack(recall(), budget, count, ["Ana", "Ben"])
    evidence = format_evidence(Recall("m", "q", packed.scenes, packed.items, [], packed.recent), ["Ana", "Ben"])
    assert count(evidence) <= budget and packed.budget_tokens == budget
    assert packed.persona == recall().persona  # the persona is outside the budget


def test_a_long_scene_gives_its_best_turn_with_its_neighbours_first():
    packed = packer.pack(recall(), 60, count, ["Ana", "Ben"])
    first = packed.scenes[0]
    assert first.id == "s1" and first.excerpt and [t["id"] for t in first.turns] == ["s1:6", "s1:7", "s1:8"]
    text = format_evidence(packed, ["Ana", "Ben"])
    assert "summary of Porto trip" not in text and "[Scene 1] Porto trip (1 May 2024, 10:00)" in text


def test_every_scene_is_an_excerpt_without_its_summary_and_items_are_interleaved_in_proportion():
    packed = packer.pack(recall(), 200, count, ["Ana", "Ben"])
    by_id = {s.id: s for s in packed.scenes}
    # a short scene too: opened by its best (here: first unscored) turn, never with its summary
    assert all(s.excerpt for s in packed.scenes) and by_id["s2"].turns[0]["id"] == "s2:0"
    assert "summary of" not in format_evidence(packed, ["Ana", "Ben"])
    assert [i.id for i in packed.items] == [f"i{n}" for n in range(6)]
    assert [t.id for t in packed.recent] == ["T9"]


def test_later_passes_add_each_scenes_next_best_turns_and_a_large_budget_takes_everything():
    small, large = packer.pack(recall(), 200, count, ["Ana", "Ben"]), packer.pack(recall(), 10_000, count, ["Ana"])
    # s1's second best turn (s1:2) with its window, then its first unscored one (s1:0)
    assert [t["id"] for t in small.scenes[0].turns] == ["s1:0", "s1:1", "s1:2", "s1:3", "s1:6", "s1:7", "s1:8"]
    assert [len(s.turns) for s in large.scenes] == [12, 4, 10] and len(large.items) == 6
    # turns are handed over in conversation order, whatever order they were chosen in
    for s in large.scenes + small.scenes:
        assert [t["id"] for t in s.turns] == sorted((t["id"] for t in s.turns), key=lambda i: int(i.split(":")[1]))


def test_what_does_not_fit_is_not_in_the_recall():
    packed = packer.pack(recall(), 30, count, ["Ana", "Ben"])
    assert len(packed.scenes) <= 1 and len(packed.items) < 6


def test_an_item_whose_source_turns_are_handed_over_already_is_left_out():
    r = recall()
    r.items[0].turn_ids = ["s1:6", "s1:7"]        # inside s1's first piece (s1:6..s1:8)
    r.items[1].turn_ids = ["s1:7", "s3:5"]        # s3:5 is not handed over with it
    packed = packer.pack(r, 200, count, ["Ana", "Ben"])
    assert [i.id for i in packed.items] == ["i1", "i2", "i3", "i4", "i5"]   # i0 left out, i1 and the rest kept
