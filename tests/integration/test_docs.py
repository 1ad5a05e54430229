"""The docs cannot drift: every ```bash and ```python block of README.md and docs/*.md runs
against the suite's server, in document order, one bash session per file (so a variable or a
file one block makes is there for the next, as in a reader's terminal).

A comment on the line before a block marks it:
- `<!-- not run: REASON -->`: skipped (a long build, a container engine, another server);
- `<!-- needs: llm -->`: run with the filler LLM (tests/fixtures/auto_llm.py) as the configured
  endpoint; `TMEM_LLM_BASE_URL=`, `TMEM_LLM_API_KEY=` and `TMEM_LLM_MODEL=` written in the block
  are pointed at it. Unmarked blocks run with no LLM configured, so a block that needs one
  and is not marked fails;
- `run: background` (alone or after `needs: llm;`): started in the background, stopped at the
  end of the file; a `tmem serve` block is waited for until `/health` answers.

`tmem` is this checkout's (`python -m tmem_graph.cli`), the ports 8765 and 8766 are replaced by
free ones (a `tmem serve` block without `--port` gets the one standing for 8765), and each file runs in a fresh folder holding `examples/` and `fixtures/` (links),
with `../shared` reaching the shared data. Memories a file made are dropped after it.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.auto_llm import serve as serve_auto_llm
from tmem_graph import api
from tmem_graph.evaluate.data import data_dir

ROOT = Path(__file__).parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"(?:<!--\s*(?P<marker>[^>]*?)\s*-->\s*\n)?```(?P<lang>bash|python)\n(?P<body>.*?)\n```", re.S)
LLM_VAR = re.compile(r"\b(TMEM_LLM_BASE_URL|TMEM_LLM_API_KEY|TMEM_LLM_MODEL)=\S+")
PORTS = ("8765", "8766")


def blocks(path: Path) -> list[dict]:
    """The runnable blocks of a doc: language, body, marks, and the line each starts on."""
    text = path.read_text(encoding="utf-8")
    found = []
    for m in FENCE.finditer(text):
        marks = {}
        marker = m.group("marker") or ""
        if marker.startswith("not run:"):   # the reason may hold any punctuation
            marks["not run"], marker = marker.partition(":")[2].strip(), ""
        for part in marker.split(";"):
            key, _, value = part.partition(":")
            if key.strip():
                marks[key.strip()] = value.strip()
        found.append({"lang": m.group("lang"), "body": m.group("body"), "marks": marks,
                      "line": text.count("\n", 0, m.start("body"))})
    return found


def test_every_marker_is_known_and_every_skip_says_why():
    for path in DOCS:
        for block in blocks(path):
            marks = block["marks"]
            assert set(marks) <= {"not run", "needs", "run"}, (path.name, block["line"], marks)
            if "not run" in marks:
                assert len(marks["not run"]) > 10, f"{path.name}:{block['line']}: say why it is not run"
            assert marks.get("needs", "llm") == "llm" and marks.get("run", "background") == "background"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def script_for(path: Path, llm_url: str, ports: dict[str, str]) -> str:
    """One bash script running the doc's blocks in order; each block announces itself."""
    llm_env = f"export TMEM_LLM_BASE_URL={llm_url} TMEM_LLM_API_KEY=docs-test TMEM_LLM_MODEL=auto"
    lines = ["set -eo pipefail", "pids=()", "trap 'for p in \"${pids[@]}\"; do kill $p 2>/dev/null || true; done; wait' EXIT"]
    for n, block in enumerate(blocks(path)):
        marks = block["marks"]
        if "not run" in marks:
            continue
        body = block["body"]
        for old, new in ports.items():
            body = body.replace(old, new)
        if marks.get("needs") == "llm":
            body = LLM_VAR.sub(lambda m: {"TMEM_LLM_BASE_URL": f"TMEM_LLM_BASE_URL={llm_url}",
                                          "TMEM_LLM_API_KEY": "TMEM_LLM_API_KEY=docs-test",
                                          "TMEM_LLM_MODEL": "TMEM_LLM_MODEL=auto"}[m.group(1)], body)
            lines.append(llm_env)
        else:
            lines.append("unset TMEM_LLM_BASE_URL TMEM_LLM_API_KEY TMEM_LLM_MODEL")
        lines.append(f"echo '##### {path.name} line {block['line']}' >&2")
        if block["lang"] == "python":
            body = f"python - <<'DOCS_PYTHON_EOF'\n{body}\nDOCS_PYTHON_EOF"
        if marks.get("run") == "background":
            if "tmem serve" in body and "--port" not in body:   # the default port stands for 8765
                body = body.replace("tmem serve", f"tmem serve --port {ports['8765']}", 1)
            lines.append(f"( {body}\n) > bg-{n}.log 2>&1 &\npids+=($!)")
            port = next((p for p in ports.values() if "tmem serve" in body and p in body), None)
            if "tmem serve" in body and port is None:
                port = ports["8765"]
            if port:
                lines.append(f"for i in $(seq 120); do curl -sf localhost:{port}/health >/dev/null && break; sleep 0.5; done; "
                             f"curl -sf localhost:{port}/health >/dev/null || {{ cat bg-{n}.log >&2; exit 1; }}")
            else:
                lines.append("sleep 2")
        else:
            lines.append(body)
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def auto_llm():
    server = serve_auto_llm(0.0, lambda text: max(1, len(text) // 4))
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


@pytest.fixture(scope="module")
def bin_dir(tmp_path_factory) -> Path:
    """`tmem` and `python` of this checkout first on PATH."""
    where = tmp_path_factory.mktemp("bin")
    (where / "tmem").write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m tmem_graph.cli \"$@\"\n")
    (where / "python").write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} \"$@\"\n")
    for f in ("tmem", "python"):
        (where / f).chmod(0o755)
    return where


