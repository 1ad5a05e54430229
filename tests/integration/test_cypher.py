"""Every `.cypher` file is used by the code, every name the code uses exists, and each query
compiles against the real database (EXPLAIN)."""

import re
from pathlib import Path

import pytest

from tmem_graph import api
from tmem_graph.store.queries import access_mode, cypher_root, names, query

PACKAGE = Path(__file__).parents[2] / "tmem_graph"
NAME = re.compile(r"""["']((?:store|retrieve|explore|lease|repair|live|objects|edits)/[a-z0-9_]+)["']""")


def referenced_names() -> set[str]:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        found |= set(NAME.findall(path.read_text(encoding="utf-8")))
    return found


def query_files(folder: str | None = None) -> set[str]:
    root = cypher_root()
    return {str(p.relative_to(root).with_suffix("")) for p in root.rglob("*.cypher")
            if folder is None or p.parent.name == folder}


def test_every_file_is_used_and_every_name_exists():
    used = referenced_names()
    assert used, "no query names found in the package source"
    assert used - query_files() == set(), "names used in code without a .cypher file"
    unused = query_files() - used - set(names("schema")) - query_files("explore")
    assert unused == set(), "query files that no code uses"
    assert 'names("schema")' in (PACKAGE / "store" / "graph.py").read_text(), "schema migrations are not applied"


def test_every_query_has_a_header_comment():
    for name in sorted(query_files()):
        assert query(name).lstrip().startswith("//"), name


@pytest.mark.parametrize("name", sorted(query_files() - query_files("schema") - query_files("explore")))
def test_query_compiles(store, name):
    with store.session(access_mode(name)) as s:
        plan = s.run("EXPLAIN " + query(name)).consume().plan
    assert plan is not None


def test_schema_migrations_are_idempotent(store, encoder):
    before = store.vector_dimensions()
    store.apply_schema(encoder.dim)
    assert store.vector_dimensions() == before
    assert set(before) >= {"topic_embedding", "scene_embedding", "scene_dialogue_embedding",
                           "item_embedding", "item_view_embedding", "scene_trigger_view_embedding",
                           "horizon_view_embedding"}
    assert "trigger_embedding" not in before
    assert set(before.values()) == {encoder.dim}


def vector_indexes(store) -> set[str]:
    return {r["name"] for r in store.run("store/vector_indexes")}


def test_a_database_written_before_the_family_indexes_is_migrated(store, encoder, new_id, team_doc):
    """Views written when one index held every family (no ItemView, Horizon views labelled
    SceneView, the indexes trigger_embedding and scene_view_embedding) get their family's label,
    the old indexes go, and a recall reads the same evidence."""
    memory_id = team_doc["memory_id"] = new_id("families")
    api.import_memory(team_doc, store=store, encoder=encoder)
    memory = api.Memory(memory_id, store=store, encoder=encoder)
    before = memory.recall("sushi for the team").to_json()
    labels = ("MATCH (v:Trigger {memory_id: $m}) RETURN v.family AS family, v:ItemView AS item, "
              "v:SceneView AS scene, v:HorizonView AS horizon, count(*) AS n ORDER BY family, item, scene, horizon")
    with store.session("WRITE") as s:
        now = s.run(labels, m=memory.pid).data()
        assert {r["family"] for r in now} == {"item", "scene", "horizon"}
        assert all([r["item"], r["scene"], r["horizon"]] == [r["family"] == f for f in ("item", "scene", "horizon")]
                   for r in now), now
        s.run("MATCH (v:Trigger {memory_id: $m}) WHERE v.family = 'horizon' REMOVE v:HorizonView SET v:SceneView",
              m=memory.pid).consume()
        s.run("MATCH (v:ItemView {memory_id: $m}) REMOVE v:ItemView", m=memory.pid).consume()
        for old, label in (("trigger_embedding", "Trigger"), ("scene_view_embedding", "SceneView")):
            s.run(f"CREATE VECTOR INDEX {old} IF NOT EXISTS FOR (n:{label}) ON n.embedding "
                  "WITH [n.memory_id, n.family] OPTIONS {indexConfig: {`vector.dimensions`: $d}}",
                  d=encoder.dim).consume()
    assert {"trigger_embedding", "scene_view_embedding"} <= vector_indexes(store)
    store.apply_schema(encoder.dim)
    assert {"trigger_embedding", "scene_view_embedding"} & vector_indexes(store) == set()
    with store.session("READ") as s:
        assert s.run(labels, m=memory.pid).data() == now
    after = memory.recall("sushi for the team").to_json()
    for recall in (before, after):
        recall.pop("timings_ms", None)
    assert after == before


