"""The evidence packer: one token budget filled from ranked scenes, items and recent turns."""

import dataclasses

import pytest

from tmem_graph.retrieve import pack as packer
from tmem_graph.retrieve.evidence import CUE_HEADING, format_evidence
from tmem_graph.retrieve.results import LaneTurn, Recall, RecalledItem, RecalledScene, RecalledTurn


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


@pytest.mark.parametrize("budget", [1, 4, 5, 8, 30, 60, 100, 160, 250, 1000])
def test_the_evidence_never_exceeds_the_budget(budget):
    packed = packer.pack(recall(), budget, count, ["Ana", "Ben"])
    evidence = format_evidence(Recall("m", "q", packed.scenes, packed.items, [], packed.recent), ["Ana", "Ben"])
    assert count(evidence) <= budget and packed.budget_tokens == budget
    assert packed.persona == recall().persona  # the persona is outside the budget
    if budget < count(packer.opening(["Ana", "Ben"])):   # the opening line does not fit: nothing does
        assert (packed.scenes, packed.items, packed.recent, evidence) == ([], [], [], "")


def test_a_long_scene_gives_its_best_turn_with_its_neighbours_first():
    packed = packer.pack(recall(), 60, count, ["Ana", "Ben"])
    first = packed.scenes[0]
    assert first.id == "s1" and first.excerpt and [t["id"] for t in first.turns] == ["s1:6", "s1:7", "s1:8"]
    text = format_evidence(packed, ["Ana", "Ben"])
    assert "summary of Porto trip" not in text and "[Scene 1] Porto trip (1 May 2024)" in text


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


def lane_turn(tid: str, scene_id: str, n: int, via: list[str]) -> LaneTurn:
    return LaneTurn(tid, "Ben", f"lane line {tid} of {scene_id}", None, n, {"id": scene_id, "title": f"title {scene_id}",
                    "time": "2024-06-02T09:00:00"}, 0.02, via, {c: 1 for c in via})


def with_lane() -> Recall:
    r = recall()
    r.lane = [lane_turn("s9:3", "s9", 3, ["bm25", "dense"]), lane_turn("s1:11", "s1", 11, ["dense"]),
              lane_turn("s9:1", "s9", 1, ["bm25"]), lane_turn("s8:0", "s8", 0, ["dense"])]
    return r


def test_a_budget_that_cannot_hold_the_opening_line_packs_nothing_not_even_a_short_item():
    r = recall()
    r.items, r.scenes, r.recent = [RecalledItem("i0", "x", "atomic", ["s1"], 0.5, ["scene"], {})], [], []
    packed = packer.pack(r, 6, count, ["Ana", "Ben"])   # the opening line is 7 words; the item's section 6
    assert packed.items == [] and format_evidence(dataclasses.replace(packed, persona=[]), ["Ana", "Ben"]) == ""


@pytest.mark.parametrize("budget", [30, 60, 100, 160, 250, 1000])
def test_with_a_turn_lane_the_evidence_never_exceeds_the_budget(budget):
    packed = packer.pack(with_lane(), budget, count, ["Ana", "Ben"])
    evidence = format_evidence(Recall("m", "q", packed.scenes, packed.items, [], packed.recent), ["Ana", "Ben"])
    assert count(evidence) <= budget


def test_the_cascade_fills_its_share_first_then_the_lane_hands_over_its_turns_inside_their_scenes():
    budget = 200
    alone = packer.pack(recall(), budget - int(budget * 0.4), count, ["Ana", "Ben"])
    packed = packer.pack(with_lane(), budget, count, ["Ana", "Ben"], lane_share=0.4)
    # the cascade's part is what it packs alone into its share; the lane's turns come after it
    assert [s.id for s in packed.scenes][:len(alone.scenes)] == [s.id for s in alone.scenes]
    assert [i.id for i in packed.items] == [i.id for i in alone.items]
    by_id = {s.id: s for s in packed.scenes}
    assert "s1:11" in {t["id"] for t in by_id["s1"].turns}                 # inside the recalled scene's excerpt
    opened = by_id["s9"]                                                   # a scene the cascade did not recall
    assert opened.lane == "turns" and opened.excerpt and opened.via == ["bm25", "dense"]
    assert [t["id"] for t in opened.turns] == ["s9:1", "s9:3"]             # in conversation order
    assert [s.id for s in packed.scenes].index("s9") >= len(alone.scenes)  # listed after the cascade's scenes
    # listed on their own after the scenes, under their day, without the scene's header
    text = format_evidence(packed, ["Ana"])
    assert "## Other turns that match\nOn 2 June 2024:\n  Ben: lane line s9:1 of s9\n  Ben: lane line s9:3 of s9" in text
    assert "title s9" not in text


