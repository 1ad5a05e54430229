"""The LLM-free construction metrics (`tmem eval construction`) on a hand-made memory."""

from tmem_graph.encode import get_encoder
from tmem_graph.evaluate import construction
from tmem_graph.model import HorizonTrigger, Item, ItemTrigger, MemoryDoc, Persona, Scene, Topic, Turn

SAMPLE = {
    "sample_id": "conv-x",
    "conversation": {
        "session_1": [{"dia_id": "D1:1"}, {"dia_id": "D1:2"}, {"dia_id": "D1:3"}],
        "session_2": [{"dia_id": "D2:1"}, {"dia_id": "D2:2"}],
    },
    "observation": {
        "session_1_observation": {
            "Ana": [["Ana booked a cooking class in Porto for June.", "D1:1"],
                    ["Ana skips oysters because they upset her stomach.", "D1:3"]],
            "Ben": [["Ben wants photos of the fish market.", "D:1:2"]]},      # repaired to D1:2
        "session_2_observation": {"Ben": [["Ben's sister Clara moves in with him in May.", "D2:1"]]},
    },
}


def memory(turn_ids_known: bool = True) -> MemoryDoc:
    turns = [Turn("D1:1", "Ana", "I booked the cooking class in Porto for June!", None, 1),
             Turn("D1:2", "Ben", "Send me photos of the fish market.", None, 1),
             Turn("D1:3", "Ana", "I will skip the oysters, they upset my stomach.", None, 1),
             Turn("D2:1", "Ben", "My sister Clara moves in with me in May.", None, 2),
             Turn("D2:2", "Ana", "That is generous of you.", None, 2),
             Turn("C1", "Ana", "a stitched cue turn", None, 3)]
    scenes = [Scene("s1", ["D1:1", "D1:2", "D1:3"], "Ana's cooking class", "Ana booked a class in Porto.",
                    scene_trigger={"object": "cooking class", "event": "Ana booked a class in Porto"},
                    horizon=[HorizonTrigger("goal_arc", "travelling abroad next summer")]),
              Scene("s2", ["D2:1", "D2:2"], "Clara moves in", "Ben's sister moves in.",
                    horizon=[HorizonTrigger("personal_arc", "Ben's sister moves in")]),
              Scene("s3", ["C1"], "cue")]
    items = [Item("i1", "atomic", "Ana booked a cooking class in Porto for June.", ["s1"],
                  triggers=[ItemTrigger("travel plans", "Ana booked a cooking class in Porto"),
                            ItemTrigger("cooking", "choosing a birthday present")],
                  turn_ids=["D1:1"] if turn_ids_known else []),
             Item("i2", "atomic", "Ana skips oysters because they upset her stomach.", ["s1"],
                  turn_ids=["D1:1"] if turn_ids_known else []),   # cites the wrong turn
             Item("i3", "atomic", "the cue item", ["s3"], turn_ids=["C1"])]
    topics = [Topic("t1", ["s1", "s2"], "Ana and Ben"), Topic("t2", ["s2"], "Clara"), Topic("t3", ["s3"], "cue")]
    personas = [Persona("Ana", "Ana booked a cooking class in Porto. Ana is a 28-year-old software engineer."),
                Persona("Ben", "Ben's sister Clara moves in with him. My sister Clara moves in with me in May.")]
    return MemoryDoc("m", ["Ana", "Ben"], turns, scenes, topics, items, personas)


def test_every_metric_on_a_hand_made_memory():
    got = construction.measure(memory(), SAMPLE, None, get_encoder("fake:256"))
    # the stitched cue turn, its scene, item and topic are not the sample's and are not measured
    assert (got["turns"], got["scenes"], got["items"], got["topics"]) == (5, 2, 2, 2)
    assert got["observations"] == 4 and got["evidence_repairs"]["repaired"] == 1
    # i1 covers the class; i2 is close to the oysters observation but cites D1:1, not D1:3;
    # by its scene's turns it covers it too
    assert got["observation_coverage"] == 0.25 and got["observation_coverage_by_scene"] == 0.5
    assert got["items_per_session"] == {1: 2, 2: 0} and got["sessions_without_items"] == [2]
    assert got["items_per_100_turns"] == 40.0
    assert got["largest_topic_share"] == 1.0 and got["topics_per_10_scenes"] == 10.0
    assert got["scenes_in_several_topics"] == 0.5
    assert got["scene_turns"] == {"mean": 2.5, "median": 2.5, "min": 2, "max": 3, "at_most_5": 1.0}
    # the invented age and job has no turn behind it
    assert (got["persona_statements"], got["persona_supported"]) == (4, 0.75)
    # the line of the dialogue copied into Ben's persona: supported word for word, in his voice
    assert got["persona_dialogue_voice"] == 0.25
    # the first bridge and s2's projection restate their hosts; the goal arc does not
    assert got["trigger_copies"]["bridge"] == 0.5 and got["trigger_copies"]["horizon"] == 0.5
    assert got["trigger_copies"]["forward"] == 0.5 and got["trigger_copies"]["scene"] == 1.0


def test_items_without_source_turns_are_measured_by_their_scenes_turns():
    got = construction.measure(memory(turn_ids_known=False), SAMPLE, 1, get_encoder("fake:256"))
    assert got["items_without_turn_ids"] == 2 and got["observations"] == 3
    assert got["observation_coverage"] == got["observation_coverage_by_scene"] == round(2 / 3, 3)
    table = construction.markdown({"before": got, "after": got})
    assert "| observation coverage | 0.667 | 0.667 |" in table and "| sessions without items | none | none |" in table
