"""A small end-to-end evaluation: two LoCoMo sessions built with a scripted (auto-replying)
LLM through the real `openai` client, then evidence recall, ablations, baselines, reports,
and LoCoMo-Plus cue recall on stitched probes."""

import json
import os
import subprocess
import sys

import pytest

from tests.fixtures.auto_llm import serve
from tmem_graph import api
from tmem_graph.construct.inputs import locomo_turns
from tmem_graph.evaluate import data as ev
from tmem_graph.evaluate import runner
from tmem_graph.llm.client import LLMClient, LLMSettings
from tmem_graph.retrieve.evidence import anticipated


@pytest.fixture(scope="module")
def conv(store, encoder, tmp_path_factory):
    samples = ev.load(ev.data_dir() / "locomo10.json")
    sample = samples[0]
    turns = [t for t in locomo_turns(sample, None) if t.session in (1, 2)]
    count = encoder.count_tokens
    server = serve(0.0, count)
    llm = LLMClient(LLMSettings(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", model="auto"))
    dev = ev.load(ev.data_dir() / "locomo_plus_dev.json")
    built = {}
    # conv-26 sessions 1-2 with its first 3 probes; conv-30 session 1 with its first 2 (for the two-sample runs)
    for position, sessions, n_probes in ((0, (1, 2), 3), (1, (1,), 2)):
        memory_id = f"test-eval-{samples[position]['sample_id']}"
        if store.exists(memory_id):
            store.drop(memory_id)
        chosen = [t for t in locomo_turns(samples[position], None) if t.session in sessions]
        api.ingest(memory_id, chosen, store=store, encoder=encoder, llm=llm)
        probes = [ev.stitch(p, samples) for p in dev if p["index"] % 10 == position][:n_probes]
        api.ingest(memory_id, [t for p in probes for t in p.cue], store=store, encoder=encoder, llm=llm)
        built[memory_id] = probes
    server.shutdown()
    yield {"memory": api.Memory("test-eval-conv-26", store=store), "sample": sample, "count": count,
           "probes": built["test-eval-conv-26"], "ids": {t.id for t in turns}}
    for memory_id in built:
        store.drop(memory_id)


def test_locomo_evidence_recall_with_ablations_and_baselines(conv):
    repairs = ev.EvidenceRepairs()
    qas = [q for q in ev.locomo_qas(conv["sample"], repairs) if set(q.evidence) <= conv["ids"]]
    assert len(qas) >= 5
    ctx = runner.Context.of(conv["memory"], conv["count"])
    result = runner.evaluate_locomo(ctx, qas)
    summary = result["summary"]
    assert list(summary) == [name for name, _ in runner.EVAL_SETS] + ["bm25", "dense", "hybrid"]
    for name, row in summary.items():
        assert 0 <= row["overall"] <= 1, name
    for q in result["questions"]:
        budget = q["systems"]["full"]["tokens"]
        for b in ("bm25", "dense", "hybrid"):  # same evidence-token budget (at least one turn)
            assert q["systems"][b]["tokens"] <= max(budget, 200)
    assert summary["w/o scene_layer"]["tokens_median"] < summary["full"]["tokens_median"]
    assert summary["dense"]["overall"] > 0 and summary["full"]["overall"] > 0


def test_the_persona_is_outside_the_evidence_budget_unless_asked(conv):
    qas = [q for q in ev.locomo_qas(conv["sample"], ev.EvidenceRepairs()) if set(q.evidence) <= conv["ids"]][:3]
    ctx = runner.Context.of(conv["memory"], conv["count"])
    systems = [("full", ()), ("w/o persona", ("persona",))]
    evidence = runner.evaluate_locomo(ctx, qas, systems, baselines=False)
    context = runner.evaluate_locomo(ctx, qas, systems, baselines=False, budget_of="context")
    for e, c in zip(evidence["questions"], context["questions"]):
        full, bare = e["systems"]["full"], e["systems"]["w/o persona"]
        assert full["persona_tokens"] > 0 and bare["persona_tokens"] == 0
        assert full["tokens"] == bare["tokens"] and full["recall"] == bare["recall"]  # the persona holds no turn
        assert c["systems"]["full"]["tokens"] == full["tokens"] + full["persona_tokens"]
        assert c["systems"]["w/o persona"]["tokens"] == bare["tokens"]
    memory = conv["memory"]   # the block `ask` hands over: packed to the answer budget by default
    whole = conv["count"](memory.evidence(memory.recall(qas[0].question, settings=memory.settings.retrieval.for_answer())))
    assert context["questions"][0]["systems"]["full"]["tokens"] == whole
    with pytest.raises(ValueError, match="budget_of"):
        runner.evaluate_locomo(ctx, qas, systems, budget_of="persona")


def test_locomo_plus_cue_recall_on_stitched_probes(conv):
    ctx = runner.Context.of(conv["memory"], conv["count"])
    result = runner.evaluate_locomo_plus(ctx, conv["probes"])
    assert len(result["probes"]) == 3
    for row in result["probes"]:
        assert set(row["systems"]) >= {"full", "bm25", "dense", "hybrid"}
        assert row["systems"]["dense"] is not None  # every cue turn is in the corpus
        assert set(row["handed"]) == set(row["systems"]) and row["tokens"] > 0
    assert 0 <= result["summary"]["full"]["S@5"] <= 1
    # at the same tokens: a baseline's cue is handed over exactly when a cue turn fits in the
    # longest prefix of its ranking within the full cascade's evidence tokens
    turn_tokens = {t: conv["count"](text) for t, text in ctx.turn_text.items()}
    for row, probe in zip(result["probes"], conv["probes"]):
        cue = {t.id for t in probe.cue}
        for name, ranking in ctx.flat.rankings(probe.query).items():
            spent, prefix = 0, []
            for t in ranking:
                if prefix and spent + turn_tokens[t] > row["tokens"]:
                    break
                prefix.append(t)
                spent += turn_tokens[t]
            assert row["handed"][name] == bool(cue & set(prefix)), (name, probe.index)
        # the evaluation reports the evidence the product hands over with the same settings
        recall = conv["memory"].recall(probe.query, speaker=probe.query_speaker, settings=ctx.evidence_settings)
        assert row["handed"]["full"] == bool(cue & ctx.evidence_turns(recall))
        # where the cue stands: the first cue turn's words, over the evidence the reader gets
        block = conv["memory"].evidence(recall)
        found = [block.index(t.text) for t in probe.cue if t.text in block]
        assert row["position"]["full"] == (min(found) / len(block) if found else None), probe.index
        assert row["position"]["dense"] is None or row["handed"]["dense"]
        # where the cue's own first turn stands (what was said, not the reply to it)
        first = probe.cue[0].text
        assert row["statement"]["full"] == (block.index(first) / len(block) if first in block else None)
        assert row["statement"]["full"] is None or row["statement"]["full"] >= row["position"]["full"]
        # the keep-in-mind candidates the focus answer style chooses from
        assert row["candidates"]["full"] == any(cue & set(ids) for _, ids in anticipated(recall))
        assert "dense" not in row["candidates"]
    handed = result["summary"]["full"]["cue handed"]
    assert handed == sum(r["handed"]["full"] for r in result["probes"]) / 3
    assert result["summary"]["full"]["cue first quarter"] == sum(
        r["position"]["full"] is not None and r["position"]["full"] < 0.25 for r in result["probes"]) / 3
    assert result["summary"]["full"]["cue to keep in mind"] == sum(r["candidates"]["full"] for r in result["probes"]) / 3
    assert result["summary"]["full"]["cue statement handed"] == sum(
        r["statement"]["full"] is not None for r in result["probes"]) / 3
    assert result["summary"]["full"]["statement first quarter"] == sum(
        r["statement"]["full"] is not None and r["statement"]["full"] < 0.25 for r in result["probes"]) / 3


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
    assert report["budgets"] == "kT=15 kS=2 kI=4 budget=2000 tokens (packed)"   # the answer evidence, by default
    assert "kS=2" in (tmp_path / "locomo.md").read_text()
    assert (tmp_path / "locomo.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    unpacked = subprocess.run([sys.executable, "-m", "tmem_graph.cli", "eval", "locomo", "--memory", conv["memory"].id,
                               "--limit", "2", "--no-ablations", "--out", str(tmp_path / "u"), "--json",
                               "--k-scenes", "2", "--k-items", "4", "--unpacked"],
                              capture_output=True, text=True, timeout=600, env=os.environ)
    assert unpacked.returncode == 0, unpacked.stderr
    assert json.loads((tmp_path / "u" / "locomo.json").read_text())["budgets"] == "kT=15 kS=2 kI=4"
    both = subprocess.run([sys.executable, "-m", "tmem_graph.cli", "eval", "locomo", "--memory", conv["memory"].id,
                           "--budget-tokens", "500", "--unpacked"], capture_output=True, text=True, timeout=600,
                          env=os.environ)
    assert both.returncode != 0 and "exclude each other" in both.stderr


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tmem_graph.cli", "eval", *args],
                          capture_output=True, text=True, timeout=600, env=os.environ)