EXPLORE_PARAMS = {"scene_id": "s1", "item_id": "i1", "scene_ids": ["s1", "s3"], "item_ids": ["i1", "i5"]}


@pytest.mark.parametrize("name", sorted(query_files("explore")))
def test_explore_queries_compile_and_show_the_test_memory(store, encoder, new_id, team_doc, name):
    """The Neo4j Browser queries of cypher/explore/ (docs/explore.md) run on a real memory."""
    from tmem_graph import api

    team_doc["memory_id"] = new_id("explore")
    api.import_memory(team_doc, store=store, encoder=encoder)
    api.import_memory(team_doc, store=store, encoder=encoder, replace=True)   # its objects: a staged version's id
    assert store.memory(team_doc["memory_id"])["pid"] != team_doc["memory_id"]
    params = {"memory_id": team_doc["memory_id"], **EXPLORE_PARAMS}   # the name, as docs/explore.md says
    with store.session(access_mode(name)) as s:
        assert s.run("EXPLAIN " + query(name), params).consume().plan is not None
        rows = s.run(query(name), params).data()
    assert rows, f"{name} returned nothing for the test memory"
    for line in query(name).splitlines():
        if line.startswith("// :param "):
            assert line.split()[2] in params, f"{name}: documented parameter without a value in the test"


def test_every_session_states_its_access_mode_and_recall_only_reads(store, encoder, team_doc, new_id, monkeypatch):
    """A cluster routes a READ session to any member and a WRITE one to the leader: every
    session the package opens must say which it is, and a recall must not need the leader."""
    opened: list[tuple[str | None, str]] = []
    original = store._driver.session

    def recording(*args, **kwargs):
        opened.append((kwargs.get("default_access_mode"), phase))
        assert kwargs.get("bookmark_manager") is store.bookmarks   # causal chaining across sessions
        return original(*args, **kwargs)

    monkeypatch.setattr(store._driver, "session", recording)
    phase = "import"
    doc = {**team_doc, "memory_id": new_id("modes")}
    memory, _ = api.import_memory(doc, store=store, encoder=encoder)
    phase = "add"
    before = set(store.bookmarks.get_bookmarks())
    memory.add([{"speaker": "Alice", "text": "One more thing about the dinner."}])
    assert set(store.bookmarks.get_bookmarks()) - before   # the add's commit is what the next session waits for
    phase = "recall"
    memory.recall("Where should the team have dinner?")
    memory.recall("Where should the team have dinner?", settings=store.settings.retrieval.__class__(budget_tokens=800))
    phase = "export"
    memory.export()
    assert opened and all(mode in ("READ", "WRITE") for mode, _ in opened), opened
    assert {mode for mode, p in opened if p == "recall"} == {"READ"}
    assert {mode for mode, p in opened if p == "export"} == {"READ"}
    assert "WRITE" in {mode for mode, p in opened if p in ("import", "add")}



def test_a_query_that_neo4j_rolled_back_as_a_deadlock_runs_again(store, monkeypatch):
    from neo4j.exceptions import TransientError

    from tmem_graph.errors import TmemError
    from tmem_graph.store import graph

    real, calls = graph.Store._run_once, []

    def deadlocked_first(self, name, params):
        calls.append(name)
        if len(calls) == 1:   # what the server answers the loser of a deadlock
            raise TransientError("ForsetiClient can't acquire EXCLUSIVE NODE: deadlock wait cycle")
        return real(self, name, params)

    monkeypatch.setattr(graph.Store, "_run_once", deadlocked_first)
    assert store.run("store/ping") and calls == ["store/ping", "store/ping"]

    def always(self, name, params):
        calls.append(name)
        raise TransientError("deadlock wait cycle")

    monkeypatch.setattr(graph.Store, "_run_once", always)
    calls.clear()
    with pytest.raises(TmemError):   # given up after TRANSIENT_TRIES, as a one-line error
        store.run("store/ping")
    assert len(calls) == graph.TRANSIENT_TRIES
