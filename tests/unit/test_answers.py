"""The answer set: its loading (every problem named), its LLM-free scores, and the turns an
answer is said to rest on."""

import dataclasses
import json

import pytest

from tmem_graph.errors import ValidationError
from tmem_graph.evaluate.answers import coverage, load_set, markdown, says_not_in_memory, summarise_answers
from tmem_graph.llm.prompts.answer import answer_messages
from tmem_graph.retrieve.evidence import supporting_turns
from tmem_graph.retrieve.results import Recall, RecalledItem, RecalledScene, RecalledTurn


def _write(tmp_path, doc) -> object:
    path = tmp_path / "set.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_the_committed_set_loads_with_locomo_questions_from_the_data():
    from pathlib import Path

    files, questions = load_set(Path(__file__).parents[2] / "fixtures" / "answers.json")
    assert len(questions) >= 40 and len({q.id for q in questions}) == len(questions)
    assert {q.memory for q in questions} == set(files) and all(p.is_file() for p in files.values())
    assert {q.kind for q in questions} == {"associative", "factual", "temporal", "none"}
    locomo = [q for q in questions if q.id.startswith("c26")]
    assert len(locomo) >= 20 and all(q.question and q.answer for q in locomo)
    assert next(q for q in questions if q.id == "c26l-0").kind == "temporal"


def test_a_bad_set_names_every_problem(tmp_path):
    path = _write(tmp_path, {"format": "tmem-answers/1", "memories": {"m": "m.json"}, "questions": [
        {"id": "a", "memory": "m", "question": "Q?", "answer": "A", "kind": "associative"},
        {"id": "a", "memory": "m", "question": "Q?", "answer": "A", "kind": "guess"},
        {"id": "b", "memory": "other", "question": "Q?", "answer": "A", "kind": "factual"},
        {"id": "c", "memory": "m", "question": "", "kind": "factual"},
        {"id": "d", "memory": "m", "locomo": "conv-26", "qa": 100000}]})
    with pytest.raises(ValidationError) as caught:
        load_set(path)
    text = "\n".join(caught.value.problems)
    assert "questions[1] (a): duplicate id" in text and "kind 'guess'" in text
    assert "questions[2] (b): memory 'other' is not in 'memories'" in text
    assert "questions[3] (c): missing question, answer" in text
    assert "questions[4] (d): no LoCoMo question 'conv-26' qa[100000]" in text


def test_a_file_that_is_not_a_set_is_refused(tmp_path):
    with pytest.raises(ValidationError, match="not a tmem-answers/1 document"):
        load_set(_write(tmp_path, {"format": "tmem-memory/1"}))


def test_coverage_counts_the_gold_content_words_the_answer_holds():
    assert coverage("Somewhere without oysters, they upset Ana's stomach", "No oysters: Ana's stomach") == 1.0
    assert coverage("The tapas bar downtown", "A place without shellfish") == 0.0
    assert coverage("anything", "the") is None


def test_not_in_memory_is_recognised_and_counted_apart():
    assert says_not_in_memory("Not in memory.") and says_not_in_memory("That is not in memory")
    assert not says_not_in_memory("In Porto, in June.")
    rows = [{"kind": "none", "modes": {"cascade": {"answer": "Not in memory.", "f1": 1.0, "coverage": 1.0, "tokens": 10}}},
            {"kind": "factual", "modes": {"cascade": {"answer": "Not in memory.", "f1": 0.0, "coverage": 0.0, "tokens": 30}}},
            {"kind": "factual", "modes": {"cascade": {"answer": "Porto", "f1": 1.0, "coverage": 1.0, "tokens": 20}}}]
    summary = summarise_answers(rows, ["cascade"])["cascade"]
    assert summary["not_in_memory_wrongly"] == 1 and summary["not_in_memory_rightly"] == 1
    assert summary["factual"] == {"f1": 0.5, "coverage": 0.5, "n": 2} and summary["tokens_median"] == 20
    assert "| cascade | 0.667 / 0.667 (3) |" in markdown({"cascade": summary})


