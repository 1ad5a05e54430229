"""The LLM-judge protocol end to end on a small imported memory: answers and verdicts through the
real `openai` client against a scripted endpoint, the accuracy and F1 arithmetic, and the
`tmem eval locomo --judge` and `tmem eval locomo-plus --judge` reports."""

import json
import os
import subprocess
import sys

import pytest

from tmem_graph import api
from tmem_graph.construct.inputs import InputTurn
from tmem_graph.evaluate.data import QA, Probe
from tmem_graph.evaluate.judge import judge_locomo, judge_locomo_plus
from tmem_graph.llm.client import LLMClient, LLMSettings

ALLERGY = "What allergy does Priya have?"
DOG = "When did Bob adopt Biscuit?"
QAS = [QA(ALLERGY, 4, ["D1:3"], "shellfish allergy"), QA(DOG, 2, ["D4:1"], "July 2023")]
SEAFOOD = "I'm thinking of booking a seafood restaurant for the team dinner."


def verdict(label: str) -> dict:
    return {"reasoning": f"scripted {label.lower()}", "label": label}


def prompt(request: dict) -> str:
    return "\n".join(m["content"] for m in request["messages"])


@pytest.fixture
def memory(store, encoder, new_id, team_doc):
    team_doc["memory_id"] = new_id("judge")
    return api.import_memory(team_doc, store=store, encoder=encoder)[0]


@pytest.fixture
def llm(scripted_llm):
    return LLMClient(LLMSettings(base_url=scripted_llm.url, model="answerer", stage_models=(("judge", "grader"),)))


def test_locomo_judge_mean_of_three_runs_and_token_f1(memory, scripted_llm, llm):
    scripted_llm.expect(f"Question: {ALLERGY}\n\nAnswer (a short answer string):", "Shellfish")
    scripted_llm.expect(f"Question: {DOG}\n\nAnswer (a short answer string):", "July 10, 2023")
    for label in ("CORRECT", "CORRECT", "WRONG"):
        scripted_llm.expect(f"Question: {ALLERGY}\nGold answer: shellfish allergy", verdict(label))
    for _ in range(3):
        scripted_llm.expect(f"Question: {DOG}\nGold answer: July 2023", verdict("WRONG"))

    result = judge_locomo(memory, QAS, llm, runs=3)

    first, second = result["questions"]
    assert first["answer"] == "Shellfish" and first["labels"] == ["CORRECT", "CORRECT", "WRONG"]
    assert first["score"] == pytest.approx(2 / 3) and first["f1"] == pytest.approx(2 / 3)
    assert second["score"] == 0 and second["f1"] == pytest.approx(0.8)
    summary = result["summary"]
    assert summary["single-hop"] == {"accuracy": pytest.approx(2 / 3), "f1": pytest.approx(2 / 3), "n": 1}
    assert summary["temporal"] == {"accuracy": 0.0, "f1": pytest.approx(0.8), "n": 1}
    assert summary["overall"]["accuracy"] == pytest.approx(1 / 3) and summary["overall"]["n"] == 2
    assert summary["overall"]["per_run"] == pytest.approx([0.5, 0.5, 0.0])

    answers = [r for r in scripted_llm.requests if "Answer (a short answer string)" in prompt(r)]
    judged = [r for r in scripted_llm.requests if "Gold answer:" in prompt(r)]
    assert len(answers) == 2 and len(judged) == 3 * 2
    assert "She's fine now, but it turns out she has a severe shellfish allergy" in prompt(answers[0])
    assert {r["model"] for r in answers} == {"answerer"} and {r["model"] for r in judged} == {"grader"}
    assert all(r["response_format"]["json_schema"]["name"] == "Verdict" for r in judged)
    allergy_runs = [prompt(r) for r in judged if ALLERGY in prompt(r)]
    assert len(set(allergy_runs)) == 3  # the runs differ, so no run is the cached reply of another
    assert llm.ledger["judge"].calls == 6 and llm.ledger["answer"].calls == 2


def test_locomo_plus_judge_replies_as_the_other_speaker(memory, scripted_llm, llm):
    cue = [InputTurn("Alice", "She's fine now, but it turns out she has a severe shellfish allergy. "
                     "She carries an EpiPen everywhere.", "2023-05-08T13:58:00", 1, "D1:3")]
    probe = Probe(7, "causal", "team-dinner", cue, SEAFOOD, "Alice", "2023-07-20T10:00:00")
    scripted_llm.expect("You are Bob, in a long-running conversation with Alice.",
                        "Sounds fun, but check the menu for Priya's shellfish allergy first.")
    scripted_llm.expect(f'Trigger (Alice): "{SEAFOOD}"', verdict("CORRECT"))

    result = judge_locomo_plus(memory, [probe], llm)

    (row,) = result["probes"]
    assert row["reply"] == "Sounds fun, but check the menu for Priya's shellfish allergy first."
    assert row["label"] == "CORRECT" and row["relation"] == "causal"
    assert result["summary"]["causal"] == {"accuracy": 1.0, "n": 1}
    assert result["summary"]["goal"] == {"accuracy": None, "n": 0}
    assert result["summary"]["overall"] == {"accuracy": 1.0, "n": 1}
    reply_request, judge_request = scripted_llm.requests
    assert f'It is now 2023-07-20T10:00:00. Alice says: "{SEAFOOD}"' in prompt(reply_request)
    assert "Memories from conversations between Alice and Bob" in prompt(reply_request)
    assert "Alice: She's fine now" in prompt(judge_request) and "Reply:\nSounds fun" in prompt(judge_request)
    assert judge_request["model"] == "grader"


