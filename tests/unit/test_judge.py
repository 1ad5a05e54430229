import pytest
from pydantic import ValidationError

from tmem_graph.construct.inputs import InputTurn
from tmem_graph.evaluate.judge import normalize, summarise_locomo, summarise_plus, token_f1
from tmem_graph.evaluate.report import markdown_judge
from tmem_graph.llm.client import LLMSettings
from tmem_graph.llm.prompts.judge import Verdict, locomo_judge_messages, plus_answer_messages, plus_judge_messages


def test_normalize_drops_case_punctuation_and_articles():
    assert normalize("The Lisbon half-marathon, in an October!") == ["lisbon", "halfmarathon", "in", "october"]
    assert normalize(2022) == ["2022"]
    assert normalize("A") == [] and normalize("") == []


@pytest.mark.parametrize("prediction, gold, f1", [
    ("shellfish allergy", "shellfish allergy", 1.0),
    ("The shellfish allergy.", "shellfish allergy", 1.0),  # article and punctuation do not count
    ("Shellfish", "shellfish allergy", 2 / 3),  # precision 1, recall 1/2
    ("July 10, 2023", "July 2023", 0.8),  # precision 2/3, recall 1
    ("sushi", "shellfish allergy", 0.0),
    ("3", 3, 1.0),  # integer gold answers
    ("3 times", 3, 2 / 3),
    ("run run run", "run", 0.5),  # multiset overlap: one common token, precision 1/3, recall 1
    ("", "shellfish", 0.0),
    ("the", "shellfish", 0.0),  # nothing left after normalisation
    ("", "", 1.0),
])
def test_token_f1(prediction, gold, f1):
    assert token_f1(prediction, gold) == pytest.approx(f1)


def test_locomo_summary_is_the_mean_of_the_runs_per_category():
    rows = [{"category": 4, "labels": ["CORRECT", "CORRECT", "WRONG"], "score": 2 / 3, "f1": 1.0},
            {"category": 2, "labels": ["WRONG", "WRONG", "WRONG"], "score": 0.0, "f1": 0.5},
            {"category": 4, "labels": ["CORRECT", "WRONG", "WRONG"], "score": 1 / 3, "f1": 0.0}]
    summary = summarise_locomo(rows, runs=3)
    assert list(summary) == ["multi-hop", "temporal", "open-domain", "single-hop", "overall"]
    assert summary["single-hop"] == {"accuracy": pytest.approx(0.5), "f1": 0.5, "n": 2}
    assert summary["temporal"] == {"accuracy": 0.0, "f1": 0.5, "n": 1}
    assert summary["multi-hop"] == {"accuracy": None, "f1": None, "n": 0}
    assert summary["overall"]["accuracy"] == pytest.approx(1 / 3)
    assert summary["overall"]["per_run"] == pytest.approx([2 / 3, 1 / 3, 0.0])
    table = markdown_judge(summary)
    assert table.splitlines()[0] == "| category | judge accuracy | token F1 | n |"
    assert "| single-hop | 0.500 | 0.500 | 2 |" in table and "| multi-hop | – | – | 0 |" in table


def test_plus_summary_per_relation_type():
    rows = [{"relation": "causal", "label": "CORRECT"}, {"relation": "causal", "label": "WRONG"},
            {"relation": "value", "label": "CORRECT"}]
    summary = summarise_plus(rows)
    assert summary["causal"] == {"accuracy": 0.5, "n": 2} and summary["state"] == {"accuracy": None, "n": 0}
    assert summary["overall"]["accuracy"] == pytest.approx(2 / 3)
    assert markdown_judge(summary, group="relation").splitlines()[0] == "| relation | judge accuracy | n |"


def test_judge_runs_send_different_messages_sharing_a_prefix():
    runs = [locomo_judge_messages("What allergy does Priya have?", "shellfish", "Shellfish", run)[0]["content"]
            for run in (1, 2, 3)]
    assert len(set(runs)) == 3
    assert all(r.endswith(f"Grading run {n}.") for n, r in enumerate(runs, 1))
    assert "Gold answer: shellfish\nGenerated answer: Shellfish" in runs[0]
    assert runs[0].startswith(runs[1][:-2])


def test_plus_prompts_name_the_speakers_and_the_cue():
    answer = plus_answer_messages("Memories ...", "Bob", "Alice", "I booked the seafood place!", "2023-07-20")
    assert answer[0]["content"].startswith("You are Bob, in a long-running conversation with Alice.")
    assert answer[0]["content"].endswith('It is now 2023-07-20. Alice says: "I booked the seafood place!"\n\nBob:')
    cue = [InputTurn("Alice", "Priya has a shellfish allergy.", "2023-05-08T13:58:00")]
    judge = plus_judge_messages(cue, "Alice", "I booked the seafood place!", "Is it safe for Priya?")[0]["content"]
    assert "Cue:\n[2023-05-08T13:58:00] Alice: Priya has a shellfish allergy." in judge
    assert judge.endswith('Trigger (Alice): "I booked the seafood place!"\n\nReply:\nIs it safe for Priya?')


def test_verdict_schema_allows_only_the_two_labels():
    assert Verdict.model_validate_json('{"reasoning": "same fact", "label": "CORRECT"}').label == "CORRECT"
    with pytest.raises(ValidationError):
        Verdict.model_validate_json('{"reasoning": "", "label": "PARTIAL"}')
    assert Verdict.model_json_schema()["properties"]["reasoning"]["maxLength"] == 800


def test_judge_stage_has_its_own_model():
    settings = LLMSettings.from_env({"TMEM_LLM_MODEL": "small", "TMEM_LLM_MODEL_JUDGE": "big"})
    assert settings.model_for("judge") == "big" and settings.model_for("answer") == "small"