def test_the_answer_styles_are_the_assistant_and_the_benchmark_prompt():
    assistant = answer_messages("MEMORIES", "Where to eat?")[-1]["content"]
    locomo = answer_messages("MEMORIES", "Where to eat?", "locomo")[-1]["content"]
    assert "MEMORIES" in assistant and "Where to eat?" in assistant and "Not in memory" in assistant
    assert "less than 5-6 words" in locomo and "less than 5-6 words" not in assistant
    with pytest.raises(ValueError, match="answer style must be one of"):
        answer_messages("m", "q", "chatty")


def _recall() -> Recall:
    scene = RecalledScene("s1", "Cooking class", "2024-04-02T19:00:00", 1.0, ["dense"], {}, [
        {"id": "a1", "speaker": "Ana", "text": "I booked the cooking class in Porto for June!", "time": None},
        {"id": "a3", "speaker": "Ana", "text": "I will skip the oysters, my stomach never handles them.", "time": None},
        {"id": "a4", "speaker": "Ben", "text": "Send me photos of the market.", "time": None}])
    item = RecalledItem("i2", "Ana offered Ben her car for the storage trip.", "atomic", ["s2"], 1.0, ["scene"], {},
                        turn_ids=["b4"])
    recent = RecalledTurn("c1", "Ben", "Clara arrives on Monday.", None, 0.5, ["recent"], {}, seq=9)
    return Recall("m", "q", [scene], [item], [], [recent])


def test_an_answer_rests_on_the_turns_sharing_its_words():
    recall = _recall()
    assert supporting_turns("Somewhere without oysters: Ana's stomach never handles them.", recall, ["Ana", "Ben"]) == ["a3"]
    assert supporting_turns("Borrow Ana's car for the storage trip.", recall, ["Ana", "Ben"]) == ["b4"]
    assert supporting_turns("Clara arrives Monday.", recall, ["Ana", "Ben"]) == ["c1"]
    assert supporting_turns("Not in memory.", recall, ["Ana", "Ben"]) == []
    assert supporting_turns("Ana and Ben.", recall, ["Ana", "Ben"]) == []   # names alone support nothing


def test_a_relevant_then_answer_reply_is_cut_in_two():
    from tmem_graph.llm.prompts.answer import split_reply

    assert split_reply("Relevant: Ana skips oysters.\nAnswer: Somewhere without oysters.") == \
        ("Somewhere without oysters.", "Ana skips oysters.")
    assert split_reply("In Porto.") == ("In Porto.", "")
    assert split_reply("Relevant: x\nAnswer:") == ("Relevant: x\nAnswer:", "")


def test_the_compact_evidence_puts_facts_first_and_days_only_when_asked():
    from tmem_graph.retrieve.evidence import asks_when, compact_evidence

    recall = _recall()
    recall.persona = [{"speaker": "Ana", "summary": "Ana cooks. Ana avoids oysters."}]
    recall.persona.append({"speaker": "Ben", "summary": "Likes bikes."})
    undated = compact_evidence(recall, ["Ana", "Ben"], dated=False)
    assert undated.splitlines()[1:6] == ["Also known:", "- Ana offered Ben her car for the storage trip.",
                                         "- Ana cooks.", "- Ana avoids oysters.", "- Ben: Likes bikes."]
    recall.scenes[0].lane = "associative"   # what the triggers reached comes first
    assert compact_evidence(recall, ["Ana", "Ben"], dated=False).splitlines()[1:3] == [
        "Worth remembering here:", "--"]
    assert "Ana: I will skip the oysters, my stomach never handles them." in undated
    assert "2024" not in undated and "April" not in undated
    assert "(2 April 2024)" in compact_evidence(recall, ["Ana", "Ben"], dated=True)
    recall.scenes, recall.items, recall.recent, recall.persona = [], [], [], []
    assert compact_evidence(recall, ["Ana", "Ben"], dated=True) == ""   # not the opening line alone
    assert all(asks_when(q) for q in ["When is Ana's class?", "How long has Mel been married?",
                                      "In which year did Ben move?", "What date is the party?"])
    assert not any(asks_when(q) for q in ["Where should we eat?", "What did Caroline research?",
                                          "How did the race go?",
                                          "Where could we take Ana out for dinner when she is back from her trip?",
                                          "What did John use to play when he was younger?"])
    assert all(asks_when(q) for q in ["Remind me, when did Bob adopt Biscuit?", "Which week did Tim visit the UK?"])


