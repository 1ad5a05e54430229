"""`tmem eval answers` end to end: a set over a memory the command imports, answered through the
real `openai` client against a scripted endpoint from the cascade's evidence and from dense
evidence of the same tokens, scored without an LLM."""

import json
import os
import subprocess
import sys

from tmem_graph import api
from tmem_graph.evaluate.answers import AnswerContext
from tmem_graph.evaluate.runner import Context

SUSHI = "Can you suggest a good sushi place for our group outing?"


def _tmem(*args, env=None):
    return subprocess.run([sys.executable, "-m", "tmem_graph.cli", *args], capture_output=True, text=True,
                          env=env or os.environ, timeout=300)


def _set(tmp_path, memory_id: str, team_doc: dict) -> object:
    team_doc["memory_id"] = memory_id
    (tmp_path / "memory.json").write_text(json.dumps(team_doc), encoding="utf-8")
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"format": "tmem-answers/1", "memories": {memory_id: "memory.json"}, "questions": [
        {"id": "sushi", "memory": memory_id, "speaker": "Alice", "kind": "associative", "question": SUSHI,
         "answer": "Avoid shellfish: Priya has a severe shellfish allergy"},
        {"id": "film", "memory": memory_id, "kind": "none", "question": "What is Bob's favourite film?",
         "answer": "Not in memory"}]}), encoding="utf-8")
    return path


def test_eval_answers_imports_answers_from_both_evidences_and_scores(store, new_id, team_doc, scripted_llm, tmp_path):
    memory_id = new_id("answers")
    path = _set(tmp_path, memory_id, team_doc)
    scripted_llm.expect("Which one memory should be kept in mind", {"memory": 0}, reusable=True)
    scripted_llm.expect("## Turns that match", "Not in memory.", reusable=True)
    scripted_llm.expect("Also known:", "Avoid shellfish: Priya has a severe shellfish allergy.",
                        reusable=True)
    env = {**os.environ, "TMEM_LLM_BASE_URL": scripted_llm.url, "TMEM_LLM_MODEL": "answerer"}
    out = tmp_path / "out"

    refused = _tmem("eval", "answers", "--set", str(path), "--out", str(out), env=env)
    assert refused.returncode == 1 and f"not on the server: {memory_id}; add --import" in refused.stderr
    assert scripted_llm.requests == []

    result = _tmem("eval", "answers", "--set", str(path), "--import", "--out", str(out), "--json", env=env)

    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["cascade"]["associative"]["coverage"] == 1.0 and summary["dense"]["associative"]["f1"] == 0.0
    assert summary["cascade"]["not_in_memory_rightly"] == 0 and summary["dense"]["not_in_memory_rightly"] == 1
    report = json.loads((out / "answers-focus-answerer.json").read_text())
    keeps = sum("Which one memory" in "\n".join(m["content"] for m in r["messages"]) for r in scripted_llm.requests)
    assert report["model"] == "answerer" and report["usage"]["answer"]["calls"] == 4 + keeps and keeps >= 1
    sushi = report["questions"][0]
    assert sushi["modes"]["dense"]["tokens"] <= sushi["tokens"] == sushi["modes"]["cascade"]["tokens"]
    prompts = ["\n".join(m["content"] for m in r["messages"]) for r in scripted_llm.requests]
    assert sum("## Turns that match" in p for p in prompts) == 2 and sum(SUSHI in p for p in prompts) >= 2
    assert "| cascade | " in (out / "answers-focus-answerer.md").read_text()
    assert api.Memory(memory_id, store=store).stats()["scenes"] == len(team_doc["scenes"])


def test_dense_evidence_is_cut_at_the_tokens_and_listed_in_conversation_order(store, encoder, new_id, team_doc):
    team_doc["memory_id"] = new_id("answers")
    memory = api.import_memory(team_doc, store=store, encoder=encoder)[0]
    actx = AnswerContext.of(Context.of(memory, encoder.count_tokens))
    order = list(actx.turns)
    for tokens in (40, 120, 400):
        text, chosen = actx.dense_evidence(SUSHI, tokens)
        assert encoder.count_tokens(text) <= tokens or len(chosen) == 1
        assert chosen == sorted(chosen, key=order.index) and text.count("\n  ") == len(chosen)
    assert "Priya" in actx.dense_evidence(SUSHI, 400)[0]
    assert len(actx.dense_evidence(SUSHI, 120)[1]) < len(actx.dense_evidence(SUSHI, 400)[1])