def test_a_days_line_is_paid_once_per_lane_so_the_packer_prices_exactly_what_is_rendered():
    r = with_lane()   # four lane turns of three scenes, all on 2 June 2024
    wide = packer.pack(r, 10_000, count, ["Ana"], lane_share=0.4)
    evidence = format_evidence(dataclasses.replace(wide, persona=[]), ["Ana"])
    assert evidence.count("On 2 June 2024:") == 1
    exact = packer.pack(with_lane(), count(evidence), count, ["Ana"], lane_share=0.4)   # not a token to spare
    assert [(s.id, [t["id"] for t in s.turns]) for s in exact.scenes] == \
           [(s.id, [t["id"] for t in s.turns]) for s in wide.scenes]


def test_without_a_lane_the_whole_budget_goes_to_the_cascade():
    r = with_lane()
    r.lane = []
    packed, alone = packer.pack(r, 200, count, ["Ana"]), packer.pack(recall(), 200, count, ["Ana"])
    assert [(s.id, [t["id"] for t in s.turns]) for s in packed.scenes] == \
           [(s.id, [t["id"] for t in s.turns]) for s in alone.scenes]


def test_a_larger_lane_share_hands_more_of_the_lane_and_less_of_the_cascade():
    small = packer.pack(with_lane(), 70, count, ["Ana"], lane_share=0.1)
    large = packer.pack(with_lane(), 70, count, ["Ana"], lane_share=0.5)
    lane_ids = {t.id for t in with_lane().lane}
    handed = lambda r: {t["id"] for s in r.scenes for t in s.turns}  # noqa: E731
    assert len(handed(large) & lane_ids) > len(handed(small) & lane_ids)
    assert len(handed(large) - lane_ids) < len(handed(small) - lane_ids)


def with_cue() -> Recall:
    r = with_lane()
    r.cue = [dataclasses.replace(scene("c1", 2, "Oysters make Ana ill"), lane="cue"),
             dataclasses.replace(scene("c2", 6, "Ana's sister visits"), lane="cue")]
    r.turn_scores.update({"c1:1": 0.4, "c2:4": 0.5})
    return r


@pytest.mark.parametrize("budget", [30, 60, 100, 160, 250, 1000])
def test_with_an_associative_pass_the_evidence_never_exceeds_the_budget(budget):
    packed = packer.pack(with_cue(), budget, count, ["Ana", "Ben"], cue_share=0.3)
    evidence = format_evidence(Recall("m", "q", packed.scenes, packed.items, [], packed.recent), ["Ana", "Ben"])
    assert count(evidence) <= budget


def test_the_associative_pass_lists_each_scenes_best_turn_on_its_own():
    budget = 200
    packed = packer.pack(with_cue(), budget, count, ["Ana", "Ben"], lane_share=0.2, cue_share=0.2)
    by_id = {s.id: s for s in packed.scenes}
    # each by its best turn (by cosine); what is left at the end grows it by that turn's neighbours first
    assert "c1:1" in [t["id"] for t in by_id["c1"].turns]
    c2 = {t["id"] for t in by_id["c2"].turns}
    assert "c2:4" in c2 and c2 <= {"c2:3", "c2:4", "c2:5"}
    assert by_id["c1"].lane == "cue" and by_id["c1"].excerpt
    # under the associative heading, without the scene's header (a header costs two thirds of a turn)
    text = format_evidence(packed, ["Ana"])
    pointers = text.split(CUE_HEADING)[1].split("\n## ")[0]
    assert by_id["c1"].turns[0]["text"] in pointers and "Oysters make Ana ill" not in text
    # the cascade's part holds what it packs alone into the budget the two passes leave it, in the
    # same scenes; what the passes leave unspent grows those excerpts at the end
    alone = packer.pack(with_lane(), budget - int(budget * 0.2) - int(budget * 0.2), count, ["Ana", "Ben"], lane_share=0)
    cascade = {s.id: {t["id"] for t in s.turns} for s in packed.scenes if s.lane not in ("cue", "turns")}
    assert set(cascade) == {s.id for s in alone.scenes}
    assert all({t["id"] for t in s.turns} <= cascade[s.id] for s in alone.scenes)


