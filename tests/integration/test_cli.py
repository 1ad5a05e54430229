"""The `tmem` command as a real process: exit codes and one-line errors."""

import json
import os
import subprocess
import sys


TMEM = [sys.executable, "-m", "tmem_graph.cli"]


def tmem(*args, env=None, input=None):
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(TMEM + list(args), capture_output=True, text=True, env=full_env,
                          input=input, timeout=300)


def one_line_error(result) -> str:
    assert "Traceback" not in result.stderr
    lines = [l for l in result.stderr.splitlines() if l.strip() and not l.startswith("warning:")]
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_database_down_is_a_one_line_error_naming_the_uri():
    result = tmem("--uri", "bolt://127.0.0.1:1", "memories")
    assert result.returncode == 1
    line = one_line_error(result)
    assert "bolt://127.0.0.1:1" in line and "tmem db start" in line


def test_missing_file(tmp_path, store):
    result = tmem("import", str(tmp_path / "nope.json"))
    assert result.returncode == 1
    assert "nope.json: no such file" in one_line_error(result)


def test_invalid_json(tmp_path, store):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "tmem-memory/1", "memory_id": ')
    result = tmem("import", str(bad))
    assert result.returncode == 1
    assert "invalid JSON at line 1" in one_line_error(result)


def test_invalid_document_names_the_object(tmp_path, store, team_doc):
    team_doc["items"][0]["scene_ids"] = ["s99"]
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(team_doc))
    result = tmem("import", str(path))
    assert result.returncode == 1
    assert 'items[0].scene_ids[0]: no scene "s99"' in one_line_error(result)


def test_unknown_memory_and_usage_errors(store):
    result = tmem("stats", "no-such-memory-xyz")
    assert result.returncode == 1
    assert "no memory 'no-such-memory-xyz'" in one_line_error(result)
    assert tmem("drop", "whatever").returncode == 2  # --yes missing
    assert tmem("export").returncode == 2  # argument missing


def test_import_export_stats_memories_drop(tmp_path, store, new_id, team_doc):
    memory_id = team_doc["memory_id"] = new_id("cli")
    team_doc["extra"] = 1
    src = tmp_path / "in.json"
    src.write_text(json.dumps(team_doc))
    result = tmem("import", str(src))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == memory_id
    assert "warning: document: unknown key 'extra' ignored" in result.stderr

    again = tmem("import", str(src))
    assert again.returncode == 1 and "already exists" in one_line_error(again)

    out = tmp_path / "out.json"
    assert tmem("export", memory_id, "-o", str(out)).returncode == 0
    exported = json.loads(out.read_text())
    assert exported["items"][4]["scene_ids"] == ["s3", "s1"]
    stdout_export = tmem("export", memory_id)
    assert json.loads(stdout_export.stdout) == exported

    stats = json.loads(tmem("stats", memory_id, "--json").stdout)
    assert (stats["turns"], stats["scenes"], stats["topics"], stats["items"], stats["triggers"],
            stats["personas"]) == (15, 4, 3, 6, 31, 2)
    listed = json.loads(tmem("memories", "--json").stdout)
    assert memory_id in [m["id"] for m in listed]

    dropped = tmem("drop", memory_id, "--yes")
    assert dropped.returncode == 0, dropped.stderr
    assert memory_id not in [m["id"] for m in json.loads(tmem("memories", "--json").stdout)]


