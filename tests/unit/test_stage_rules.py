"""Rules applied to the model's replies (segmentation, topics, items, item triggers), through the
real openai client."""

import json

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


def llm_of(scripted_llm):
    return LLMClient(LLMSettings(base_url=scripted_llm.url, model="scripted"))


CLASS = [Turn("a1", "Ana", "I finally booked the cooking class in Porto for June!", "2024-04-02T19:00:00", 1),
         Turn("a2", "Ben", "Nice! Is it the one with the seafood market tour?", "2024-04-02T19:01:00", 1),
         Turn("a3", "Ana", "Yes, but I will skip the oysters, they upset my stomach.", "2024-04-02T19:02:00", 1),
         Turn("a4", "Ben", "Fair enough. Send me photos of the market.", "2024-04-02T19:03:00", 1)]


def test_items_cite_the_scene_turns_they_rest_on_and_bad_citations_are_repaired(scripted_llm):
    # replies the 1.5B model gave: every item citing turn 1, a number past the scene, none at all
    scripted_llm.expect("Scene s2 (time: 2024-04-02T19:00:00)", {"items": [
        {"text": "Ana booked a cooking class in Porto for June 2024.", "turns": [1, 2], "time": "2024-06"},
        {"text": "Oysters upset Ana's stomach, so she skips them.", "turns": [1]},
        {"text": "Ben asked Ana for photos of the seafood market.", "turns": [7, 2, 4], "earlier_scenes": ["s9"]},
        {"text": "Ben and Ana will go to the market tour together.", "turns": [], "earlier_scenes": ["Scene s1"]},
        {"text": "Something entirely unrelated happened.", "turns": [12]},
        {"text": "Ben wants photos.", "turns": [4], "earlier_scenes": ["s1"]},   # nothing in common with s1
        {"text": "ana booked a cooking class in porto for june 2024.", "turns": [1]}]})
    scene = stages.Scene("s2", [t.id for t in CLASS], "Ana's cooking class", time=CLASS[0].time)
    earlier = [stages.Scene("s1", ["x1"], "Ana plans a trip to Portugal", "She will travel in June for a market tour.")]
    items = stages.extract_items(scene, CLASS, earlier, llm_of(scripted_llm))
    assert [(i.kind, i.scene_ids, i.turn_ids, i.time) for i in items] == [
        ("atomic", ["s2"], ["a1"], None),                # a2 shares no word with it; "2024-06" is no date
        ("atomic", ["s2"], ["a3"], None),                # turn 1 shares no word: the turn that does
        ("atomic", ["s2"], ["a2", "a4"], None),          # 7 is past the scene, s9 was not offered
        ("connected", ["s1", "s2"], ["a2"], None),       # no citation: the turn sharing most words
        ("atomic", ["s2"], ["a4"], None)]                # an earlier scene it shares no word with
    # the unrelated item cites no valid turn and shares no word; the repeated one is dropped
    prompt = scripted_llm.requests[0]["messages"][0]["content"]
    assert "[3] [2024-04-02T19:02:00] Ana: Yes, but I will skip" in prompt
    assert "Earlier scenes (for connections only):\n- s1 (time unknown): Ana plans a trip" in prompt
    schema = scripted_llm.requests[0]["response_format"]["json_schema"]["schema"]
    assert "s1" in json.dumps(schema) and "s2" not in json.dumps(schema)


def test_a_scene_item_reply_cut_at_the_token_cap_is_retried(scripted_llm):
    scripted_llm.expect("Scene s1 (time", '{"items": [{"text": "Ana booked', finish="length")
    scripted_llm.expect("Scene s1 (time", {"items": [{"text": "Ana booked a cooking class.", "turns": [1]}]})
    items = stages.extract_items(stages.Scene("s1", [t.id for t in CLASS], "Class"), CLASS, [], llm_of(scripted_llm))
    assert [(i.text, i.turn_ids) for i in items] == [("Ana booked a cooking class.", ["a1"])]
    assert [r["temperature"] for r in scripted_llm.requests] == [0.0, 0.5]