def test_listed_days_and_dated_pointers_are_priced_exactly_as_they_are_rendered():
    def same_day() -> Recall:   # the pointers' turns said on the lane's day, 2 June 2024
        r = with_cue()
        for c in r.cue:
            c.turns = [dict(t, time="2024-06-02T08:00:00") for t in c.turns]
        return r
    wide = packer.pack(same_day(), 10_000, count, ["Ana"], lane_share=0.2, cue_share=0.2)
    evidence = format_evidence(dataclasses.replace(wide, persona=[]), ["Ana"])
    assert evidence.count("On 2 June 2024:") == 1 and evidence.count(CUE_HEADING) == 1   # the lane's
    assert evidence.split(CUE_HEADING)[1].split("\n## ")[0].count("  2 June 2024 ") >= 2    # each pointer's own
    for spare in (0, 1):
        exact = packer.pack(same_day(), count(evidence) + spare, count, ["Ana"], lane_share=0.2, cue_share=0.2)
        assert [(s.id, [t["id"] for t in s.turns]) for s in exact.scenes] == \
               [(s.id, [t["id"] for t in s.turns]) for s in wide.scenes]
    short = packer.pack(same_day(), count(evidence) - 1, count, ["Ana"], lane_share=0.2, cue_share=0.2)
    assert count(format_evidence(dataclasses.replace(short, persona=[]), ["Ana"])) <= count(evidence) - 1


def test_without_scenecues_scenes_or_share_the_packer_is_unchanged():
    plain = packer.pack(with_lane(), 200, count, ["Ana"], lane_share=0.4)
    for packed in (packer.pack(with_lane(), 200, count, ["Ana"], lane_share=0.4, cue_share=0.3),
                   packer.pack(with_cue(), 200, count, ["Ana"], lane_share=0.4, cue_share=0.0)):
        kept = [s for s in packed.scenes if s.lane != "cue"]
        assert [(s.id, [t["id"] for t in s.turns]) for s in kept] == \
               [(s.id, [t["id"] for t in s.turns]) for s in plain.scenes]


def test_packed_scenes_are_listed_by_the_joint_order_of_the_fusion_and_scenecue():
    order = packer._joint(["s1", "s2", "s3"], ["c1", "c2", "s3"], k0=60)
    # s3 is in both lists, so it climbs over both firsts; equal scores keep the fusion's order first
    assert sorted(order, key=order.get) == ["s3", "s1", "c1", "s2", "c2"]
    packed = packer.pack(with_cue(), 1000, count, ["Ana"], lane_share=0.2, cue_share=0.2, joint_k0=1)
    assert [s.id for s in packed.scenes][:2] == ["s1", "c1"] and packed.scenes[-1].lane == "turns"


def test_the_scenes_the_recall_without_a_budget_hands_over_are_listed_first_in_its_order():
    r = with_cue()
    joint = [s.id for s in packer.pack(r, 1000, count, ["Ana"], lane_share=0.2, cue_share=0.2, joint_k0=1).scenes]
    r.ranked = ["c2", "s2", "gone"]   # a scene the packer did not hand over is skipped
    packed = [s.id for s in packer.pack(r, 1000, count, ["Ana"], lane_share=0.2, cue_share=0.2, joint_k0=1).scenes]
    assert packed[:2] == ["c2", "s2"] and joint[:2] != ["c2", "s2"]
    assert packed[2:] == [s for s in joint if s not in ("c2", "s2")]   # the rest in the joint order


def test_a_chosen_scene_the_descriptive_pass_could_not_open_is_pointed_to_once():
    # s3 is the final fusion's third scene and the associative list's first: with room for the
    # first scene only, the associative pass lists s3's best turn on its own; s1, opened by the
    # descriptive pass, is not listed a second time
    r = with_lane()
    r.cue = [dataclasses.replace(scene("s3", 10, "Bike gear"), lane="cue"),
             dataclasses.replace(scene("s1", 12, "Porto trip"), lane="cue")]
    packed = packer.pack(r, 60, count, ["Ana"], lane_share=0.0, cue_share=0.3)
    ids = [s.id for s in packed.scenes]
    assert ids.count("s1") == 1 and ids.count("s3") == 1
    s3 = next(s for s in packed.scenes if s.id == "s3")
    assert s3.lane == "cue" and [t["id"] for t in s3.turns] == ["s3:0"]
    assert CUE_HEADING in format_evidence(packed, ["Ana"])


