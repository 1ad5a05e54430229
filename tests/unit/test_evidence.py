"""The evidence block's times: written for reading, a day only where it tells something."""

from tmem_graph.retrieve.evidence import day, format_evidence, item_line, moment, recent_line, turn_line
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
    assert item_line(1, item) in text and item_line(1, item).endswith("(8 May 2023, 13:57)")
    assert recent_line(turn) == "  Ana [1 June 2023, 10:05]: Back home." and recent_line(turn) in text
    assert "T13" not in text and "2023-05" not in text