def test_a_scene_without_a_valid_items_reply_is_an_error(scripted_llm):
    for _ in range(4):
        scripted_llm.expect("Scene s1 (time", '{"items": [{"text": "Ana booked')
    with pytest.raises(InvalidReply, match="items scene s1: no valid"):
        stages.extract_items(stages.Scene("s1", [t.id for t in CLASS], "Class"), CLASS, [], llm_of(scripted_llm))


def topic_setup():
    scenes = {"s1": stages.Scene("s1", [], "Ana books a cooking class in Porto", "cooking class Porto June"),
              "s2": stages.Scene("s2", [], "Ben clears his spare room for Clara", "spare room bike gear Clara"),
              "s3": stages.Scene("s3", [], "Ana's cooking class in Porto is cancelled", "cooking class Porto cancelled")}
    topics = [stages.Topic("t1", ["s1"], "Ana's cooking class in Porto", ["cooking class", "Porto"]),
              stages.Topic("t2", ["s2"], "Clara moves in with Ben", ["Clara", "spare room"])]
    return scenes, topics


def assign(scripted_llm, scene, floor):
    from tmem_graph.encode import get_encoder
    scenes, topics = topic_setup()
    ids = iter(["t3", "t4"])
    old = stages.TOPIC_FLOOR
    stages.TOPIC_FLOOR = floor
    try:
        touched = stages.assign_topics([scenes[scene]], topics, llm_of(scripted_llm), lambda: next(ids),
                                       get_encoder("fake:256"), scenes)
    finally:
        stages.TOPIC_FLOOR = old
    return touched, {t.id: t.scene_ids for t in topics}


def test_a_scene_joins_the_topic_the_model_chooses_among_the_nearest(scripted_llm):
    scripted_llm.expect("Which ONE of the topics listed below", {"topic": "Topic t1", "also": ["t1"]})
    scripted_llm.expect("A new scene joined it", {"title": "Ana's cooking class in Porto", "keywords": ["cancelled"]})
    touched, members = assign(scripted_llm, "s3", floor=-1.0)
    assert touched == ["t1"] and members == {"t1": ["s1", "s3"], "t2": ["s2"]}
    prompt = scripted_llm.requests[0]["messages"][0]["content"]
    assert prompt.index("- t1: Ana's cooking class") < prompt.index("- t2: Clara moves in")  # nearest first


def test_a_yes_to_every_offered_topic_keeps_only_the_choice(scripted_llm):
    scripted_llm.expect("Which ONE of the topics listed below", {"topic": "t2", "also": ["t1", "t2"]})
    scripted_llm.expect("A new scene joined it", {"title": "Clara moves in with Ben", "keywords": []})
    touched, members = assign(scripted_llm, "s3", floor=-1.0)
    assert touched == ["t2"] and members["t1"] == ["s1"]


def test_new_or_an_id_not_offered_starts_a_new_topic(scripted_llm):
    for answer in ("new", "t7"):
        scripted_llm.expect("Which ONE of the topics listed below", {"topic": answer, "also": ["t1"]})
        scripted_llm.expect("This scene starts a new topic", {"title": "A cancelled class", "keywords": ["class"]})
        touched, members = assign(scripted_llm, "s3", floor=-1.0)
        assert touched == ["t3"] and members["t3"] == ["s3"] and members["t1"] == ["s1"]


def test_a_scene_near_no_topic_starts_one_without_a_choice_call(scripted_llm):
    scripted_llm.expect("This scene starts a new topic", {"title": "Clara's room", "keywords": []})
    touched, members = assign(scripted_llm, "s2", floor=1.01)
    assert touched == ["t3"] and len(scripted_llm.requests) == 1


