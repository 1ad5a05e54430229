"""Hostile but fair input through the real `tmem` process: every case is one line naming the
problem and where it is, exit status 1, no traceback, and the database unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.integration.conftest import node_count

TMEM = [sys.executable, "-m", "tmem_graph.cli"]
# an LLM endpoint nothing listens on: a case that got past validation would fail there instead
NO_LLM = {"TMEM_LLM_BASE_URL": "http://127.0.0.1:9/v1", "TMEM_LLM_MODEL": "none", "TMEM_LLM_CACHE": "off"}


def tmem(*args, env=None):
    return subprocess.run(TMEM + list(args), capture_output=True, env={**os.environ, **NO_LLM, **(env or {})},
                          timeout=300)


def one_line_error(result) -> str:
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 1, err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("warning:")]
    assert len(lines) == 1, err
    return lines[0]


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


# (name, how the document is changed: a function of the team-dinner document returning JSON text,
#  the start of the message)
DOCUMENTS = [
    ("json nested past the parser", lambda d: json.dumps(d)[:-1] + ', "x": ' + deep(200_000) + "}",
     "JSON nested too deeply to read"),
    ("nesting past the limit", lambda d: json.dumps({**d, "x": json.loads(deep(40))}), "x[0]"),
    ("lone surrogate in a text", lambda d: json.dumps(d).replace('"text": "', '"text": "\\ud800', 1),
     "turns[0].text: not valid Unicode text"),
    ("lone surrogate in a speaker", lambda d: json.dumps(d).replace('"speakers": ["', '"speakers": ["\\udfff', 1),
     "speakers[0]: not valid Unicode text"),
    ("session beyond 64 bits", lambda d: _set(d, ("turns", 0, "session"), 2**70),
     "turns[0].session: 1180591620717411303424 does not fit in a 64-bit integer"),
    ("a 10,000-character id", lambda d: _set(d, ("items", 0, "id"), "i" * 10_000),
     "items[0].id: longer than 256 characters"),
    ("a 1 MB speaker", lambda d: _set(d, ("speakers",), d["speakers"] + ["S" * 1_000_000]),
     "speakers: a name is longer than 256 characters"),
]


def _set(doc: dict, path: tuple, value) -> str:
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return json.dumps(doc)


@pytest.mark.parametrize("name, change, message", DOCUMENTS, ids=[c[0] for c in DOCUMENTS])
def test_import_refuses_unstorable_documents(tmp_path, store, new_id, team_doc, name, change, message):
    memory_id = team_doc["memory_id"] = new_id("hostile")
    path = tmp_path / "doc.json"
    path.write_text(change(team_doc), encoding="utf-8")
    assert message in one_line_error(tmem("import", str(path)))
    assert node_count(store, memory_id) == 0


TURN_FILES = [
    ("json nested past the parser", deep(200_000) + "\n", "turns.jsonl: JSON nested too deeply to read"),
    ("a json line nested past the parser",
     '{"speaker": "Ana", "text": "hi"}\n' + '{"a": ' * 200_000 + "1" + "}" * 200_000 + "\n",
     "line 2: JSON nested too deeply to read"),
    ("lone surrogate in a text", '{"speaker": "Ana", "text": "hi \\ud800"}\n', 'line 1.text: not valid Unicode'),
    ("lone surrogate in a speaker", '{"speaker": "\\udc80", "text": "hi"}\n', "line 1.speaker: not valid Unicode"),
    ("session beyond 64 bits", '{"speaker": "Ana", "text": "hi", "session": 99999999999999999999}\n',
     "line 1.session: 99999999999999999999 does not fit in a 64-bit integer"),
    ("a 10,000-character id", json.dumps({"speaker": "Ana", "text": "hi", "id": "t" * 10_000}) + "\n",
     'line 1: "id" is longer than 256 characters'),
    ("a 1 MB speaker", json.dumps({"speaker": "S" * 1_000_000, "text": "hi"}) + "\n",
     'line 1: "speaker" is longer than 256 characters'),
]


@pytest.mark.parametrize("name, content, message", TURN_FILES, ids=[c[0] for c in TURN_FILES])
def test_ingest_refuses_unstorable_turns_before_any_llm_call(tmp_path, store, new_id, name, content, message):
    memory_id = new_id("hostile-ingest")
    path = tmp_path / "turns.jsonl"
    path.write_text(content, encoding="utf-8")
    assert message in one_line_error(tmem("ingest", str(path), "--memory", memory_id))
    assert node_count(store, memory_id) == 0


@pytest.mark.parametrize("command", ["import", "ingest"])
def test_a_fifo_or_a_directory_is_refused_at_once(tmp_path, store, command):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    extra = ["--memory", "m"] if command == "ingest" else []
    assert f"{fifo}: not a regular file" in one_line_error(tmem(command, str(fifo), *extra))  # does not block
    refused = tmem(command, str(tmp_path), *extra)  # click's own usage error
    assert refused.returncode == 2 and b"is a directory" in refused.stderr and b"Traceback" not in refused.stderr


@pytest.fixture(scope="module")
def memory_id(store, encoder):
    from tests.conftest import load_fixture
    from tmem_graph import api

    doc = load_fixture()
    doc["memory_id"] = "hostile-recall"
    api.import_memory(doc, store=store, encoder=encoder, replace=True)
    return doc["memory_id"]


@pytest.mark.parametrize("args, message", [
    ([b"sushi \xff for the team"], "the query is not valid Unicode text"),
    (["sushi", "--speaker", b"Pri\xedya"], "the speaker is not valid Unicode text"),
    (["sushi", "--r-triggers", "1000000000000"], "r_trigger_items 1000000000000: must be an integer from 0 to 10000"),
    (["sushi", "--k-scenes", "99999"], "k_scenes 99999: must be an integer from 0 to 10000"),
    (["sushi", "--tau", "7"], "tau 7.0: a cosine gate must lie in [-1, 1]"),
    (["x" * 40_000], "the query is longer than the limit of 32768 bytes"),
    (["sushi", "--until", "9999-12-31"], "until '9999-12-31': out of range"),
    (["sushi", "--since", "2023-01-01", "--until", "9999-12-31T23:59:59.999999"], "until '9999-12-31T23:59:59.999999'"),
], ids=["query bytes", "speaker bytes", "huge R", "huge kS", "tau", "long query", "last day", "last moment"])
def test_recall_refuses_what_it_cannot_use(memory_id, args, message):
    assert message in one_line_error(tmem("recall", memory_id, *args))
