"""Fixtures without the benchmark's text: stripped on export, re-attached from the data folder."""

import json

import pytest

from tmem_graph.errors import ValidationError
from tmem_graph.evaluate.fixtures import attach, strip
from tmem_graph.format import parse_document

SAMPLE = {"sample_id": "s-1", "qa": [], "conversation": {
    "speaker_a": "Ana", "speaker_b": "Ben", "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "I started pottery."},
                  {"speaker": "Ben", "dia_id": "D1:2", "text": "Nice!", "blip_caption": "a clay bowl"}]}}
PROBE = {"index": 0, "relation_type": "causal", "cue_dialogue": "A: My cat died last week.\nB: I'm so sorry.",
         "trigger_query": "A: I still can't look at the empty basket.", "time_gap": "two weeks later"}


@pytest.fixture
def data(tmp_path):
    (tmp_path / "locomo10.json").write_text(json.dumps([SAMPLE]))
    (tmp_path / "locomo_plus_dev.json").write_text(json.dumps([PROBE]))
    return tmp_path


def document(texts):
    turns = [{"id": i, "speaker": s, "text": t, "time": "2023-05-08T13:56:00", "session": 1}
             for i, s, t in texts]
    return {"format": "tmem-memory/1", "memory_id": "fx", "speakers": ["Ana", "Ben"], "turns": turns,
            "scenes": [{"id": "s1", "title": "Pottery", "summary": "Ana took up pottery.",
                        "turn_ids": [t["id"] for t in turns]}]}


def test_strip_then_attach_gives_the_document_back(data):
    doc = document([("D1:1", "Ana", "I started pottery."), ("D1:2", "Ben", "Nice! [shared a photo: a clay bowl]"),
                    ("P0:1", "Ana", "My cat died last week."), ("X:1", "Ben", "not in the data")])
    fixture, stripped = strip(doc, "s-1", "s-1", data)
    assert stripped == 3
    assert [("text" in t) for t in fixture["turns"]] == [False, False, False, True]
    assert "pottery" not in json.dumps(fixture["turns"]) and "cat died" not in json.dumps(fixture)
    back = attach(fixture, data)
    assert back == doc
    parse_document(back)  # a valid tmem-memory/1 document again


def test_a_changed_text_is_kept_and_an_unknown_id_is_an_error(data):
    doc = document([("D1:1", "Ana", "I started POTTERY.")])
    fixture, stripped = strip(doc, "s-1", None, data)
    assert stripped == 0 and fixture["turns"][0]["text"] == "I started POTTERY."
    broken = {**fixture, "turns": [{"id": "D9:9", "speaker": "Ana", "time": None, "session": 9}]}
    with pytest.raises(ValidationError, match=r"turns\[0\] \('D9:9'\): no text"):
        attach(broken, data)
    with pytest.raises(ValidationError, match="texts_from: missing"):
        attach(document([]), data)