def test_the_speakers_names_do_not_make_a_topic_near(scripted_llm):
    # Every card of a two-person conversation names both speakers; set aside, a scene that
    # shares only the names with a topic's scene is near no topic and starts one, no choice call.
    from tmem_graph.encode import get_encoder
    s1 = stages.Scene("s1", [], "Ana and Ben's cooking class", "Ana and Ben book a cooking class in Porto")
    s2 = stages.Scene("s2", [], "Ana and Ben's spare room", "Ana and Ben clear the spare room for Clara")
    scripted_llm.expect("Which ONE of the topics listed below", {"topic": "t1", "also": []}, reusable=True)
    scripted_llm.expect("A new scene joined it", {"title": "Ana and Ben at home", "keywords": []}, reusable=True)
    scripted_llm.expect("This scene starts a new topic", {"title": "The spare room", "keywords": []}, reusable=True)
    for names, calls, ids in (([], 2, ["t1"]), (["Ana", "Ben"], 1, ["t1", "t2"])):
        topics = [stages.Topic("t1", ["s1"], "Cooking", ["cooking class"])]
        before = len(scripted_llm.requests)
        old = stages.TOPIC_FLOOR
        stages.TOPIC_FLOOR = 0.3
        try:
            stages.assign_topics([s2], topics, llm_of(scripted_llm), lambda: "t2", get_encoder("fake:256"),
                                 {"s1": s1, "s2": s2}, names)
        finally:
            stages.TOPIC_FLOOR = old
        assert len(scripted_llm.requests) - before == calls, names
        assert [t.id for t in topics] == ids


def test_without_names_drops_the_names_and_their_possessive():
    from tmem_graph.construct import checks
    assert checks.without_names("Melanie and Caroline's painting class", ["Caroline", "Melanie"]) == "and painting class"
    assert checks.without_names("Mel's dog", []) == "Mel's dog"


def test_a_bridge_that_restates_its_item_is_asked_again_then_dropped(scripted_llm):
    item = Item("i1", "atomic", "Ana booked a cooking class in Porto for June.", ["s1"])
    scripted_llm.expect("Fact: Ana booked a cooking class", {"triggers": [
        {"concept": "travel plans", "bridge": "Ana booked a cooking class in Porto", "rationale": "r"}]})
    scripted_llm.expect("A bridge above repeats the fact itself", {"triggers": [
        {"concept": "travel plans", "bridge": "the cooking class Ana booked in Porto", "rationale": "r"},
        {"concept": "cooking hobby", "bridge": "buying a birthday present for her", "rationale": "she cooks"}]})
    out = stages.item_triggers(item, llm_of(scripted_llm))
    assert [(t.concept, t.bridge) for t in out] == [("travel plans", None),
                                                   ("cooking hobby", "buying a birthday present for her")]
    assert len(scripted_llm.requests) == 2


def test_persona_statements_are_kept_only_when_a_cited_turn_supports_them():
    # what the 1.5B model wrote into conv-26's personas: an age and a job nobody said, a hobby
    # of someone else, statements "kept" that the profile never held
    from tmem_graph.encode import get_encoder
    from tmem_graph.llm.prompts.persona import PersonaStatement as S

    window = [Turn("D1:1", "Caroline", "I went to a LGBTQ support group yesterday and it was so powerful.", None, 1),
              Turn("D1:2", "Melanie", "Wow! I'm swamped with the kids and work lately.", None, 1),
              Turn("D1:3", "Caroline", "Researching adoption agencies, it's been a dream to have a family.", None, 1)]
    reply = [S(text="Caroline went to an LGBTQ support group", turns=[1]),
             S(text="Caroline is a 25-year-old software engineer.", turns=[1, 2]),
             S(text="Caroline is researching adoption agencies.", turns=[9, 3]),
             S(text="Caroline loves pottery.", turns=[]),
             S(text="Caroline is kind to her friends.", turns=[]),
             S(text="caroline went to an lgbtq support group.", turns=[1]),
             # the whole profile as one statement, citing nothing
             S(text="Caroline is a 30-year-old counselor. Caroline dreams of having a family! They have a shared")]
    kept = stages.persona_statements(reply, "Caroline is kind to her friends.", window, get_encoder("fake:256"),
                                     ["Caroline", "Melanie"])
    assert kept == ["Caroline went to an LGBTQ support group.", "Caroline is researching adoption agencies.",
                    "Caroline is kind to her friends.", "Caroline dreams of having a family!"]


