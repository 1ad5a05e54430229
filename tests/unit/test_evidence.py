"""The evidence block's times: written for reading, a day only where it tells something."""

import dataclasses

from tmem_graph.retrieve.evidence import (LISTED, day, format_evidence, item_line, listed_lines, moment,
                                          recent_line, turn_line)
from tmem_graph.retrieve.results import Recall, RecalledItem, RecalledScene, RecalledTurn


def test_times_are_days_in_words_with_the_minute_unless_midnight():
    assert day("2023-05-08T13:56:00") == "8 May 2023"
    assert moment("2023-05-08T13:56:30") == "8 May 2023, 13:56"
    assert moment("2023-05-08T00:00:00") == "8 May 2023"
    assert moment("2023-05-08T13:56:00+02:00") == "8 May 2023, 13:56"   # its own clock, as written
    assert day(None) is None and moment(None) is None


def test_a_stamp_that_is_not_iso_8601_is_written_as_it_is():
    assert day("sometime in May") == "sometime in May" and moment("May 8th") == "May 8th"


def test_a_scene_turn_names_its_day_only_when_it_is_not_the_scene_s():
    turn = {"id": "D1:1", "speaker": "Ana", "text": "Hi", "time": "2023-05-08T13:57:00"}
    assert turn_line(turn, "2023-05-08T13:56:00") == "  Ana: Hi"
    assert turn_line(turn, "2023-05-07T23:50:00") == "  Ana [8 May 2023]: Hi"
    assert turn_line(turn) == "  Ana [8 May 2023]: Hi"
    assert turn_line({**turn, "time": None}, "2023-05-08T13:56:00") == "  Ana: Hi"


def test_the_block_writes_every_time_in_words():
    scene = RecalledScene("s1", "Support group", "2023-05-08T13:56:00", 1.0, ["dense"], {}, [
        {"id": "D1:1", "speaker": "Ana", "text": "I went yesterday.", "time": "2023-05-08T13:57:00"},
        {"id": "D1:2", "speaker": "Ben", "text": "Next day.", "time": "2023-05-09T08:00:00"}], summary="Ana went.")
    item = RecalledItem("i1", "Ana went to a support group.", "atomic", ["s1"], 1.0, ["scene"], {},
                        time="2023-05-08T13:57:00")
    turn = RecalledTurn("D9:1", "Ana", "Back home.", "2023-06-01T10:05:00", 0.5, ["recent"], {}, seq=9)
    text = format_evidence(Recall("m", "q", [scene], [item], [], [turn]), ["Ana", "Ben"])
    assert "[Scene 1] Support group (8 May 2023, 13:56)" in text and "  Summary: Ana went." in text
    assert "  Ana: I went yesterday." in text and "  Ben [9 May 2023]: Next day." in text
    assert item_line(1, item) in text and item_line(1, item).endswith("(8 May 2023)")   # an item: its day
    assert recent_line(turn) == "  Ana [1 June 2023, 10:05]: Back home." and recent_line(turn) in text
    assert "T13" not in text and "2023-05" not in text


def test_turns_listed_on_their_own_go_under_one_line_per_day_in_time_order():
    def scene(sid, time, lane="turns"):
        return RecalledScene(sid, f"title {sid}", time, 1.0, ["dense"], {}, [], lane=lane, excerpt=True)
    late, early = scene("s2", "2023-06-01T10:00:00"), scene("s1", "2023-05-08T13:56:00")
    listed = [({"id": "a", "speaker": "Ana", "text": "late one", "time": None}, late),
              ({"id": "b", "speaker": "Ben", "text": "early one", "time": "2023-05-08T14:00:00"}, early),
              ({"id": "c", "speaker": "Ana", "text": "late two", "time": "2023-06-01T11:00:00"}, late),
              ({"id": "d", "speaker": "Ben", "text": "no time", "time": None}, scene("s3", None)),
              ({"id": "e", "speaker": "Ben", "text": "odd stamp", "time": "yesterday"}, early)]
    assert listed_lines(listed) == ["On 8 May 2023:", "  Ben: early one",
                                    "On 1 June 2023:", "  Ana: late one", "  Ana: late two",
                                    "On time unknown:", "  Ben: no time",
                                    "On yesterday:", "  Ben: odd stamp"]
    s1 = dataclasses.replace(early, turns=[listed[1][0]])
    s2 = dataclasses.replace(late, turns=[listed[0][0], listed[2][0]])
    cue = dataclasses.replace(scene("s4", "2023-05-08T09:00:00", lane="cue"),
                              turns=[{"id": "f", "speaker": "Ana", "text": "a pointer", "time": None}])
    earlier = dataclasses.replace(scene("s5", "2023-04-02T09:00:00", lane="cue"),
                                  turns=[{"id": "g", "speaker": "Ben", "text": "an earlier pointer", "time": None}])
    text = format_evidence(Recall("m", "q", [s2, cue, s1, earlier], [], [], []), ["Ana", "Ben"])
    # the associative pointers in the recall's order (the one most likely to bear on the question
    # first), each with its day; the turn lane's turns under one line per day, in time order
    assert text.split("\n")[1:] == [LISTED["cue"], "  8 May 2023 Ana: a pointer", "  2 April 2023 Ben: an earlier pointer",
                                     LISTED["turns"], "On 8 May 2023:", "  Ben: early one", "On 1 June 2023:",
                                     "  Ana: late one", "  Ana: late two"]
