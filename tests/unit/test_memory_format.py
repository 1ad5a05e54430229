"""Validation of `tmem-memory/1` documents: one rejection per rule, messages name the object."""

import pytest

from tmem_graph.errors import ValidationError
from tests.fixtures.cases import BROKEN, mutate
from tmem_graph.format import parse_document, to_document


def problems(doc) -> list[str]:
    with pytest.raises(ValidationError) as info:
        parse_document(doc)
    return info.value.problems


def test_valid_document_parses_with_all_parts(team_doc):
    memory, warnings = parse_document(team_doc)
    assert warnings == []
    assert memory.counts() == {"turns": 15, "scenes": 4, "topics": 3, "items": 6,
                               "triggers": (6 + 4 + 4 + 1) + (3 + 3 + 4 + 0 + 3 + 3), "personas": 2}
    i3 = memory.items[2]
    assert [(t.concept, t.bridge, t.rationale) for t in i3.triggers] == [
        ("knee injury", None, None), (None, "picking new shoes or a physiotherapist", "pain limits his training")]
    assert memory.scenes[1].scene_trigger == {"situation": "training for a race",
                                              "event": "signing up for a half marathon"}


def test_serialisation_is_a_fixed_point(team_doc):
    once = to_document(parse_document(team_doc)[0])
    twice = to_document(parse_document(once)[0])
    assert once == twice
    # only empty optional parts are dropped
    team_doc["items"][3].pop("triggers")
    assert once == team_doc


def test_unknown_keys_are_warnings_not_errors(team_doc):
    team_doc["colour"] = "blue"
    team_doc["turns"][0]["mood"] = "tired"
    _, warnings = parse_document(team_doc)
    assert warnings == ["document: unknown key 'colour' ignored", "turns[0]: unknown key 'mood' ignored"]


@pytest.mark.parametrize("path, value, expected", BROKEN)
def test_each_rule_rejects_with_the_objects_path(team_doc, path, value, expected):
    found = problems(mutate(team_doc, path, value))
    assert any(p.startswith(expected) for p in found), found


def test_turn_limit(team_doc):
    team_doc["turns"] = [{}] * 1_000_001
    assert problems(team_doc)[0] == "turns: 1000001 turns exceed the limit of 1000000"


def test_every_problem_is_reported_and_the_message_counts_them(team_doc):
    team_doc["turns"][0]["speaker"] = "Carol"
    team_doc["items"][0]["scene_ids"] = ["s99"]
    with pytest.raises(ValidationError) as info:
        parse_document(team_doc)
    assert len(info.value.problems) == 2
    assert str(info.value).endswith("(and 1 more problems)")


def test_not_an_object():
    assert problems([1, 2]) == ["document: must be a JSON object, not list"]


def test_minimal_memory_with_turns_and_scenes_only():
    doc = {"format": "tmem-memory/1", "memory_id": "tiny", "speakers": ["A"],
           "turns": [{"id": "1", "speaker": "A", "text": "hi"}],
           "scenes": [{"id": "s", "turn_ids": ["1"]}]}
    memory, _ = parse_document(doc)
    assert memory.counts()["triggers"] == 0
    assert to_document(memory) == {**doc, "topics": [], "items": [], "personas": []}


def test_items_source_turns_round_trip_and_are_omitted_when_unknown(team_doc):
    team_doc["items"][4]["turn_ids"] = ["D1:2", "D3:1"]   # a connected item: turns of both its scenes
    memory, warnings = parse_document(team_doc)
    assert warnings == [] and memory.items[4].turn_ids == ["D1:2", "D3:1"] and memory.items[0].turn_ids == []
    again = to_document(memory)
    assert again["items"][4]["turn_ids"] == ["D1:2", "D3:1"] and "turn_ids" not in again["items"][0]


@pytest.mark.parametrize("memory_id", ["x\n", "x\r\n", "\nx", "x\n\n", "a b"])
def test_a_memory_id_with_a_line_break_or_space_is_refused(memory_id):
    from tmem_graph.format import check_memory_id

    with pytest.raises(ValidationError, match="not a valid memory id"):
        check_memory_id(memory_id)
    assert check_memory_id("x") == "x"