def test_persona_sentences_in_the_dialogue_s_voice_are_dropped():
    # lines the 1.5B model copied verbatim into Caroline's persona (conv26-full, sessions 1-8),
    # each supported word for word by the turn it copies
    from tmem_graph.construct import checks
    from tmem_graph.encode import get_encoder
    from tmem_graph.llm.prompts.persona import PersonaStatement as S

    copied = ["What's a favorite book you remember from your childhood?", "Your drive to help is awesome!",
              "I'm still looking into counseling and mental health jobs.",
              "It's important to me that people have someone to talk to, and I want to help make that happen."]
    assert all(checks.in_dialogue_voice(line) for line in copied)
    assert not any(checks.in_dialogue_voice(line) for line in [
        "Caroline loved reading.", "Caroline moved to the US from Sweden.", "Melanie's kids like dinosaurs.",
        "Caroline is looking into counseling jobs, which matter to her.", "She enjoys the outdoors, i.e. hiking.",
        "Her grandfather fought in World War I.", "She lives in Kuala Lumpur, MY.", "She works for a us-based firm."])
    assert checks.in_dialogue_voice("'I love it,' she said.") and checks.in_dialogue_voice("We went camping.")
    # the local model's persona of Ana in scripts/demo.sh: Ben's line, under his name
    assert checks.in_dialogue_voice("Ben: Fair enough.") and not checks.in_dialogue_voice("Ben moved to Porto: a big step.")
    window = [Turn(f"D8:{n}", "Caroline", line, None, 8) for n, line in enumerate(copied, 1)]
    window.append(Turn("D8:9", "Caroline", "I'm still looking into counseling and mental health jobs for kids.", None, 8))
    reply = [S(text=" ".join(copied), turns=[]),
             S(text="Caroline is looking into counseling and mental health jobs.", turns=[3])]
    kept = stages.persona_statements(reply, None, window, get_encoder("fake:256"), ["Caroline", "Melanie"])
    assert kept == ["Caroline is looking into counseling and mental health jobs."]



def test_a_persona_sentence_rests_on_its_speaker_s_own_turn_and_invents_no_number():
    # the local model's persona of Ben in scripts/demo.sh: Ana offered her car, and "the 20" is
    # nowhere in the dialogue
    from tmem_graph.construct import checks
    from tmem_graph.encode import get_encoder
    from tmem_graph.llm.prompts.persona import PersonaStatement as S

    window = [Turn("b1", "Ben", "My sister Clara moves in with me next month while she looks for a job.", None, 2),
              Turn("b3", "Ben", "The spare room is full of my bike gear, so I need to clear it this weekend.", None, 2),
              Turn("b4", "Ana", "I can lend you my car to take things to storage.", None, 2)]
    reply = [S(text="Ben's sister Clara moves in with him next month.", turns=[1]),
             S(text="Ben has a car that he can lend to Clara to take things to the 20.", turns=[3]),
             S(text="Ben can lend his car to take things to storage.", turns=[3]),
             S(text="Ben needs to clear his spare room of bike gear this weekend.", turns=[2])]
    kept = stages.persona_statements(reply, None, window, get_encoder("fake:256"), ["Ana", "Ben"], "Ben")
    assert kept == ["Ben's sister Clara moves in with him next month.",
                    "Ben needs to clear his spare room of bike gear this weekend."]
    assert checks.invented_numbers("to the 20.", "I can lend you my car") == {"20"}
    assert checks.invented_numbers("married for 5 years, since 2018", "five years ago, in 2018") == set()


