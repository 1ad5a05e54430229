"""Rules applied to the model's replies (segmentation, item triggers), through the real openai client."""

import pytest

from tmem_graph.construct import stages
from tmem_graph.llm.client import InvalidReply, LLMClient, LLMSettings
from tmem_graph.model import Item, Turn


def turns(session: int, count: int, start: int = 1) -> list[Turn]:
    return [Turn(f"D{session}:{n}", "Ana" if n % 2 else "Ben", f"line {n} of session {session}",
                 f"2024-0{session}-01T10:00:{n:02d}", session) for n in range(start, start + count)]


def segment(scripted_llm, conversation, starts):
    scripted_llm.expect("New turns, numbered", {"starts": starts})
    return [[t.id for t in scene] for scene in
            stages.segment(conversation, LLMClient(LLMSettings(base_url=scripted_llm.url, model="scripted")))]


def test_a_new_session_always_starts_a_scene(scripted_llm):
    scenes = segment(scripted_llm, turns(1, 4) + turns(2, 5), [])
    assert scenes == [["D1:1", "D1:2", "D1:3", "D1:4"], ["D2:1", "D2:2", "D2:3", "D2:4", "D2:5"]]


def test_boundaries_that_would_make_tiny_scenes_are_ignored(scripted_llm):
    # the model splits after every turn: scenes of at least MIN_SCENE_TURNS (5) remain, the short
    # tail of the session joins the scene before it
    assert stages.MIN_SCENE_TURNS == 5
    scenes = segment(scripted_llm, turns(1, 12), list(range(2, 13)))
    assert scenes == [[f"D1:{n}" for n in range(1, 6)], [f"D1:{n}" for n in range(6, 13)]]


def test_a_short_session_stays_its_own_scene(scripted_llm):
    scenes = segment(scripted_llm, turns(1, 5) + turns(2, 2) + turns(3, 5), [2, 4])
    assert scenes == [[f"D1:{n}" for n in range(1, 6)], ["D2:1", "D2:2"], [f"D3:{n}" for n in range(1, 6)]]


def test_item_triggers_drop_copies_of_the_example_and_duplicates(scripted_llm):
    trigger = {"concept": "travel plans", "bridge": "scheduling meetings in early June", "rationale": "away"}
    scripted_llm.expect("Fact: Ana booked a cooking class", {"triggers": [
        {"concept": "Pet ownership", "bridge": "moving flat", "rationale": "copied concept"},
        trigger, dict(trigger, rationale="same trigger again"),
        {"concept": "cooking", "bridge": "planning a weekend trip away from home.", "rationale": "copied bridge"},
        {"concept": "cooking hobby", "bridge": "buying a birthday present for Ana", "rationale": "she cooks"}]})
    item = Item("i1", "atomic", "Ana booked a cooking class in Porto.", ["s1"])
    out = stages.item_triggers(item, LLMClient(LLMSettings(base_url=scripted_llm.url, model="scripted")))
    assert [(t.concept, t.bridge) for t in out] == [("travel plans", "scheduling meetings in early June"),
                                                   ("cooking hobby", "buying a birthday present for Ana")]


def test_scene_ids_as_small_models_write_them_are_repaired():
    known = {"s1", "s3", "s12"}
    written = ["s1", "scene_s1", "Scene s3", "3", "S12", "scene 12", "s2", "x1", ""]
    assert [stages._scene_ref(w, known) for w in written] == ["s1", "s1", "s3", "s3", "s12", "s12", None, None, None]