def test_a_handed_over_question_comes_with_its_reply_and_a_lane_only_scene_adds_nothing():
    r = recall()
    s1 = r.scenes[0].turns
    s1[8]["text"] = "Where did you go?"   # the window of the best turn (7) ends on a question
    s1[9]["text"] = "I was in Chicago"
    packed = packer.pack(r, 60, count, ["Ana", "Ben"])
    first = packed.scenes[0]
    assert [t["id"] for t in first.turns] == ["s1:6", "s1:7", "s1:8", "s1:9"]
    assert "  Ana: Where did you go?\n  Ana: I was in Chicago" in format_evidence(packed, ["Ana"])
    # a pointer the associative pass lists stays one line, a question or not: more pointers fit
    cue = with_cue()
    cue.cue[1].turns[4]["text"] = "Is taking care of them tough?"
    assert packer._Scene(cue.cue[1], []).with_replies([4]) == [4]
    assert packer._Scene(dataclasses.replace(cue.cue[1], lane=None), []).with_replies([4]) == [4, 5]
    # a scene only the lane opened holds only the lane's turns: the turn after a question there is
    # another lane turn, not its reply
    partial = scene("s9", 2, "title s9")
    partial.turns[0]["text"] = "Why?"
    assert packer._Scene(partial, [], whole=False).with_replies([0]) == [0]
    assert packer._Scene(partial, []).with_replies([0]) == [0, 1]


def test_a_scene_of_a_day_the_question_names_opens_first_even_when_the_pointers_take_the_budget():
    r = with_cue()
    r.scenes[2].ranks = {**r.scenes[2].ranks, "day": 1}   # s3, as the cascade marks a named day's scene
    r.cue = r.cue + [dataclasses.replace(r.scenes[2], lane="cue")]   # SceneCue points to it too
    packed = packer.pack(r, 120, count, ["Ana"], lane_share=0.0, cue_share=0.9)
    s3 = next(s for s in packed.scenes if s.id == "s3")
    assert s3.lane != "cue" and len(s3.turns) >= 2        # an excerpt with its window, not a one-line pointer
    assert sum(s.id == "s3" for s in packed.scenes) == 1
    r.scenes[2].ranks = {k: v for k, v in r.scenes[2].ranks.items() if k != "day"}
    plain = packer.pack(r, 120, count, ["Ana"], lane_share=0.0, cue_share=0.9)
    assert [s.lane for s in plain.scenes if s.id == "s3"] == ["cue"]   # without the day: a pointer


def exchange(r: Recall) -> Recall:
    """with_cue, its first pointer's scene an exchange: Ana says what matters, Ben's short reply
    to it is the turn nearest the query."""
    c1 = r.cue[0]
    c1.turns[0].update(text="Oysters made me so ill at the wedding that I never eat shellfish now")
    c1.turns[1].update(speaker="Ben", text="That one night changed a lot")
    return r


def test_a_leading_pointer_whose_best_turn_answers_a_fuller_turn_shows_that_turn():
    r = exchange(with_cue())
    packed = packer.pack(r, 1000, count, ["Ana", "Ben"], lane_share=0.2, cue_share=0.2)
    c1 = next(s for s in packed.scenes if s.id == "c1")
    assert c1.lane == "cue" and "c1:0" in [t["id"] for t in c1.turns]
    assert "Ana: Oysters made me so ill" in format_evidence(packed, ["Ana", "Ben"]).split(CUE_HEADING)[1]
    assert packer._Scene(r.cue[0], [1, 0]).best(exchange=True) == [0]
    assert packer._Scene(r.cue[0], [1, 0]).best(exchange=False) == [1]
    # what comes next for the scene is the window of the turn shown
    state = packer._Scene(r.cue[0], [1, 0])
    state.chosen.update(state.best(exchange=True))
    assert state.next_group() == [1]
    # a reply saying more than the turn before it stands, as does a turn after one of the same speaker
    r.cue[0].turns[1]["text"] = ("Same here: bad oysters at my cousin's wedding in Porto made me sick for days, "
                                 "so shellfish, mussels and clams are off my plate")
    assert packer._Scene(r.cue[0], [1, 0]).best(exchange=True) == [1]
    r = exchange(with_cue())
    r.cue[0].turns[1]["speaker"] = "Ana"
    assert packer._Scene(r.cue[0], [1, 0]).best(exchange=True) == [1]


def test_only_the_first_pointers_show_the_fuller_turn_of_their_exchange(monkeypatch):
    asked = []
    best = packer._Scene.best
    monkeypatch.setattr(packer._Scene, "best", lambda self, exchange=False: asked.append(exchange) or best(self, exchange))
    r = with_cue()
    r.cue = [dataclasses.replace(scene(f"x{n}", 1, f"filler {n}"), lane="cue") for n in range(packer.EXCHANGES + 2)]
    packer.pack(r, 10_000, count, ["Ana", "Ben"], lane_share=0.2, cue_share=0.2)
    assert asked == [True] * packer.EXCHANGES + [False, False]