SHORT = [Turn("a1", "Ana", "I finally booked the cooking class in Porto for the first week of June!", None, 1),
         Turn("a2", "Ben", "Nice! Is it the one with the seafood market tour?", None, 1),
         Turn("a3", "Ana", "Yes, although I will skip the oysters, my stomach never handles them well.", None, 1),
         Turn("a4", "Ben", "Fair enough. Send me photos of the market.", None, 1)]


def test_a_persona_reply_that_copies_the_dialogue_is_asked_again_with_the_third_person_rule(scripted_llm):
    # the local model's first persona reply for Ana on examples/short-dialogue.jsonl: the
    # transcript itself, every line under its speaker's name, so nothing was kept and Ana had
    # no persona; its reply to the re-ask (with a line about Ben, which Ana's profile drops)
    from tmem_graph.encode import get_encoder

    scripted_llm.expect("never a line of the dialogue", {"statements": [
        {"text": "Ana booked the cooking class in Porto for the first week of June.", "turns": [1]},
        {"text": "Ben asked for photos of the market.", "turns": [4]},
        {"text": "Ana will skip the oysters, her stomach never handles them well.", "turns": [3]}]})
    scripted_llm.expect("Keep a profile of Ana", {"statements": [
        {"text": f"{t.speaker}: {t.text}", "turns": [n]} for n, t in enumerate(SHORT, 1)]})
    summary = stages.persona("Ana", None, SHORT, llm_of(scripted_llm), get_encoder("fake:256"), ["Ana", "Ben"])
    assert summary == ("Ana booked the cooking class in Porto for the first week of June. "
                       "Ana will skip the oysters, her stomach never handles them well.")
    assert len(scripted_llm.requests) == 2 and not scripted_llm.unexpected


def test_a_persona_reply_in_the_third_person_costs_one_call(scripted_llm):
    from tmem_graph.encode import get_encoder

    scripted_llm.expect("Keep a profile of Ana", {"statements": [
        {"text": "Ana booked the cooking class in Porto for the first week of June.", "turns": [1]}]})
    summary = stages.persona("Ana", "Ana likes Porto.", SHORT, llm_of(scripted_llm), get_encoder("fake:256"),
                             ["Ana", "Ben"])
    assert summary == "Ana booked the cooking class in Porto for the first week of June."
    assert len(scripted_llm.requests) == 1


def test_a_persona_re_ask_adds_what_the_first_reply_lacks_and_a_failed_one_keeps_the_first(scripted_llm):
    from tmem_graph.encode import get_encoder

    first = {"statements": [{"text": "Ana booked the cooking class in Porto for the first week of June.", "turns": [1]},
                            {"text": "Ana: my stomach never handles oysters well.", "turns": [3]}]}
    scripted_llm.expect("never a line of the dialogue", {"statements": [
        {"text": "Ana will skip the oysters at the seafood market tour.", "turns": [3]},
        {"text": "Ana booked the cooking class in Porto for the first week of June!", "turns": [1]}]})
    scripted_llm.expect("Keep a profile of Ana", first)
    summary = stages.persona("Ana", None, SHORT, llm_of(scripted_llm), get_encoder("fake:256"), ["Ana", "Ben"])
    assert summary == ("Ana will skip the oysters at the seafood market tour. "
                       "Ana booked the cooking class in Porto for the first week of June!")
    scripted_llm.expect("never a line of the dialogue", "not JSON at all", reusable=True)
    scripted_llm.expect("Keep a profile of Ana", first)
    summary = stages.persona("Ana", None, SHORT, llm_of(scripted_llm), get_encoder("fake:256"), ["Ana", "Ben"])
    assert summary == "Ana booked the cooking class in Porto for the first week of June."