def _tmem(*args, env: dict):
    return subprocess.run([sys.executable, "-m", "tmem_graph.cli", *args], capture_output=True, text=True,
                          env=env, timeout=600)


def _llm_env(url: str) -> dict:
    return {**os.environ, "TMEM_LLM_BASE_URL": url, "TMEM_LLM_MODEL": "answerer", "TMEM_LLM_MODEL_JUDGE": "grader"}


def test_cli_eval_locomo_judge_writes_the_judge_table(memory, scripted_llm, tmp_path):
    qa = [{"question": ALLERGY, "answer": "shellfish allergy", "evidence": ["D1:3"], "category": 4},
          {"question": DOG, "answer": "July 2023", "evidence": ["D4:1"], "category": 2},
          {"question": "An adversarial one", "adversarial_answer": "x", "evidence": ["D1:1"], "category": 5}]
    (tmp_path / "locomo10.json").write_text(json.dumps([{"sample_id": "team-dinner", "qa": qa}]))
    scripted_llm.expect("Answer (a short answer string):", "Shellfish allergy", reusable=True)
    scripted_llm.expect("Grading run", verdict("CORRECT"), reusable=True)
    out = tmp_path / "out"

    result = _tmem("eval", "locomo", "--memory", memory.id, "--data", str(tmp_path), "--sample", "team-dinner",
                   "--no-ablations", "--no-baselines", "--judge", "--judge-runs", "2", "--out", str(out), "--json",
                   env=_llm_env(scripted_llm.url))

    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    assert set(printed) == {"recall", "judge"} and set(printed["recall"]) == {"full"}
    assert printed["judge"]["overall"]["accuracy"] == 1.0 and printed["judge"]["overall"]["n"] == 2
    report = json.loads((out / "locomo.json").read_text())["judge"]
    assert (report["answer_model"], report["judge_model"], report["runs"], report["system"]) == \
        ("answerer", "grader", 2, "full")
    assert [q["labels"] for q in report["questions"]] == [["CORRECT", "CORRECT"]] * 2
    assert report["usage"]["judge"]["calls"] == 4 and report["usage"]["answer"]["calls"] == 2
    markdown = (out / "locomo.md").read_text()
    assert "## LLM judge" in markdown and "| category | judge accuracy | token F1 | n |" in markdown
    assert "by answerer" in markdown and "by grader in 2 runs" in markdown
    assert "| single-hop | 1.000 |" in markdown
    assert sum("Grading run" in prompt(r) for r in scripted_llm.requests) == 4


def test_cli_eval_locomo_plus_judge(memory, scripted_llm, tmp_path):
    conversation = {"speaker_a": "Alice", "speaker_b": "Bob", "session_1_date_time": "1:56 pm on 8 May, 2023",
                    "session_1": [{"speaker": "Alice", "dia_id": "D1:1", "text": "Hi Bob!"}]}
    probe = {"index": 0, "relation_type": "goal", "cue_dialogue": "A: I want to run a marathon.\nB: Go for it!",
             "trigger_query": "A: I signed up for a 5k this weekend.", "time_gap": "two weeks later"}
    (tmp_path / "locomo10.json").write_text(json.dumps([{"sample_id": "team-dinner", "conversation": conversation}]))
    (tmp_path / "locomo_plus_dev.json").write_text(json.dumps([probe]))
    scripted_llm.expect("You are Bob, in a long-running conversation with Alice.", "A step towards the marathon!")
    scripted_llm.expect("Trigger (Alice):", verdict("CORRECT"))
    out = tmp_path / "out"

    result = _tmem("eval", "locomo-plus", "--memory", memory.id, "--data", str(tmp_path), "--base", "team-dinner",
                   "--no-ablations", "--no-baselines", "--judge", "--out", str(out), env=_llm_env(scripted_llm.url))

    assert result.returncode == 0, result.stderr
    report = json.loads((out / "locomo_plus.json").read_text())["judge"]
    assert report["summary"]["goal"] == {"accuracy": 1.0, "n": 1} and report["judge_model"] == "grader"
    assert report["probes"][0]["cue_in_evidence"] is False  # the cue was never ingested here
    markdown = (out / "locomo_plus.md").read_text()
    assert "| relation | judge accuracy | n |" in markdown and "| goal | 1.000 | 1 |" in markdown


def test_cli_judge_without_a_configured_llm_is_a_one_line_error():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TMEM_LLM_", "OPENAI_")) or k == "TMEM_LLM_CACHE"}
    result = _tmem("eval", "locomo", "--memory", "whatever", "--judge", env=env)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "no LLM configured: set TMEM_LLM_MODEL" in lines[0]