def test_recall_json_follows_the_contract(tmp_path, store, new_id, team_doc):
    memory_id = team_doc["memory_id"] = new_id("clirecall")
    src = tmp_path / "in.json"
    src.write_text(json.dumps(team_doc))
    assert tmem("import", str(src)).returncode == 0
    out = tmem("recall", memory_id, "Can you suggest a good sushi place for our group outing?",
               "--json", "--speaker", "Alice", "--without", "horizon", "--k-items", "2")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert set(result) == {"memory_id", "query", "scenes", "items", "recent", "persona", "timings_ms"}
    assert result["memory_id"] == memory_id and result["timings_ms"]["total"] > 0
    scene = result["scenes"][0]
    assert {"id", "title", "time", "score", "via", "turns"} <= set(scene)
    assert set(scene["turns"][0]) == {"id", "speaker", "text", "time"}
    assert all("horizon" not in s["via"] for s in result["scenes"])
    assert len(result["items"]) == 2
    assert {"id", "text", "kind", "scene_ids", "score", "via"} <= set(result["items"][0])
    assert result["persona"] == [{"speaker": "Alice", "summary": team_doc["personas"][0]["summary"]}]
    human = tmem("recall", memory_id, "sushi for the team")
    assert human.returncode == 0 and "via" in human.stdout
    bad = tmem("recall", memory_id, "x", "--without", "horizon,bogus")
    assert bad.returncode == 1 and "unknown component(s) bogus" in one_line_error(bad)


def test_recall_trace_shows_every_list_whole_and_the_ranks_are_positions_in_them(tmp_path, store, new_id, team_doc):
    memory_id = team_doc["memory_id"] = new_id("clitrace")
    src = tmp_path / "in.json"
    src.write_text(json.dumps(team_doc))
    assert tmem("import", str(src)).returncode == 0
    # a weak match (pointers to the associative list's scenes) and a strong one (scenes, items, lane),
    # packed and unpacked (a weak match's associative lane is then a fusion of lists: "associative")
    weak = [_check_trace(memory_id, query, budget)
            for query in ("Where could we take the team for dinner?", "When did Bob adopt his greyhound Biscuit?")
            for budget in ("600", None)]
    assert weak == [True, True, False, False]
    refused = tmem("recall", memory_id, "team dinner", "--trace")
    assert refused.returncode != 0 and "--trace needs --json" in refused.stderr


def _check_trace(memory_id: str, query: str, budget: str | None) -> bool:
    """`tmem recall --json --trace [--budget-tokens B]`: every list whole, positions from 1, and
    every rank of the result a position in the list it names. Returns whether the query was a
    weak match."""
    plain = json.loads(tmem("recall", memory_id, query, "--json").stdout)
    out = tmem("recall", memory_id, query, "--json", "--trace", *(["--budget-tokens", budget] if budget else []))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    trace = result["trace"]
    assert "trace" not in plain and set(result) - {"trace"} == set(plain)
    assert 0 < trace["match"] <= 1 and trace["weak"] == (trace["match"] < 0.76)   # the nearest turn's score
    lists = trace["scenes"]["lists"]
    assert {"bm25", "dense", "cue", "dialogue", "scene_trigger", "horizon", "turn"} <= set(lists)
    assert sorted(e["id"] for e in lists["dense"]) == sorted(trace["scenes"]["pool"])
    for name, ranked in lists.items():   # whole lists, best first, positions from 1
        assert [e["position"] for e in ranked] == list(range(1, len(ranked) + 1)), name
    for scene in result["scenes"]:
        if scene.get("lane") == "turns":   # ranks of its best turn in the lane's own lists
            assert any(t["scene_id"] == scene["id"] for t in trace["lane"])
            continue
        for name, rank in scene["ranks"].items():
            assert {e["id"]: e["position"] for e in lists[name]}[scene["id"]] == rank, (scene["id"], name)
        assert set(scene["via"]) <= set(trace["scenes"]["via"][scene["id"]]) | {"joint"}
    if trace["weak"]:   # the fused list it ranked by is listed, and named in the ranks
        fused = "pointers" if budget else "associative"
        assert fused in lists and any(fused in scene["ranks"] for scene in result["scenes"])
    item_lists = trace["items"]["lists"]
    assert result["items"] or trace["weak"]   # a weak match's budget goes to pointers first
    assert all(item["ranks"] for item in result["items"])
    for item in result["items"]:
        for name, rank in item["ranks"].items():
            assert {e["id"]: e["position"] for e in item_lists[name]}[item["id"]] == rank, (item["id"], name)
    return trace["weak"]
