"""End to end with the fully local model: a short dialogue becomes a memory with scenes,
items and triggers of every family, built by Qwen2.5-1.5B in-process through the same
`openai` client as any other endpoint."""

import json
from pathlib import Path

from tmem_graph import api
from tmem_graph.llm.client import LLMClient
from tmem_graph.local.llama import LocalLLM, local_settings

DIALOGUE = Path(__file__).parents[2] / "examples" / "short-dialogue.jsonl"
BUILT = Path(__file__).parents[2] / "fixtures" / "demo-short-local.json"   # the local model's build of it


def test_local_model_builds_a_complete_memory(store, encoder, new_id):
    memory_id = new_id("local")
    with LocalLLM(api_key=True) as server:
        llm = LLMClient(local_settings(server))
        report = api.ingest(memory_id, DIALOGUE, store=store, encoder=encoder, llm=llm, concurrency=1)
    stats = api.Memory(memory_id, store=store).stats()
    assert report.new_turns == 8
    assert stats["scenes"] >= 1 and stats["topics"] >= 1 and stats["items"] >= 1
    assert set(stats["trigger_families"]) == {"item", "scene", "horizon"}, stats["trigger_families"]
    assert stats["personas"] == 2
    assert stats["ledger"]["segment"]["calls"] >= 1 and stats["ledger"]["item_triggers"]["completion_tokens"] > 0
    recall = api.Memory(memory_id, store=store).recall("When is Ana's cooking class in Porto?")
    assert recall.scenes and any(t["id"].startswith("a") for s in recall.scenes for t in s.turns)


def test_local_model_keeps_the_oysters_in_mind_for_dinner(store, encoder, new_id):
    """The demo's associative question, asked of the local model's own build of the dialogue
    (fixtures/demo-short-local.json): nothing in it names the oysters, and the answer must."""
    doc = json.loads(BUILT.read_text(encoding="utf-8"))
    doc["memory_id"] = new_id("dinner")
    memory, _ = api.import_memory(doc, store=store, encoder=encoder)
    with LocalLLM(api_key=True) as server:
        reply = memory.ask("Where could we take Ana out for dinner when she is back from her trip?",
                           llm=LLMClient(local_settings(server)))
    assert "oyster" in reply["kept_in_mind"] and "oyster" in reply["answer"], reply["answer"]
    assert "a3" in reply["cites"], reply["cites"]