def runnable(path: Path) -> bool:
    return any("not run" not in b["marks"] for b in blocks(path))


def test_the_docs_hold_runnable_blocks():
    """The files of the guide that show commands (the others are prose and reference tables)."""
    assert {p.name for p in DOCS if runnable(p)} >= {"README.md", "live.md", "service.md", "evaluation.md"}


@pytest.mark.parametrize("path", [p for p in DOCS if runnable(p)], ids=lambda p: p.name)
def test_the_docs_blocks_run(path, store, auto_llm, bin_dir, tmp_path, settings):
    before = {m["id"] for m in api.list_memories(store=store)}
    named = [m for m in before if re.search(rf"(?<![\w-]){re.escape(m)}(?![\w-])", path.read_text())]
    for memory_id in named:    # a memory a doc makes, left by an earlier run: the doc starts afresh
        store.drop(memory_id)
        before.discard(memory_id)
    work = tmp_path / "work"
    work.mkdir()
    for name in ("examples", "fixtures"):
        (work / name).symlink_to(ROOT / name)
    shared = data_dir()   # the benchmark data wherever this clone finds it (`../shared/data` in the docs)
    (tmp_path / "shared").symlink_to(shared.parent)
    ports = {p: str(_free_port()) for p in PORTS}
    script = work / "docs.sh"
    script.write_text(script_for(path, auto_llm, ports))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TMEM_LLM_")}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env['PATH']}", PYTHONPATH=str(ROOT), TMEM_LLM_CACHE="off",
               NEO4J_URI=settings.uri, TMEM_DATA_DIR=str(shared))
    try:
        done = subprocess.run(["bash", str(script)], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    finally:
        for memory in api.list_memories(store=store):
            if memory["id"] not in before:
                store.drop(memory["id"])
    assert done.returncode == 0, f"{path.name}: a block failed\n{done.stderr[-4000:]}\n--- stdout\n{done.stdout[-2000:]}"