def test_a_persona_sentence_about_the_other_speaker_is_not_the_speaker_s():
    from tmem_graph.construct import checks

    names = ["Ana", "Ben"]
    assert checks.about_another("Ben asked for photos of the market.", "Ana", names)
    assert checks.about_another("  Ben said the spare room is full.", "Ana", names)
    assert not checks.about_another("Ben's sister Clara moves in with him.", "Ben", names)
    assert not checks.about_another("Ana offered to lend Ben her car.", "Ana", names)
    assert not checks.about_another("Bench presses are Ana's workout.", "Ana", names)
    assert not checks.about_another("Ben likes Porto.", "Ben", names)

def scene_reply(**horizon):
    return {"situation": "Two friends plan a trip", "object": "a cooking class", "event": "a booking",
            "emotion": "excitement", "horizon": horizon}


def test_a_look_ahead_that_restates_its_scene_is_asked_again_then_dropped(scripted_llm):
    scene = stages.Scene("s1", [t.id for t in CLASS], "Ana books a cooking class in Porto",
                         "Ana booked a cooking class in Porto for June and will skip the oysters.")
    scripted_llm.expect("Read this scene", scene_reply(
        goal_arc="Ana booked a cooking class in Porto for June",                        # restates
        avoidance_habit="ordering at a seafood restaurant with friends",                # a later situation
        legacy_anchor="the cooking class in Porto Ana booked for June"))                # restates
    scripted_llm.expect("The look-ahead for goal_arc, legacy_anchor above repeats", scene_reply(
        goal_arc="choosing a weekend course after the class, tired of cooking",          # now a later one
        avoidance_habit="the oysters Ana will skip",                                     # worse: first kept
        legacy_anchor="Ana's cooking class in Porto in June"))                          # still restates
    out = stages.scene_triggers(scene, CLASS, llm_of(scripted_llm))
    assert [(h.channel, h.text) for h in out.horizon] == [
        ("avoidance_habit", "ordering at a seafood restaurant with friends"),
        ("goal_arc", "choosing a weekend course after the class, tired of cooking")]
    assert out.scene_trigger["object"] == "a cooking class" and len(scripted_llm.requests) == 2


def test_look_aheads_that_name_later_situations_cost_one_call(scripted_llm):
    scene = stages.Scene("s1", [t.id for t in CLASS], "Ana books a cooking class", "Ana booked a class.")
    scripted_llm.expect("Read this scene", scene_reply(goal_arc="planning dinner for friends after June",
                                                       personal_arc="null"))
    out = stages.scene_triggers(scene, CLASS, llm_of(scripted_llm))
    assert [h.channel for h in out.horizon] == ["goal_arc"] and len(scripted_llm.requests) == 1


def test_a_re_ask_without_a_valid_reply_keeps_the_first_reply(scripted_llm):
    # the 1.5B model can answer a re-ask with broken JSON; the first reply is still usable
    scene = stages.Scene("s1", [t.id for t in CLASS], "Ana books a cooking class in Porto",
                         "Ana booked a cooking class in Porto for June.")
    scripted_llm.expect("Read this scene", scene_reply(goal_arc="Ana booked a cooking class in Porto for June",
                                                       avoidance_habit="ordering at a seafood restaurant"))
    scripted_llm.expect("The look-ahead for goal_arc above repeats", '{"situation": "broken', reusable=True)
    out = stages.scene_triggers(scene, CLASS, llm_of(scripted_llm))
    assert [(h.channel, h.text) for h in out.horizon] == [("avoidance_habit", "ordering at a seafood restaurant")]
    item = Item("i1", "atomic", "Ana booked a cooking class in Porto for June.", ["s1"])
    scripted_llm.expect("Fact: Ana booked a cooking class", {"triggers": [
        {"concept": "travel plans", "bridge": "Ana booked a cooking class in Porto", "rationale": "r"},
        {"concept": "gifts", "bridge": "buying a birthday present for her", "rationale": "r"}]})
    scripted_llm.expect("A bridge above repeats the fact itself", '{"triggers": [{"concept"', reusable=True)
    assert [(t.concept, t.bridge) for t in stages.item_triggers(item, llm_of(scripted_llm))] == [
        ("travel plans", None), ("gifts", "buying a birthday present for her")]
