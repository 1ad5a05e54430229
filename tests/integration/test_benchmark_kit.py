"""Every command of the benchmark kit (`python -m benchmarks COMMAND`) as a real process, on
tiny memories in the test server, so that the kit cannot rot: each one runs and its tables hold
the rows and the plausible figures the docs cite. (The tests import nothing from the kit.)"""

import json
import math
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tmem_graph import api

ROOT = Path(__file__).resolve().parents[2]


def kit(*args: str, env: dict | None = None, timeout: float = 600) -> str:
    """Run one kit command from the repository's root; its standard output (it must succeed)."""
    done = subprocess.run([sys.executable, "-m", "benchmarks", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    return done.stdout


def rows(out: str, first_cell: str) -> list[list[str]]:
    """The cells of the Markdown table rows of `out` whose first cell is `first_cell`."""
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in out.splitlines()
            if line.startswith("|") and line.strip("| ").split("|")[0].strip() == first_cell]


def positive(x: float) -> bool:
    return math.isfinite(x) and x > 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def dinner(store, encoder, team_doc, new_id):
    team_doc["memory_id"] = new_id("kit")
    memory, _ = api.import_memory(team_doc, store=store, encoder=encoder)
    return memory.id


def test_the_entry_point_lists_its_commands_and_refuses_others():
    listing = kit("--help")
    for command in ("recall-quality", "latency", "scale", "import", "service", "reader", "index-recall",
                    "fixture", "rescore"):
        assert f"  {command} " in listing
    wrong = subprocess.run([sys.executable, "-m", "benchmarks", "nonsense"], cwd=ROOT, capture_output=True,
                           text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert wrong.returncode != 0 and "unknown command 'nonsense'" in wrong.stderr


def test_latency_beside_an_older_checkout_from_the_recalls_own_timings(dinner, tmp_path):
    out = kit("latency", "--memory", dinner, "--queries", "2", "--budgets", "500", "--vary", "lane_share=0,0.4",
              "--old", str(ROOT), "--out", str(tmp_path / "latency.json"))
    table = json.loads((tmp_path / "latency.json").read_text())["summary"]
    names = ["unpacked", "budget 500, lane_share 0", "budget 500, lane_share 0.4"]
    for side in ("new", "old"):
        assert list(table[side]) == names
        assert [r[1] for r in rows(out, side)] == names
        for name in names:
            assert positive(table[side][name]["wall"]["p50"]) and table[side][name]["wall"]["n"] == 4
            assert table[side][name]["cascade"]["p50"] <= table[side][name]["wall"]["p50"]
        assert "pack" in table[side]["budget 500, lane_share 0"] and "pack" not in table[side]["unpacked"]
    assert positive(float(rows(out, "new")[0][-1]))   # the ratio new / old


def test_index_recall_of_the_example_memory(dinner):
    out = kit("index-recall", "--memory", dinner, "--queries", "2", "--factor", "1")
    vectors = {line.split()[0]: line.split() for line in out.splitlines() if line.startswith(("topic_", "item_"))}
    assert set(vectors) == {"topic_embedding", "item_embedding"}
    for kind in ("topic", "scene", "item", "turn"):
        (row,) = rows(out, kind)
        assert 0 <= float(row[1]) <= 1 and 0 <= float(row[2]) <= 1


def test_reader_writes_blind_blocks_then_reports_the_judges(dinner, tmp_path):
    probes = tmp_path / "probes.json"
    probes.write_text(json.dumps([
        {"memory_id": dinner, "query": "Can you suggest a good sushi place for our group outing?", "speaker": "Alice",
         "cue_scene": "s1", "relation_type": "causal"},
        {"memory_id": dinner, "query": "How is the marathon training going?", "speaker": "Bob",
         "cue_scene": "s2", "relation_type": "state"}]))
    where = tmp_path / "reader"
    kit("reader", "write", "--memory", dinner, "--probes", str(probes), "--budget", "300", "--out", str(where))
    blocks = answer_sets(where, lambda n, b: f"reply {n}")
    assert len(blocks) == 6 and all(b["evidence"] for b in blocks)   # 2 probes × tmem, dense, hybrid
    kit("reader", "judge-files", "--out", str(where))
    judged = [json.loads(line)["id"] for line in (where / "judge" / "judge.jsonl").read_text().splitlines()]
    for judge, aware in (("a", lambda n: True), ("b", lambda n: n % 2 == 0)):
        (where / "judge" / f"verdicts-{judge}.jsonl").write_text("".join(
            json.dumps({"id": i, "aware": aware(n)}) + "\n" for n, i in enumerate(judged)))
    out = kit("reader", "report", str(where))
    assert "6 blocks, 6 judged by all of a, b; judges agree on 0.500" in out
    for system in ("tmem", "dense", "hybrid"):
        (row, *_) = rows(out, system)
        assert row[1] == "2" and row[2] == "1.000" and 0 <= float(row[-1]) <= 1


def test_rescore_imports_a_fixture_and_scores_it_at_a_budget(store, tmp_path):
    """rescore runs `fixture import` and `recall-quality` of the kit; then `fixture export`."""
    try:
        out = kit("rescore", "fixtures/c26s5-after.json", "--replace", "--budgets", "500", "--out", str(tmp_path))
        (row,) = rows(out, "500")
        assert row[1].count("/") == 2 and "(" in row[2]
        report = json.loads((tmp_path / "c26s5-after" / "budget.json").read_text())
        assert list(report["results"]) == ["default", "500"] and report["questions"] > 0
        for system in ("full", "w/o scene_layer", "bm25", "dense", "hybrid"):
            assert 0 <= report["results"]["500"][system]["overall"] <= 1
            assert 0 < report["results"]["500"][system]["tokens_median"] <= 500
        assert (tmp_path / "c26s5-after" / "budget.png").read_bytes()[:4] == b"\x89PNG"
        kit("fixture", "export", "c26s5-after", "--sample", "conv-26", "-o", str(tmp_path / "again.json"))
        again = json.loads((tmp_path / "again.json").read_text())
        assert again["texts_from"]["locomo"] == "conv-26" and again["scenes"]
        reader_questions(tmp_path / "qa")
    finally:
        if store.exists("c26s5-after"):
            store.drop("c26s5-after")


def answer_sets(where: Path, reply) -> list[dict]:
    """The blocks of every reader set, after writing each set's replies (`reply(n, block)`); no set
    holds an ask twice."""
    blocks = []
    sets = sorted((where / "blind").glob("reader-*"))
    assert len(sets) >= 2
    for folder in sets:
        mine = [json.loads(line) for line in (folder / "answer.jsonl").read_text().splitlines()]
        asks = [b.get("question") or b.get("message") for b in mine]
        assert len(asks) == len(set(asks))   # a reader never meets an ask twice
        (folder / "replies.jsonl").write_text("".join(
            json.dumps({"id": b["id"], "reply": reply(len(blocks) + n, b)}) + "\n" for n, b in enumerate(mine)))
        blocks += mine
    return blocks


def reader_questions(where: Path) -> None:
    """`reader` on LoCoMo questions: blind blocks without the gold, judged against it, reported per category."""
    kit("reader", "write", "--memory", "c26s5-after", "--questions", "conv-26", "--limit", "3", "--systems", "hybrid",
        "--budget", "300", "--out", str(where))
    blocks = answer_sets(where, lambda n, b: "x")
    assert len(blocks) == 6 and all(set(b) == {"id", "question", "evidence"} for b in blocks)
    assert "short phrase" in (where / "blind" / "reader-1" / "README.md").read_text()
    key = json.loads((where / "key.json").read_text())["blocks"]
    hybrid = [b["evidence"] for b in blocks if key[b["id"]]["system"] == "hybrid"]
    with api.Memory("c26s5-after") as memory:   # the flat blocks as shown hold no more than tmem's tokens
        assert hybrid and all(memory.encoder.count_tokens(text) <= 300 for text in hybrid)
    kit("reader", "judge-files", "--out", str(where))
    judged = [json.loads(line) for line in (where / "judge" / "judge.jsonl").read_text().splitlines()]
    assert len(judged) == 6 and all(j["gold"] and j["reply"] == "x" for j in judged)
    for judge in ("a", "b"):
        (where / "judge" / f"verdicts-{judge}.jsonl").write_text("".join(
            json.dumps({"id": j["id"], "correct": n % 2 == 0}) + "\n" for n, j in enumerate(judged)))
    out = kit("reader", "report", str(where))
    assert "judges agree on 1.000" in out and "| system | n | correct (a) | correct (b) | correct (mean) |" in out
    assert "correct rate per category" in out and rows(out, "hybrid")[0][1] == "3"
    # at most N asks per reader: more sets, each with its share of the asks, every block in one of them
    kit("reader", "write", "--memory", "c26s5-after", "--questions", "conv-26", "--limit", "3", "--systems", "hybrid",
        "--budget", "300", "--per-reader", "2", "--out", str(where / "small"))
    sets = sorted((where / "small" / "blind").glob("reader-*"))
    sizes = sorted(len((f / "answer.jsonl").read_text().splitlines()) for f in sets)
    assert sizes == [1, 1, 2, 2] and len(answer_sets(where / "small", lambda n, b: "x")) == 6


def test_scale_loads_synthetic_memories_then_times_recall(store):
    fake = {"TMEM_ENCODER": "fake:384"}
    names = ["scale-example", "scale-40", "scale-small-0000"]
    try:
        kit("scale", "load", "--items", "40", "--small", "1", env=fake)
        assert all(store.exists(m) for m in names)
        out = kit("scale", "run", "--memory", "scale-example", "--memory", "scale-40", "--queries", "2",
                  "--fresh", "1", env=fake)
        for memory in ("scale-example", "scale-40"):
            (row,) = rows(out, memory)
            assert row[1].endswith(" ms") and row[2].endswith(" s") and positive(float(row[2][:-2]))
    finally:
        for memory in names:
            if store.exists(memory):
                store.drop(memory)


def test_import_and_replacement_of_a_small_synthetic_memory(store, settings, tmp_path):
    out = kit("import", "--uri", settings.uri, "--items", "40", "--scenes", "5", "--hash-vectors", "--replace",
              "--out", str(tmp_path / "import.json"))
    result = json.loads((tmp_path / "import.json").read_text())
    run = result["runs"][0]
    assert result["objects"] == sum(result["counts"].values()) == run["objects_after"]
    assert positive(run["import"]["s"]) and 0 < run["import"]["write_queries_s"] < run["import"]["s"]
    assert "store/items_merge" in run["replace"]["by_query_s"]
    (row,) = rows(out, "40 items")[:1]
    assert row[1] == f"{result['objects']:,}" and positive(float(row[3].replace(",", "")))
    assert not store.exists("bench-import")


def test_service_times_http_recall_and_concurrent_clients(store, settings, tmp_path):
    try:
        out = kit("service", "--uri", settings.uri, "--items", "16", "--queries", "3", "--clients", "2",
                  "--seconds", "1", "--port", str(free_port()), "--out", str(tmp_path / "service.json"))
        result = json.loads((tmp_path / "service.json").read_text())
        assert positive(result["sequential"]["new"]["http_ms"]["p50"])
        assert set(result["sequential"]["new"]["server_timings_ms"]) >= {"encode", "cascade", "total"}
        concurrent = result["concurrent"]["new"]
        assert concurrent["errors"] == 0 and concurrent["recalls"] > 0 and concurrent["adds"] > 0
        (row,) = rows(out, "recalls per second")
        assert positive(float(row[1]))
    finally:
        if store.exists("svc-locomo"):
            store.drop("svc-locomo")
