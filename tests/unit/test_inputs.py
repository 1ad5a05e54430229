import json

import pytest

from tmem_graph.construct.inputs import generic_turns, guess_format, locomo_turns, read_conversation
from tmem_graph.construct.pipeline import new_turns
from tmem_graph.errors import ValidationError
from tmem_graph.model import Turn

LOCOMO = {"sample_id": "conv-x", "conversation": {
    "speaker_a": "Ana", "speaker_b": "Ben",
    "session_2_date_time": "9:00 am on 3 June, 2023", "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_3_date_time": "1:00 pm on 9 June, 2023",
    "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "Hi!"},
                  {"speaker": "Ben", "dia_id": "D1:2", "text": "Look", "blip_caption": "a dog on a beach"}],
    "session_2": [{"speaker": "Ana", "dia_id": "D2:1", "text": "Back again."}]}}


def test_locomo_sessions_times_and_captions():
    turns = locomo_turns([LOCOMO], "conv-x")
    assert [(t.id, t.time, t.session) for t in turns] == [
        ("D1:1", "2023-05-08T13:56:00", 1), ("D1:2", "2023-05-08T13:56:30", 1), ("D2:1", "2023-06-03T09:00:00", 2)]
    assert turns[1].text == "Look [shared a photo: a dog on a beach]"
    assert guess_format(json.dumps([LOCOMO])) == "locomo"


def test_locomo_errors_name_the_record():
    with pytest.raises(ValidationError, match="no sample 'conv-9'"):
        locomo_turns([LOCOMO], "conv-9")
    with pytest.raises(ValidationError, match="2 samples; choose one with --sample"):
        locomo_turns([LOCOMO, {**LOCOMO, "sample_id": "conv-y"}], None)
    broken = json.loads(json.dumps(LOCOMO))
    broken["conversation"]["session_2"][0]["text"] = ""
    broken["conversation"]["session_2_date_time"] = "June 3rd"
    with pytest.raises(ValidationError) as info:
        locomo_turns(broken, None)
    assert info.value.problems == [
        "conv-x session_2_date_time: 'June 3rd' does not parse as '%I:%M %p on %d %B, %Y'",
        "conv-x session_2[0]: \"text\" is missing or empty"]


def test_generic_json_array_and_lines():
    array = '[{"speaker": "A", "text": "x", "session": 1}, {"speaker": "B", "text": "y", "id": "t2"}]'
    assert [t.speaker for t in generic_turns(array)] == ["A", "B"]
    lines = '{"speaker": "A", "text": "x"}\n\n{"speaker": "B", "text": "y", "time": "2024-01-01T10:00:00"}\n'
    assert generic_turns(lines)[1].time == "2024-01-01T10:00:00"
    assert guess_format(lines) == "turns"


@pytest.mark.parametrize("raw, message", [
    ('[{"speaker": "A"}]', 'input[0]: "text" is missing or empty'),
    ('[{"text": "x"}]', 'input[0]: "speaker" is missing or empty'),
    ('[{"speaker": "A", "text": 5}]', 'input[0]: "text" must be a string, not int 5'),
    ('[{"speaker": ["A"], "text": "x"}]', "input[0]: \"speaker\" must be a string, not list ['A']"),
    ('[{"speaker": "A", "text": "x", "session": "1"}]', "input[0]: \"session\" must be an integer, not '1'"),
    ('[{"speaker": "A", "text": "x", "id": "1"}, {"speaker": "A", "text": "y", "id": "1"}]', 'input[1]: duplicate id "1"'),
    ('["hello"]', "input[0]: must be an object with speaker and text"),
    ('[]', "input: no turns"),
    ('[{"speaker": "A", "text": "x"', "input: invalid JSON at line 1"),
])
def test_generic_errors(raw, message):
    with pytest.raises(ValidationError) as info:
        generic_turns(raw)
    assert any(p.startswith(message) for p in info.value.problems), info.value.problems


def test_missing_file(tmp_path):
    with pytest.raises(ValidationError, match="no such file"):
        read_conversation(tmp_path / "nope.jsonl")


def test_new_turns_skips_known_turns_by_id_or_content():
    from tmem_graph.construct.inputs import InputTurn

    old = [Turn("a", "A", "hi", "2024-01-01T00:00:00"), Turn("T1", "B", "yo", None)]
    incoming = [InputTurn("A", "hi", "2024-01-01T00:00:00", None, "a"), InputTurn("B", "yo"),
                InputTurn("B", "new"), InputTurn("A", "also new", None, None, "z")]
    fresh, skipped = new_turns(old, incoming)
    assert skipped == 2 and [(t.id, t.text) for t in fresh] == [("T2", "new"), ("z", "also new")]