def test_cli_scores_two_samples_in_their_own_memories(conv, tmp_path):
    out = _cli("locomo", "--sample", "conv-26", "--sample", "conv-30", "--memory", "test-eval-{sample}",
               "--sessions", "1", "--limit", "3", "--no-ablations", "--out", str(tmp_path), "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads((tmp_path / "locomo.json").read_text())
    assert report["samples"] == ["conv-26", "conv-30"]
    assert report["memories"] == {"conv-26": "test-eval-conv-26", "conv-30": "test-eval-conv-30"}
    by_sample = [q["sample"] for q in report["questions"]]
    assert by_sample == ["conv-26"] * 3 + ["conv-30"] * 3
    assert all(e.startswith("D1:") for q in report["questions"] for e in q["evidence"])  # --sessions 1
    for system in ("full", "bm25", "dense", "hybrid"):  # overall = mean over every question of both
        recalls = [q["systems"][system]["recall"] for q in report["questions"]]
        assert report["summary"][system]["overall"] == pytest.approx(sum(recalls) / len(recalls))
        assert json.loads(out.stdout)[system]["overall"] == pytest.approx(sum(recalls) / len(recalls))
        for name in ("conv-26", "conv-30"):
            own = [q["systems"][system]["recall"] for q in report["questions"] if q["sample"] == name]
            assert report["per_sample"][name][system]["overall"] == pytest.approx(sum(own) / 3)
    md = (tmp_path / "locomo.md").read_text()
    assert md.startswith("LoCoMo session 1 of 2 samples (conv-26, conv-30), memory test-eval-{sample}")
    assert "| conv-30 | 3 |" in md and "overall per sample:" in md

    plus = _cli("locomo-plus", "--base", "conv-30", "--base", "conv-26", "--memory", "test-eval-{sample}",
                "--limit", "2", "--no-ablations", "--out", str(tmp_path), "--json")
    assert plus.returncode == 0, plus.stderr
    report = json.loads((tmp_path / "locomo_plus.json").read_text())
    assert [p["base"] for p in report["probes"]] == ["conv-26"] * 2 + ["conv-30"] * 2  # file order
    assert {p["index"] % 10 for p in report["probes"] if p["base"] == "conv-30"} == {1}
    assert set(report["per_base"]) == {"conv-26", "conv-30"}
    assert (tmp_path / "locomo_plus.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ranks = [p["systems"]["dense"] for p in report["probes"]]
    assert None not in ranks  # every probe's cue was built into its base's memory
    assert report["summary"]["dense"]["S@5"] == pytest.approx(sum(r <= 5 for r in ranks) / 4)


def test_cli_refuses_bad_sample_choices_before_any_work(conv, tmp_path):
    unknown = _cli("locomo", "--sample", "conv-99", "--memory", "m", "--out", str(tmp_path))
    assert unknown.returncode == 1 and "--sample: no sample 'conv-99'" in unknown.stderr
    assert "conv-26, conv-30" in unknown.stderr and "Traceback" not in unknown.stderr
    shared = _cli("locomo-plus", "--base", "conv-26", "--base", "conv-30", "--memory", "test-eval-conv-26",
                  "--out", str(tmp_path))
    assert shared.returncode == 1 and "put {sample} in the id" in shared.stderr
    missing = _cli("locomo", "--sample", "all", "--memory", "test-eval-{sample}", "--out", str(tmp_path))
    assert missing.returncode == 1 and "no memory 'test-eval-conv-41'" in missing.stderr
    assert not list(tmp_path.iterdir())  # nothing written


def test_build_goes_step_by_step_and_resumes(conv, store, encoder, tmp_path):
    """`--build` ingests one session at a time, then the cues: the memory equals the one built by
    the same steps through the API (the conv-30 fixture), and a second run adds nothing."""
    server = serve(0.0, encoder.count_tokens)
    env = {**os.environ, "TMEM_LLM_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}/v1",
           "TMEM_LLM_MODEL": "auto", "TMEM_LLM_API_KEY": "scripted"}
    memory_id = "test-eval-build-conv-30"
    if store.exists(memory_id):
        store.drop(memory_id)
    args = [sys.executable, "-m", "tmem_graph.cli", "eval", "locomo-plus", "--base", "conv-30", "--memory", memory_id,
            "--sessions", "1", "--limit", "2", "--build", "--no-ablations", "--no-baselines", "--json",
            "--out", str(tmp_path)]
    try:
        first = subprocess.run(args, capture_output=True, text=True, timeout=600, env=env)
        assert first.returncode == 0, first.stderr
        assert f"{memory_id}: session 1 (1/2): 28 new turns" in first.stderr  # conv-30 session 1
        assert f"{memory_id}: locomo-plus cues of probes 1-2 of 2 (2/2): 4 new turns" in first.stderr
        built, reference = api.Memory(memory_id, store=store).stats(), api.Memory("test-eval-conv-30", store=store).stats()
        for key in ("turns", "scenes", "topics", "items", "triggers", "personas"):
            assert built[key] == reference[key], key
        again = subprocess.run(args, capture_output=True, text=True, timeout=600, env=env)
        assert again.returncode == 0, again.stderr
        assert f"{memory_id}: session 1 (1/2): 0 new turns" in again.stderr
        assert json.loads(again.stdout) == json.loads(first.stdout)
    finally:
        server.shutdown()
        store.drop(memory_id)


def test_cli_scores_an_imported_memory_on_a_probe_file(store, encoder, team_doc, tmp_path):
    """--probes: each probe names its cue scene; the figures are those of Memory.recall with the
    chosen fusion, and entries of other memories are left out."""
    from tmem_graph.config import RetrievalSettings

    team_doc["memory_id"] = "test-eval-probes"
    memory, _ = api.import_memory(team_doc, store=store, encoder=encoder, replace=True)
    queries = [("Travelling for two weeks soon, who could mind things at home meanwhile?", "Bob", "s4", "goal"),
               ("Can you suggest a good sushi place for our group outing?", "Alice", "s1", "causal"),
               ("How is the marathon training going?", "Bob", "s2", "state")]
    probes = [{"memory_id": memory.id, "query": q, "speaker": who, "cue_scene": cue, "relation_type": rel}
              for q, who, cue, rel in queries]
    probes.append({"memory_id": "another-memory", "query": "x", "cue_scene": "nowhere"})
    path = tmp_path / "probes.json"
    path.write_text(json.dumps(probes))
    try:
        for options, cfg in (((), RetrievalSettings(k_scenes=1)),
                             (("--fusion", "rrf", "--cue-fusion", "rrf"), RetrievalSettings.legacy(k_scenes=1))):
            out = _cli("locomo-plus", "--memory", memory.id, "--probes", str(path), "--k-scenes", "1", "--unpacked",
                       "--no-ablations", "--out", str(tmp_path / "out"), "--json", *options)
            assert out.returncode == 0, out.stderr
            report = json.loads((tmp_path / "out" / "locomo_plus.json").read_text())
            assert len(report["probes"]) == 3 and report["probes_file"] == str(path)
            assert report["fusion"].startswith("lanes" if not options else "rrf")
            expected = [1 if memory.recall(q, speaker=who, settings=cfg).scenes[0].id == cue else None
                        for q, who, cue, _ in queries]
            assert [p["systems"]["full"] for p in report["probes"]] == expected
            assert json.loads(out.stdout)["full"]["S@1"] == pytest.approx(sum(r == 1 for r in expected if r) / 3)
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps([probes[0], {**probes[1], "cue_scene": "s99"}, {"memory_id": memory.id}]))
        out = _cli("locomo-plus", "--memory", memory.id, "--probes", str(bad), "--out", str(tmp_path / "bad"))
        assert out.returncode == 1 and "Traceback" not in out.stderr
        assert f"[1]: memory '{memory.id}' has no scene 's99'" in out.stderr and "2 more problems" not in out.stderr
        assert "(and 1 more problems)" in out.stderr
        clash = _cli("locomo-plus", "--memory", memory.id, "--probes", str(path), "--build", "--out", str(tmp_path / "c"))
        assert clash.returncode == 1 and "drop --build" in clash.stderr
        none = _cli("locomo-plus", "--memory", memory.id, "--probes", str(path.with_name("none.json")))
        assert none.returncode == 1 and "no such file" in none.stderr
        assert not (tmp_path / "bad").exists() and not (tmp_path / "c").exists()
    finally:
        memory.drop()