def _focused_recall() -> Recall:
    scene = RecalledScene("s1", "Cooking class", "2024-04-02T19:00:00", 1.0, ["dense", "horizon"], {"horizon": 1}, [
        {"id": "a1", "speaker": "Ana", "text": "I booked the cooking class in Porto for June!", "time": None},
        {"id": "a3", "speaker": "Ana", "text": "I will skip the oysters, my stomach never handles them.", "time": None}])
    far = RecalledItem("i9", "Ben likes bikes.", "atomic", ["s2"], 1.0, ["scene", "bridge"], {"trigger": 2},
                       turn_ids=["b3"])
    near = RecalledItem("i1", "Ana avoids oysters.", "atomic", ["s1"], 1.0, ["bridge"], {"trigger": 1},
                        turn_ids=["a3"])
    plain = RecalledItem("i2", "Ana booked a class.", "atomic", ["s1"], 1.0, ["scene"], {"dense": 1})
    recall = Recall("m", "Where to eat with Ana?", [scene], [plain, far, near], [], [])
    recall.weak = True   # no turn is close to the question: what matters is tied to it by an arc
    return recall


def test_what_the_triggers_reached_are_the_candidates_to_keep_in_mind():
    from tmem_graph.retrieve.evidence import anticipated

    # no lanes: the turns of the scene the Horizon triggers ranked first, after the bridged items
    assert anticipated(_focused_recall()) == [
        ("Ana avoids oysters.", ["a3"]), ("Ben likes bikes.", ["b3"]),
        ("Ana said: I booked the cooking class in Porto for June!", ["a1"]),
        ("Ana said: I will skip the oysters, my stomach never handles them.", ["a3"])]
    assert anticipated(Recall("m", "q", [], [], [], [])) == []
    # with lanes: the associative scenes' turns in the recall's order, those of someone the
    # question names first; the descriptive scene's turns are not candidates; at most `most`
    recall = _focused_recall()
    recall.items = []
    market = RecalledScene("s0", "Market", None, 1.0, ["cue"], {"cue": 1}, [
        {"id": "m1", "speaker": "Ben", "text": "Send me photos of the market.", "time": None}], lane="associative")
    bikes = RecalledScene("s2", "Bikes", None, 1.0, ["dense"], {"dense": 1}, [
        {"id": "b3", "speaker": "Ben", "text": "My bike gear fills the room.", "time": None}], lane="descriptive")
    recall.scenes = [market, bikes, dataclasses.replace(recall.scenes[0], lane="cue")]
    assert [ids for _, ids in anticipated(recall)] == [["a1"], ["a3"], ["m1"]]
    recall.query = "Where should we eat with Ben?"
    assert [ids for _, ids in anticipated(recall)] == [["m1"], ["a1"], ["a3"]]
    assert [ids for _, ids in anticipated(recall, most=2)] == [["m1"], ["a1"]]


def test_an_answer_naming_what_the_evidence_lacks_is_asked_again_then_cut(scripted_llm):
    from tmem_graph.answering import answer, unsupported
    from tmem_graph.llm.client import LLMClient, LLMSettings

    evidence = "Bob: I signed up for the Lisbon half marathon. My left knee aches after ten kilometres."
    assert unsupported("Bob runs the Lisbon half marathon, a 150 km race with Carol.", evidence) == ["150", "Carol"]
    assert unsupported("Careful: Bob's knee aches after 10 km.", evidence) == ["10"]
    assert unsupported("Lisbon it is. Bob should rest his knee.", evidence) == []
    assert unsupported("She carries an EpiPen.", "Priya carries an EpiPen.") == []   # a name is a whole word
    llm = LLMClient(LLMSettings(base_url=scripted_llm.url, model="scripted"))
    question = "Should Bob run a marathon?"
    scripted_llm.expect("Question: Should Bob run", "It is a 150 km race. Bob should rest his knee first.")
    scripted_llm.expect("Use only names and numbers that appear in the memories.",
                        "Bob should rest his knee first. Ask Carol.")
    assert answer(llm, evidence, question, "focus") == ("Bob should rest his knee first.", "")
    assert "150" not in scripted_llm.requests[-1]["messages"][0]["content"]
    scripted_llm.expect("Question: Should Bob run", "It says 150 km.")
    scripted_llm.expect("Use only names and numbers", "Ask Carol.")
    assert answer(llm, evidence, question, "focus") == ("Not in memory.", "")
    calls = len(scripted_llm.requests)
    scripted_llm.expect("Question: Should Bob run", "Bob should rest his knee.")
    assert answer(llm, evidence, question, "focus") == ("Bob should rest his knee.", "")
    assert len(scripted_llm.requests) == calls + 1   # a grounded answer is not asked again


