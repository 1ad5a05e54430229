"""A small end-to-end evaluation: two LoCoMo sessions built with a scripted (auto-replying)
LLM through the real `openai` client, then evidence recall, ablations, baselines, reports,
and LoCoMo-Plus cue recall on stitched probes."""

import json
import os
import subprocess
import sys

import pytest

from benchmarks.ingest_cost import serve
from tmem_graph import api
from tmem_graph.construct.inputs import locomo_turns
from tmem_graph.evaluate import data as ev
from tmem_graph.evaluate import runner
from tmem_graph.llm.client import LLMClient, LLMSettings


@pytest.fixture(scope="module")
def conv(store, encoder, tmp_path_factory):
    samples = ev.load(ev.data_dir() / "locomo10.json")
    sample = samples[0]
    turns = [t for t in locomo_turns(sample, None) if t.session in (1, 2)]
    tokenizer = encoder._model.tokenizer
    count = lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])  # noqa: E731
    server = serve(0.0, count)
    llm = LLMClient(LLMSettings(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", model="auto"))
    memory_id = "test-eval-conv26"
    if store.exists(memory_id):
        store.drop(memory_id)
    api.ingest(memory_id, turns, store=store, encoder=encoder, llm=llm)
    probes = [ev.stitch(p, samples) for p in ev.load(ev.data_dir() / "locomo_plus_dev.json")
              if p["index"] % 10 == 0][:3]
    api.ingest(memory_id, [t for p in probes for t in p.cue], store=store, encoder=encoder, llm=llm)
    server.shutdown()
    yield {"memory": api.Memory(memory_id, store=store), "sample": sample, "count": count, "probes": probes,
           "ids": {t.id for t in turns}}
    store.drop(memory_id)


def test_locomo_evidence_recall_with_ablations_and_baselines(conv):
    repairs = ev.EvidenceRepairs()
    qas = [q for q in ev.locomo_qas(conv["sample"], repairs) if set(q.evidence) <= conv["ids"]]
    assert len(qas) >= 5
    ctx = runner.Context.of(conv["memory"], conv["count"])
    result = runner.evaluate_locomo(ctx, qas)
    summary = result["summary"]
    assert list(summary) == [name for name, _ in runner.ABLATION_SETS] + ["bm25", "dense", "hybrid"]
    for name, row in summary.items():
        assert 0 <= row["overall"] <= 1, name
    for q in result["questions"]:
        budget = q["systems"]["full"]["tokens"]
        for b in ("bm25", "dense", "hybrid"):  # same evidence-token budget (at least one turn)
            assert q["systems"][b]["tokens"] <= max(budget, 200)
    assert summary["w/o scene_layer"]["tokens_median"] < summary["full"]["tokens_median"]
    assert summary["dense"]["overall"] > 0 and summary["full"]["overall"] > 0


def test_locomo_plus_cue_recall_on_stitched_probes(conv):
    ctx = runner.Context.of(conv["memory"], conv["count"])
    result = runner.evaluate_locomo_plus(ctx, conv["probes"])
    assert len(result["probes"]) == 3
    for row in result["probes"]:
        assert set(row["systems"]) >= {"full", "bm25", "dense", "hybrid"}
        assert row["systems"]["dense"] is not None  # every cue turn is in the corpus
    assert 0 <= result["summary"]["full"]["S@5"] <= 1


def test_cli_writes_the_reports(conv, tmp_path):
    out = subprocess.run([sys.executable, "-m", "tmem_graph.cli", "eval", "locomo", "--memory", conv["memory"].id,
                          "--limit", "4", "--no-ablations", "--out", str(tmp_path), "--json",
                          "--k-scenes", "2", "--k-items", "4"],
                         capture_output=True, text=True, timeout=600, env=os.environ)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert set(summary) == {"full", "bm25", "dense", "hybrid"}
    report = json.loads((tmp_path / "locomo.json").read_text())
    assert set(report["evidence_repairs"]) >= {"repaired", "dropped", "skipped_questions"}
    assert len(report["questions"]) == 4 and report["encoder"] == "all-MiniLM-L6-v2"
    assert (tmp_path / "locomo.md").read_text().startswith("LoCoMo conv-26")
    assert report["budgets"] == "kT=15 kS=2 kI=4" and "kS=2" in (tmp_path / "locomo.md").read_text()
    assert (tmp_path / "locomo.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
