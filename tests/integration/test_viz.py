"""`tmem viz` pages, loaded in a real headless Chromium: they load without errors, fetch
nothing from the network, hold the expected nodes and edges, and highlight exactly a recall."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

from tmem_graph import api

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PROBE = ('<script>window.addEventListener("load", () => document.body.setAttribute("data-counts", '
         'JSON.stringify([nodes.length, edges.length, '
         'nodes.get().filter(n => n.borderWidth == 4).map(n => n.id).sort()])));</script></body>')


def tmem(*args):
    return subprocess.run([sys.executable, "-m", "tmem_graph.cli", *args], capture_output=True, text=True,
                          timeout=300, env=os.environ)


def render(path):
    """Load the page in headless Chromium; return (nodes, edges, highlighted ids, console errors)."""
    assert CHROMIUM, "chromium is not installed (scripts/test.sh installs it)"
    probe = path.with_suffix(".probe.html")
    probe.write_text(path.read_text().replace("</body>", PROBE, 1))
    with tempfile.TemporaryDirectory() as profile:
        out = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                              "--no-first-run", "--disable-background-networking", "--disable-component-update",
                              "--disable-sync", f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
                              "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()],
                             capture_output=True, text=True, timeout=120)
    found = re.search(r'data-counts="([^"]*)"', out.stdout)
    assert found, f"the page did not finish loading: {out.stderr[-2000:]}"
    nodes, edges, marked = json.loads(found.group(1).replace("&quot;", '"'))
    errors = [l for l in out.stderr.splitlines() if "CONSOLE" in l and ("Uncaught" in l or "Error" in l)]
    return nodes, edges, set(marked), errors


@pytest.fixture
def memory(store, encoder, new_id, team_doc):
    team_doc["memory_id"] = new_id("viz")
    return api.import_memory(team_doc, store=store, encoder=encoder)[0]


def test_whole_memory_page_loads_offline_with_every_node(memory, tmp_path):
    page = tmp_path / "m.html"
    result = tmem("viz", memory.id, "-o", str(page))
    assert result.returncode == 0, result.stderr
    html = page.read_text()
    assert not re.search(r'(?:src|href)="https?://', html), "the page must not fetch anything"
    nodes, edges, marked, errors = render(page)
    # 3 topics + 4 scenes + 6 items + 31 trigger views; 5 HAS_SCENE + 3 NEXT + 7 HAS_ITEM + 31 TRIGGERS
    assert (nodes, edges, marked, errors) == (44, 46, set(), [])


def test_query_highlights_exactly_the_recall_and_its_triggers(memory, tmp_path):
    query = "Can you suggest a good sushi place for our group outing?"
    page = tmp_path / "q.html"
    assert tmem("viz", memory.id, "-o", str(page), "--query", query).returncode == 0
    recall = memory.recall(query)
    doc = memory.export()
    expected = {f"scene:{s.id}" for s in recall.scenes} | {f"item:{i.id}" for i in recall.items}
    for s in recall.scenes:
        scene = next(x for x in doc["scenes"] if x["id"] == s.id)
        if "scene_trigger" in s.via:
            expected |= {f"trigger:{s.id}#scene:{a}" for a in scene["triggers"].get("scene", {})}
        if "horizon" in s.via:
            expected |= {f"trigger:{s.id}#h{n}" for n in range(len(scene["triggers"].get("horizon", [])))}
    channels = {"entity": "concept", "bridge": "bridge", "joint": "joint"}
    for i in recall.items:
        item = next(x for x in doc["items"] if x["id"] == i.id)
        for via in set(i.via) & set(channels):
            for n, t in enumerate(item.get("triggers", [])):
                if channels[via] == "joint" or t.get(channels[via]):
                    expected.add(f"trigger:{i.id}#t{n}:{channels[via]}")
    assert any(e.startswith("trigger:i1#t0:") for e in expected)  # the bridge that reached the allergy
    nodes, edges, marked, errors = render(page)
    assert errors == [] and marked == expected


def test_topic_and_scene_views_and_the_node_cap(memory, tmp_path):
    page = tmp_path / "t.html"
    assert tmem("viz", memory.id, "-o", str(page), "--topic", "t3").returncode == 0
    nodes, edges, _, errors = render(page)
    assert (nodes, edges, errors) == (1 + 1 + 1 + 1 + 3, 1 + 1 + 1 + 3, [])  # t3, s4, i6, s4's horizon, i6's views
    capped = tmem("viz", memory.id, "-o", str(page), "--max-nodes", "20")
    assert capped.returncode == 0 and "31 trigger views left out" in capped.stderr
    refused = tmem("viz", memory.id, "-o", str(page), "--max-nodes", "10")
    assert refused.returncode == 1 and "--max-nodes 10" in refused.stderr
    missing = tmem("viz", memory.id, "-o", str(page), "--scene", "nope")
    assert missing.returncode == 1 and "no scene 'nope'" in missing.stderr