def test_the_focus_style_keeps_the_chosen_memory_in_the_answer(scripted_llm):
    from tmem_graph.answering import answer
    from tmem_graph.llm.client import LLMClient, LLMSettings

    llm = LLMClient(LLMSettings(base_url=scripted_llm.url, model="scripted"))
    scripted_llm.expect("Which one memory should be kept in mind", {"memory": 1})
    scripted_llm.expect("Keep in mind: Ana avoids oysters.\nAnswer the question", "The tapas bar.")
    assert answer(llm, "CONTEXT: Porto in June, the tapas bar.", "Where to eat with Ana?", "focus", _focused_recall()) == \
        ("The tapas bar. (Keep in mind: Ana avoids oysters.)", "Ana avoids oysters.")
    keep = scripted_llm.requests[0]
    assert keep["response_format"]["json_schema"]["schema"]["properties"]["memory"]["enum"] == [0, 1, 2, 3, 4]
    assert "1. Ana avoids oysters.\n2. Ben likes bikes." in keep["messages"][0]["content"]
    # an answer that says it already is left alone; 0 keeps nothing in mind
    scripted_llm.expect("Which one memory should be kept in mind", {"memory": 1})
    scripted_llm.expect("Keep in mind: Ana avoids oysters.", "Anywhere Ana avoids no oysters? No: avoid oysters.")
    assert answer(llm, "CONTEXT: Porto in June, the tapas bar.", "Where to eat?", "focus", _focused_recall())[0].endswith("avoid oysters.")
    scripted_llm.expect("Which one memory should be kept in mind", {"memory": 0})
    scripted_llm.expect("Question: Where to eat, then?\nAnswer the question", "In Porto.")
    assert answer(llm, "CONTEXT: Porto in June, the tapas bar.", "Where to eat, then?", "focus", _focused_recall()) == ("In Porto.", "")
    calls = len(scripted_llm.requests)
    scripted_llm.expect("Question: When is the class?\nAnswer the question", "In June.")
    assert answer(llm, "CONTEXT: Porto in June, the tapas bar.", "When is the class?", "focus", _focused_recall()) == ("In June.", "")
    assert len(scripted_llm.requests) == calls + 1   # a question asking when: no caveat asked for
    strong = _focused_recall()
    strong.weak = False   # a question close to something said asks for that fact: no caveat either
    scripted_llm.expect("Question: Where does Ana eat?\nAnswer the question", "In Porto.")
    assert answer(llm, "CONTEXT: Porto in June, the tapas bar.", "Where does Ana eat?", "focus", strong) == ("In Porto.", "")
    assert len(scripted_llm.requests) == calls + 2
    # ... unless it asks for advice: then the caveat is asked for, close match or not
    scripted_llm.expect("Which one memory should be kept in mind", {"memory": 1})
    scripted_llm.expect("Keep in mind: Ana avoids oysters.\nAnswer the question", "The tapas bar.")
    assert answer(llm, "CONTEXT: Porto in June, the tapas bar.", "Where should we eat with Ana?", "focus", strong)[1] == "Ana avoids oysters."


def test_a_question_asking_for_advice_is_told_from_one_asking_for_a_fact():
    from tmem_graph.retrieve.evidence import asks_advice

    advice = ["Can you suggest a restaurant for our team dinner?", "Should I order the seafood platter?",
              "Bob wants to run a marathon next month, good idea?", "Is it a good idea to book the tapas bar?",
              "Any tips for the trip?", "What do you think of a crab boil for the team?"]
    facts = ["What did Caroline research?", "Where will Clara sleep when she moves in with Ben?",
             "What is Bob's favourite film?", "When is Ana's cooking class?", "How many children does Melanie have?"]
    assert all(asks_advice(q) for q in advice) and not any(asks_advice(q) for q in facts)
