"""Every `.cypher` file is used by the code, every name the code uses exists, and each query
compiles against the real database (EXPLAIN)."""

import re
from pathlib import Path

import pytest

from tmem_graph.queries import cypher_root, names, query

PACKAGE = Path(__file__).parents[2] / "tmem_graph"
NAME = re.compile(r"""["']((?:store|retrieve|explore)/[a-z0-9_]+)["']""")


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
    unused = query_files() - used - set(names("schema"))
    assert unused == set(), "query files that no code uses"
    assert 'names("schema")' in (PACKAGE / "store.py").read_text(), "schema migrations are not applied"


def test_every_query_has_a_header_comment():
    for name in sorted(query_files()):
        assert query(name).lstrip().startswith("//"), name


@pytest.mark.parametrize("name", sorted(query_files() - query_files("schema")))
def test_query_compiles(store, name):
    with store.session() as s:
        plan = s.run("EXPLAIN " + query(name)).consume().plan
    assert plan is not None


def test_schema_migrations_are_idempotent(store, encoder):
    before = store.vector_dimensions()
    store.apply_schema(encoder.dim)
    assert store.vector_dimensions() == before
    assert set(before) >= {"topic_embedding", "scene_embedding", "scene_dialogue_embedding",
                           "item_embedding", "trigger_embedding"}
    assert set(before.values()) == {encoder.dim}