def test_items_are_extracted_in_halves_when_no_reply_for_all_scenes_is_valid(scripted_llm):
    # a small model's reply for many scenes is cut at its token cap on every attempt: the scenes
    # are halved, and the second half sees the first as an earlier scene it may connect to
    for _ in range(4):  # the first call and its 3 retries, all cut off
        scripted_llm.expect("Scenes to extract from:\n--- scene s1", '{"items": [{"text": "Ana booked')
    scripted_llm.expect("Scenes to extract from:\n--- scene s1", {"items": [
        {"text": "Ana booked a cooking class.", "scene_ids": ["s1"], "time": None}]})
    scripted_llm.expect("Scenes to extract from:\n--- scene s2", {"items": [
        {"text": "Ben will drive Ana to the class she booked.", "scene_ids": ["s1", "s2"], "time": None}]})
    conversation = turns(1, 4) + turns(2, 4)
    scenes = [stages.Scene("s1", [t.id for t in conversation[:4]], "Class"),
              stages.Scene("s2", [t.id for t in conversation[4:]], "Ride")]
    topic = stages.Topic("t1", ["s1", "s2"], "Cooking")
    items = stages.extract_items(topic, scenes, [], {t.id: t for t in conversation},
                                 LLMClient(LLMSettings(base_url=scripted_llm.url, model="scripted")))
    assert [(i.kind, i.text, i.scene_ids) for i in items] == [
        ("atomic", "Ana booked a cooking class.", ["s1"]),
        ("connected", "Ben will drive Ana to the class she booked.", ["s1", "s2"])]
    prompts = ["\n".join(m["content"] for m in r["messages"]) for r in scripted_llm.requests]
    assert len(prompts) == 6 and "--- scene s2" not in prompts[4]
    assert "Earlier scenes of the topic (for connections only):\n--- scene s1" in prompts[5]


def test_a_reply_cut_at_the_token_cap_splits_the_scenes_at_once(scripted_llm):
    # finish_reason "length": retrying the same long answer would cost minutes on a local model
    scripted_llm.expect("Scenes to extract from:\n--- scene s1", '{"items": [{"text": "Ana booked', finish="length")
    scripted_llm.expect("Scenes to extract from:\n--- scene s1", {"items": [
        {"text": "Ana booked a cooking class.", "scene_ids": ["s1"], "time": None}]})
    scripted_llm.expect("Scenes to extract from:\n--- scene s2", {"items": [
        {"text": "Ben will drive Ana to the class.", "scene_ids": ["s2"], "time": None}]})
    conversation = turns(1, 4) + turns(2, 4)
    scenes = [stages.Scene("s1", [t.id for t in conversation[:4]], "Class"),
              stages.Scene("s2", [t.id for t in conversation[4:]], "Ride")]
    items = stages.extract_items(stages.Topic("t1", ["s1", "s2"], "Cooking"), scenes, [],
                                 {t.id: t for t in conversation},
                                 LLMClient(LLMSettings(base_url=scripted_llm.url, model="scripted")))
    assert [i.text for i in items] == ["Ana booked a cooking class.", "Ben will drive Ana to the class."]
    assert len(scripted_llm.requests) == 3


def test_a_single_scene_cut_at_the_token_cap_is_retried(scripted_llm):
    # nothing left to split: the retries (at a higher temperature) are the only way out
    scripted_llm.expect("Scenes to extract from:\n--- scene s1", '{"items": [{"text": "Ana booked', finish="length")
    scripted_llm.expect("Scenes to extract from:\n--- scene s1", {"items": [
        {"text": "Ana booked a cooking class.", "scene_ids": ["s1"], "time": None}]})
    conversation = turns(1, 4)
    scene = stages.Scene("s1", [t.id for t in conversation], "Class")
    items = stages.extract_items(stages.Topic("t1", ["s1"], "Cooking"), [scene], [], {t.id: t for t in conversation},
                                 LLMClient(LLMSettings(base_url=scripted_llm.url, model="scripted")))
    assert [i.text for i in items] == ["Ana booked a cooking class."]
    assert [r["temperature"] for r in scripted_llm.requests] == [0.0, 0.5]


def test_a_single_scene_without_a_valid_reply_is_an_error(scripted_llm):
    for _ in range(4):
        scripted_llm.expect("Scenes to extract from:\n--- scene s1", '{"items": [{"text": "Ana booked')
    conversation = turns(1, 4)
    scene = stages.Scene("s1", [t.id for t in conversation], "Class")
    with pytest.raises(InvalidReply, match="items topic t1: no valid"):
        stages.extract_items(stages.Topic("t1", ["s1"], "Cooking"), [scene], [], {t.id: t for t in conversation},
                             LLMClient(LLMSettings(base_url=scripted_llm.url, model="scripted")))
