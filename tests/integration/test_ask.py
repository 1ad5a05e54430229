"""`ask`: recall, evidence formatted for the answer model, and the answer through the real
`openai` client against a scripted endpoint."""

import json
import os
import re
import subprocess
import sys

import pytest

from tmem_graph import api
from tmem_graph.errors import ConfigError
from tmem_graph.llm.client import LLMClient, LLMError, LLMSettings

QUESTION = "Can you suggest a good sushi place for our group outing?"


@pytest.fixture
def memory(store, encoder, new_id, team_doc):
    team_doc["memory_id"] = new_id("ask")
    return api.import_memory(team_doc, store=store, encoder=encoder)[0]


def test_ask_keeps_in_mind_what_the_triggers_reached_and_answers_with_it(memory, scripted_llm):
    scripted_llm.expect("Which one memory should be kept in mind", {"memory": 1})
    scripted_llm.expect(f"Question: {QUESTION}\nKeep in mind: Priya", "Try the tapas bar downtown.")
    llm = LLMClient(LLMSettings(base_url=scripted_llm.url, model="scripted"))
    result = memory.ask(QUESTION, speaker="Alice", llm=llm)
    keep, answer = scripted_llm.requests
    assert keep["response_format"]["type"] == "json_schema" and f"Question: {QUESTION}" in keep["messages"][0]["content"]
    assert "1. Priya, a member of Alice's team, has a severe shellfish allergy" in keep["messages"][0]["content"]
    prompt = answer["messages"][0]["content"]
    assert answer["model"] == "scripted" and answer["temperature"] == 0 and result["evidence"] in prompt
    assert result["kept_in_mind"].startswith("Priya, a member of Alice's team, has a severe shellfish allergy")
    assert result["answer"] == f"Try the tapas bar downtown. (Keep in mind: {result['kept_in_mind']})"
    assert "D1:3" in result["cites"]   # the allergy turn the kept item was distilled from
    # the compact evidence: facts a line, no titles, no days (the question does not ask when)
    assert "Alice: She's fine now, but it turns out she has a severe shellfish allergy." in prompt
    assert "[Scene 1]" not in prompt and "2023" not in prompt.replace("October 2023", "").replace("July 2023", "")
    assert "- Alice: Works on a team with Priya" in prompt and "Bob: Amateur runner" not in prompt
    assert llm.ledger["answer"].calls == 2 and llm.ledger["answer"].prompt_tokens > 100


def test_ask_in_the_benchmark_s_style_sends_the_scene_evidence(memory, scripted_llm):
    scripted_llm.expect(f"Question: {QUESTION}", "Avoid sushi: Priya's shellfish allergy")
    llm = LLMClient(LLMSettings(base_url=scripted_llm.url, model="scripted"))
    result = memory.ask(QUESTION, speaker="Alice", llm=llm, style="locomo")
    assert result["answer"] == "Avoid sushi: Priya's shellfish allergy" and result["kept_in_mind"] is None
    (request,) = scripted_llm.requests
    prompt = request["messages"][0]["content"]
    assert "intelligent memory assistant" in prompt and "less than 5-6 words" in prompt
    assert "[Scene 1]" in prompt and "  Alice: She's fine now" in prompt
    assert re.search(r"\[Item [12]\] Priya, a member of Alice's team, has a severe shellfish allergy", prompt)
    assert result["evidence"] in prompt and result["cites"][0] == "D1:3"


def test_ask_without_a_configured_llm_is_a_clear_error(memory, monkeypatch):
    monkeypatch.delenv("TMEM_LLM_MODEL", raising=False)
    with pytest.raises(ConfigError, match="no LLM configured"):
        memory.ask(QUESTION)


def test_unreachable_llm_fails_after_bounded_retries(memory):
    llm = LLMClient(LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", retries=1, timeout_s=2))
    with pytest.raises(LLMError, match="answer .*for 'Can you suggest.*after 2 attempts"):
        memory.ask(QUESTION, llm=llm)


def test_cli_ask_json(memory, scripted_llm):   # a question asking when: one call, no caveat
    scripted_llm.expect("Question: When did Bob adopt his dog?", "July 10, 2023")
    env = {**os.environ, "TMEM_LLM_BASE_URL": scripted_llm.url, "TMEM_LLM_MODEL": "scripted"}
    out = subprocess.run([sys.executable, "-m", "tmem_graph.cli", "ask", memory.id,
                          "When did Bob adopt his dog?", "--json"], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["answer"] == "July 10, 2023"
    assert result["recall"]["scenes"][0]["id"] == "s4"
    assert all(s["excerpt"] for s in result["recall"]["scenes"])   # packed to the answer budget by default
    scripted_llm.expect("Question: When did Bob adopt his dog?", "July 10, 2023")
    whole = subprocess.run([sys.executable, "-m", "tmem_graph.cli", "ask", memory.id,
                            "When did Bob adopt his dog?", "--json", "--unpacked"], capture_output=True, text=True,
                           env=env, timeout=300)
    assert whole.returncode == 0, whole.stderr
    scenes = json.loads(whole.stdout)["recall"]["scenes"]
    assert scenes[0]["id"] == "s4" and not any(s["excerpt"] for s in scenes) and len(scenes) <= 5
    scripted_llm.expect("Question: When did Bob adopt his dog?", "Bob adopted Biscuit, a rescue greyhound.")
    out = subprocess.run([sys.executable, "-m", "tmem_graph.cli", "ask", memory.id, "When did Bob adopt his dog?"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "Bob adopted Biscuit, a rescue greyhound."
    assert lines[1] == "  rests on D4:1 (10 July 2023) Bob: I adopted a rescue greyhound called Biscuit!"
    assert re.fullmatch(r"  \(recall \d+ ms, answer \d+\.\d s\)", lines[-1])
    env.pop("TMEM_LLM_MODEL")
    out = subprocess.run([sys.executable, "-m", "tmem_graph.cli", "ask", memory.id, "x"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 1 and "no LLM configured" in out.stderr and "Traceback" not in out.stderr
